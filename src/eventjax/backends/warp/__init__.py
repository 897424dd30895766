"""The ``warp`` backend (cpu, gpu): its bridge, and the quieting of warp's C library."""
