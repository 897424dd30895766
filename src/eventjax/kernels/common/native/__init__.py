"""The C++ and CUDA kernels' shared header (``event_kernels.h``) and the builder of their sources."""
