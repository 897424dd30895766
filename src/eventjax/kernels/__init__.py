"""The standard event-driven kernels, one folder per family."""
