"""What the warp kernels of several families share: typing by operand dtype, event tests, terms,
one body for mv and mm."""
