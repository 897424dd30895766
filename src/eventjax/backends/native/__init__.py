"""The ``cpp`` and ``cuda`` backends: C++ and CUDA kernels built with the system's toolchains, through XLA FFI."""
