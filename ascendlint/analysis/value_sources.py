"""Where the values of a kernel start: its parameters, the launches of the module, and the jit helpers it calls.

A parameter's value reads its annotation, its name (a row stride, a head dim, a token count) and what the host code
passes at every launch (``host_arguments``: literal constexpr values, host tensor magnitudes, which program id axes
count tokens); a helper call returns what the helper's own analysis says it returns. A mixin of
``values.KernelAnalysis``, read by the value pass (``value_pass``).
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from . import magnitudes as mag
from .module_facts import Kernel, ModuleFacts
from .syntax import builtin_name, integer_or_none
from .value_lattice import INT64, LOOP_CALLS, NO_DIVISORS, T, Traits, Value


# What a helper's caller may rely on about its returned value: width, kind, and where it comes from.
_RETURNED = (T.WIDE | T.NARROW | T.POINTER | T.BLOCK | T.FLOAT | T.INT | T.INDEX | T.PROGRAM | T.LOADED | T.TOKENS
             | T.TILE)


def _per_token_name(name: str, bits: int) -> bool:
    """A name that says it is a per-row extent: a head dim, hidden size or vocabulary, a row stride, a token
    count (a row of ``T`` elements)."""
    return bits in (mag.FEATURE_BITS, mag.VOCAB_BITS, mag.TOKEN_BITS) or "stride" in name.lower()


def _mentions_program_id(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    if facts.is_call_to(expr, "tl.program_id"):
        return True
    return type(expr) is cst.Name and expr.value.lower() in ("pid", "core_id", "program_id", "worker_id")


class ValueSources:
    """The values a kernel starts from (a part of ``KernelAnalysis``)."""

    def _parameter(self, name: str) -> Value:
        kernel = self.kernel
        if kernel.is_constexpr_param(name) and name not in self.facts.helper_tensor_params(kernel):
            # a helper's parameter is what its callers pass: a tensor argument stays a tensor, annotated or not
            default = kernel.defaults.get(name)
            if type(default) is cst.Float:
                return (T.FLOAT, 0, NO_DIVISORS)
            known = self.constexpr_values.get(name)
            size = mag.of_int(max(known)) if known else mag.constexpr_bits(name)
            hosted = 0
            if not known:  # ROW_STRIDE=logits.stride(0): a constexpr factor leaves the product int32
                host = self._host_argument(name)
                if host is not None and host[2]:
                    size = host[0]
                    hosted = T.HOSTED if host[3] >= mag.FEATURE_BITS else 0
                elif not self._module_launches and _per_token_name(name, mag.name_bits(name)):
                    hosted = T.HOSTED  # no host code: a head dim or hidden size by its name
            return (T.INT | T.NARROW | hosted, size, NO_DIVISORS)
        if name in self.pointer_params:
            return (T.DYNAMIC | T.TENSOR | T.POINTER, 0, NO_DIVISORS)
        if name in self.constexpr_helper_params:
            return (T.INT | T.NARROW, mag.name_bits(name), NO_DIVISORS)
        annotation = kernel.annotations.get(name)
        qualified = self.facts.qualname(annotation) if annotation is not None else None
        bits = T.DYNAMIC | T.TENSOR | T.EXTENT | T.INT
        size = mag.name_bits(name)
        tokens = mag.counts_tokens(name)
        host = self._host_argument(name)
        if host is not None and (host[0] < size or size == mag.EXTENT_BITS or host[2]):
            # the launch says more: `x.stride(-1)` is 1, `n_rows` rows, `logits.stride(0)` a vocabulary
            size, tokens = host[0], tokens or host[1]
        if host is not None and host[2] and host[3] >= mag.FEATURE_BITS or (
                not self._module_launches and _per_token_name(name, size)):
            # no host code: a per-token size by its name (K, V, D, hidden, a row stride) decides
            bits |= T.HOSTED
        if tokens:
            bits |= T.TOKENS
        elif mag.counts_sequences(name):
            bits |= T.SEQUENCE  # ``B * T`` is the token count of the launch
        if qualified in INT64:
            bits |= T.WIDE
        elif type(annotation) is cst.Name and annotation.value == "float" or isinstance(
            kernel.defaults.get(name), cst.Float
        ):
            bits = (bits | T.FLOAT | T.NARROW) & ~T.INT
        else:
            bits |= T.NARROW
        return (bits, size, NO_DIVISORS)

    @cached_property
    def _module_launches(self) -> bool:
        """The module launches some kernel: its host code can be read. A module of kernels only (launched from
        elsewhere) is judged by the magnitude model alone."""
        return bool(self.facts.launches)

    def _host_argument(self, name: str) -> tuple[int, bool, bool, int] | None:
        from .host_arguments import host_argument_bits

        return host_argument_bits(self.facts, self.kernel, name)

    @cached_property
    def constexpr_values(self) -> dict[str, list[int]]:
        """Integer values the module's launches and autotune configs give each constexpr parameter."""
        from .host_arguments import constexpr_values  # launch reasoning needs the module's host code

        return constexpr_values(self.facts, self.kernel)

    @cached_property
    def constexpr_helper_params(self) -> set[str]:
        """Parameters of a jit helper that every call in this module passes a constexpr (a literal, a constexpr
        parameter of the caller, an annotated constexpr local, a ``static_range`` variable, or the default)."""
        return self.facts.helper_constexpr_params(self.kernel)

    @cached_property
    def _program_bits(self) -> dict[int, Value]:
        from .host_arguments import program_id_magnitudes

        return program_id_magnitudes(self.facts, self.kernel, self.is_core_grid_kernel)

    @cached_property
    def _token_axes(self) -> set[int]:
        from .host_arguments import token_axes

        return token_axes(self.facts, self.kernel)

    def _program_id(self, positional: list) -> tuple[int, frozenset]:
        axis = integer_or_none(positional[0]) if positional else 0
        found = self._program_bits.get(axis if axis is not None else -1)
        if found is None:
            bits = mag.CORE_PROGRAM_BITS if self.is_core_grid_kernel else mag.GRID_AXIS_BITS
            return bits, NO_DIVISORS
        return found

    @cached_property
    def is_core_grid_kernel(self) -> bool:
        """Programs stride over the work (``for task in range(pid, n, step)``): one program per core."""
        for loop in self.loops:
            call = loop.iter
            if not (type(call) is cst.Call and (self.facts.qualname(call.func) or builtin_name(call.func)) in
                    LOOP_CALLS):
                continue
            args = [a.value for a in call.args if a.keyword is None]
            if len(args) == 3 and _mentions_program_id(self.facts, args[0]) and integer_or_none(args[2]) != 1:
                return True
        return False

    def _imported_helper(self, func: cst.BaseExpression):
        """The summary of a jit helper imported from another linted module (``from .utils import pid64``)."""
        if type(func) is cst.Name and func.value not in self.assignments:
            return self.facts.imported_helpers.get(func.value)
        return None

    def _helper_returns(self, helper: Kernel) -> Value | None:
        analysis = type(self).of(helper, self.facts, self.index)  # the KernelAnalysis of the helper
        return analysis.returned

    @property
    def returned(self) -> Value | None:
        """What this kernel (used as a jit helper) returns: a tensor; None while it is being computed."""
        if self._running:
            return None
        if self._values is None:
            self._run()
        found = self._returned
        if found is None:
            return (T.DYNAMIC | T.TENSOR, 0, NO_DIVISORS)
        return ((found[0] & _RETURNED) | T.DYNAMIC | T.TENSOR, found[1], NO_DIVISORS)

    @property
    def returned_traits(self) -> Traits | None:
        found = self.returned
        return found[0] if found is not None else None
