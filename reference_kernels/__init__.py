"""Triton kernels for Ascend NPUs written the way ascendlint's rules ask, verified on CPU.

Each single-device module holds the kernel, a host launcher ``run(..., n_cores=None)`` that sizes a
1-D core grid, and a torch ``reference`` with the same arguments. Modules import triton and torch;
this package file imports neither, so listing the package stays cheap.
"""
