"""What the pallas kernels of several families share: the CSR and FCN row kernels."""
