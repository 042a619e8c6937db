"""Interface stand-ins for Triton-distributed's device API, so triton-ascend's own frontend can compile a kernel
that calls it (no NPU, no CANN, and no importable ``triton_dist`` exist here).

They are ``triton.jit`` functions with the documented signatures (``dl.notify(ptr, rank, signal, sig_op,
comm_scope)``, ``libshmem_device.putmem(dest, source, bytes, pe)``...). Calls that synchronise or move data are
``noinline``, so each stays a ``tt.call`` in the TTIR, in program order: a test can read where the fence sits
relative to the stores and the notify. What this proves is what the frontend checks (names resolve to device
functions, argument types and constexpr-ness, the Triton code around the calls); Triton-distributed's own
lowering of these calls is not exercised. The host package (``import shmem as ash``) is stood in by a plain
module that offers only host functions, as the real one does: a kernel calling ``ash.fence()`` fails to compile.

``install()`` is for the offline-compile worker (TRITON_INTERPRET unset); runs in the interpreter take the device
API from ``ascendlint.emulate`` and only the host package and the re-exports from here.
"""

import sys
import types

import triton
import triton.language as tl

# -- triton_dist.language ------------------------------------------------------------------------------------------


@triton.jit
def rank():
    return tl.program_id(0) * 0


@triton.jit
def num_ranks():
    return tl.program_id(0) * 0 + 2


@triton.jit
def symm_at(ptr, rank):
    return ptr


@triton.jit(noinline=True)
def wait(barrierPtrs, numBarriers, scope: tl.constexpr = "gpu", semantic: tl.constexpr = "acquire", waitValue=1):
    return tl.program_id(0) * 0


@triton.jit(noinline=True)
def notify(ptr, rank, signal=1, sig_op: tl.constexpr = "set", comm_scope: tl.constexpr = "gpu"):
    pass


@triton.jit
def consume_token(value, token):
    return value


# -- triton_dist.language.extra.libshmem_device --------------------------------------------------------------------


@triton.jit
def my_pe():
    return tl.program_id(0) * 0


@triton.jit
def n_pes():
    return tl.program_id(0) * 0 + 2


@triton.jit
def remote_ptr(ptr, pe):
    return ptr


@triton.jit(noinline=True)
def barrier_all():
    pass


@triton.jit(noinline=True)
def barrier_all_vec():
    pass


@triton.jit(noinline=True)
def fence():
    pass


@triton.jit(noinline=True)
def quiet():
    pass


@triton.jit(noinline=True)
def putmem(dest, source, bytes, pe):
    pass


@triton.jit(noinline=True)
def getmem(dest, source, bytes, pe):
    pass


@triton.jit(noinline=True)
def putmem_nbi(dest, source, bytes, pe, qp_id=0):
    pass


@triton.jit(noinline=True)
def getmem_nbi(dest, source, bytes, pe, qp_id=0):
    pass


@triton.jit(noinline=True)
def _putmem_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    pass


@triton.jit
def putmem_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    _putmem_signal(dest, source, _runtime(nbytes), sig_addr, _runtime(signal), _runtime(sig_op), _runtime(pe))


@triton.jit
def _runtime(value):
    """``value`` as a runtime scalar: the `noinline` stand-ins take no compile-time constants, the real externs
    take the library's integer constants (`ACLSHMEM_SIGNAL_SET`, `ACLSHMEM_CMP_EQ`...)."""
    return tl.program_id(0) * 0 + value


@triton.jit(noinline=True)
def _signal_op(sig_addr, signal, sig_op, pe):
    pass


@triton.jit
def signal_op(sig_addr, signal, sig_op, pe):
    _signal_op(sig_addr, _runtime(signal), _runtime(sig_op), _runtime(pe))


@triton.jit(noinline=True)
def _signal_wait_until(sig_addr, cmp, cmp_val):
    pass


@triton.jit
def signal_wait_until(sig_addr, cmp, cmp_val):
    _signal_wait_until(sig_addr, _runtime(cmp), _runtime(cmp_val))


@triton.jit(noinline=True)
def int_p(dest, value, pe):
    pass


_LANGUAGE = ("rank", "num_ranks", "symm_at", "wait", "notify", "consume_token")
_LIBSHMEM_DEVICE = (
    "my_pe", "n_pes", "remote_ptr", "barrier_all", "barrier_all_vec", "fence", "quiet", "putmem", "getmem",
    "putmem_nbi", "getmem_nbi", "putmem_signal", "signal_op", "signal_wait_until", "int_p",
)
_HOST_SHMEM = ("aclshmem_init", "aclshmem_create_tensor", "aclshmem_finalize")
# The device library's integer constants (values as in Triton-distributed's `libshmem_device.py`, pr179).
_LIBSHMEM_CONSTANTS = {
    "ACLSHMEM_TEAM_INVALID": -1, "ACLSHMEM_TEAM_WORLD": 0,
    "ACLSHMEM_CMP_EQ": 0, "ACLSHMEM_CMP_NE": 1, "ACLSHMEM_CMP_GT": 2, "ACLSHMEM_CMP_GE": 3, "ACLSHMEM_CMP_LT": 4,
    "ACLSHMEM_CMP_LE": 5, "ACLSHMEM_SIGNAL_SET": 0, "ACLSHMEM_SIGNAL_ADD": 1,
}


def _module(name: str, attributes: dict, package: bool = False) -> types.ModuleType:
    module = types.ModuleType(name, "interface stand-in for the offline frontend compile")
    module.__dict__.update(attributes)
    if package:
        module.__path__ = []
    return module


def _host_function(name):
    def host_only(*args, **kwargs):
        raise RuntimeError(f"shmem.{name} is a host function (stand-in)")

    host_only.__name__ = name
    return host_only


def install_host_package() -> None:
    """Only the host-side ``shmem`` package (for runs whose device API comes from elsewhere)."""
    sys.modules["shmem"] = _module("shmem", {n: _host_function(n) for n in _HOST_SHMEM})


def install() -> None:
    """Put the stand-ins into ``sys.modules`` under the real module names."""
    here = globals()
    device = _module("triton_dist.language.extra.libshmem_device",
                     {**{n: here[n] for n in _LIBSHMEM_DEVICE}, **_LIBSHMEM_CONSTANTS})
    extra = _module("triton_dist.language.extra", {"libshmem_device": device}, package=True)
    language = _module("triton_dist.language", {**{n: here[n] for n in _LANGUAGE}, "extra": extra}, package=True)
    root = _module("triton_dist", {"language": language, "jit": triton.jit}, package=True)
    for module in (root, language, extra, device):
        sys.modules[module.__name__] = module
    install_host_package()


def install_reexports() -> None:
    """Projects that re-export Triton from a helper module (``from vllm.triton_utils import tl, triton``)."""
    utils = _module("vllm.triton_utils", {"triton": triton, "tl": tl})
    sys.modules.setdefault("vllm", _module("vllm", {"triton_utils": utils}, package=True))
    sys.modules.setdefault("vllm.triton_utils", utils)
