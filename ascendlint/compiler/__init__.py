"""The Ascend compiler, offline: compile verdicts for the kernels the linter reads.

triton-ascend's frontend lowers a kernel to Linalg and BiShengIR (``bishengir-compile`` from the ``ascendnpu-ir``
package) runs the HIVM pipeline on it, memory planning included, up to the one step that needs CANN. Its verdict
(reached the last step, an on-chip buffer overflow with exact numbers, or a compile error) is ground truth for what
the linter otherwise estimates. Everything here is optional: without the ``compiler`` extra, ``toolchain.missing()``
says why and the rules that need a verdict stay silent.

- ``toolchain``: where the binaries are and which versions are installed (nothing imported to find out);
- ``kernel_text``: the kernel's source rebuilt from the linted text (the jit function and its jit helpers only);
- ``jobs``: one compile request (source, signature, constants, launch options, target) and its content key;
- ``configs``: the requests a module's launches and autotune configs state;
- ``worker``: the child process that lowers and compiles (the only place triton is imported);
- ``verdict``: what the compiler said, parsed;
- ``service``: cache lookups and the worker processes, in parallel, with time and memory limits.
"""

from .toolchain import available, missing

__all__ = ["available", "missing"]
