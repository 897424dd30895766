"""What the numba kernels of several families share: event scans and sums, the event scatter."""
