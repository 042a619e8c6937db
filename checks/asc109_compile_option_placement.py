from __future__ import annotations

import libcst as cst

from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

# The BiShengIR options triton-ascend 3.2.0's `triton.Config` takes as keywords (`**bishengir_options`).
ASCEND_OPTIONS = frozenset({
    "multibuffer", "sync_solver", "unit_flag", "limit_auto_multi_buffer_only_for_local_buffer",
    "limit_auto_multi_buffer_of_local_buffer", "set_workspace_multibuffer", "enable_hivm_auto_cv_balance",
    "tile_mix_vector_loop", "tile_mix_cube_loop",
})
# `triton.Config`'s own parameters in 3.2.0 (every other keyword lands in `**bishengir_options`).
_CONFIG_PARAMS = frozenset({
    "kwargs", "num_warps", "num_stages", "num_ctas", "num_buffers_warp_spec", "num_consumer_groups",
    "reg_dec_producer", "reg_inc_consumer", "maxnreg", "pre_hook", "force_simt_template", "enable_linearize",
})
# Keywords that are not compile options at all: ASC101 reports num_warps / num_stages.
_NEWER_VERSIONS = "triton-ascend 3.3 and later"


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in str(text).split("."):
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


class CompileOptionPlacement(Rule):
    """Flags Ascend compile options given to `triton.Config` where the installed triton-ascend drops or rejects
    them."""

    decides = """
    - An Ascend option (`multibuffer`, `unit_flag`, `limit_auto_multi_buffer_*`, `tile_mix_*`,
      `enable_hivm_auto_cv_balance`, `set_workspace_multibuffer`, `sync_solver`) as a keyword of
      `triton.Config(...)`, written out or in a `**dict`: 3.2.x takes it, 3.3 and later reject it. Not reported
      when the `triton-ascend-version` option is below 3.3.
    - Any other keyword that is not a parameter of 3.2.0's `triton.Config` (`enable_ubuf_saving=True`): 3.2.0
      drops it without a word, 3.3 and later reject it.
    - A dict of options passed as `triton.Config`'s second positional argument: that is `num_warps`, and the
      options are dropped in every version.

    One finding per `triton.Config` call, on its first misplaced keyword, naming them all. The placement every
    version honours is the config's dict itself: `triton.Config({"BLOCK": 64,
    "multibuffer": True})`.
    """

    code = "ASC109"
    name = "compile-option-placement"
    message = "compile option {option} {problem}; move it into the config's dict"
    severity = Severity.WARNING
    fix_safety = FixSafety.NONE
    default = False
    opt_in_reason = (
        "Whether a `triton.Config` keyword breaks depends on the triton-ascend version a project builds with, "
        "which the code does not show: of six configs reported on real Ascend code, two were in a project "
        "that had moved to triton-ascend 3.6 (real breakage) and four in projects pinned to 3.2.x, where the "
        "keywords work. Select it (or set `triton-ascend-version`) when the code must build with 3.3 or "
        "later."
    )
    options = {"triton-ascend-version": "3.3"}
    options_notes = """
        `triton-ascend-version` (default `"3.3"`): the triton-ascend the code must build with. Below `3.3`,
        Ascend options given as `triton.Config` keywords are honoured and not reported; the other two cases are
        reported whatever the version.
    """
    why = """
        Where an autotune config carries an Ascend compile option decides whether the compiler sees it, and the
        answer changed between triton-ascend versions. In 3.2.0 (checked by launching through its autotuner with a
        stand-in compiler) an option reaches the compile options from the config's dict
        (`triton.Config({"BLOCK": 64, "multibuffer": False})`), from a `triton.Config` keyword
        (`triton.Config({...}, multibuffer=False)`) and from a launch keyword alike; a `triton.Config` keyword it
        does not know lands in `**bishengir_options` and is silently dropped. From 3.3 on, `triton.Config` has no
        `**bishengir_options` any more (`__init__(self, kwargs, num_warps=4, num_stages=2, ...)` in the 3.3.x,
        3.5.x and main sources), so every such keyword raises `TypeError: __init__() got an unexpected keyword
        argument`, while the dict still reaches the compiler through `all_kwargs()`. A real Ascend GEMM went
        through both failures: its `triton.Config({...}, **opts)` was first rewritten to
        `triton.Config({...}, opts)` (which passes the dict as `num_warps` and drops the option), then, for
        triton-ascend 3.6, to `triton.Config({**opts, ...})`.
    """
    fix_notes = """
        Move the option into the config's dict: `triton.Config({"BLOCK_M": 128, "multibuffer": True})`, or
        `triton.Config({**opts, "BLOCK_M": 128})` for a shared dict of options. There is no automatic fix because
        a `**` expansion may hold more than options.
    """
    INVALID = [
        Invalid(
            """
            import triton

            configs = [
                triton.Config({"BLOCK_M": 128, "BLOCK_N": 256}, multibuffer=True),
                triton.Config({"BLOCK_M": 64, "BLOCK_N": 128}, unit_flag=True, enable_ubuf_saving=True),
            ]
            """,
            count=2,
            doc=True,
        ),
        Invalid(
            """
            import triton

            def get_configs():
                _vmix = {"tile_mix_vector_loop": 2}
                return [
                    triton.Config({"BLOCK_M": 128, "BLOCK_K": 512}, **_vmix),
                    triton.Config({"BLOCK_M": 64, "BLOCK_K": 256}, _vmix),
                ]
            """,
            count=2,
        ),
        Invalid(
            """
            from triton import Config, autotune, jit

            @autotune(configs=[Config({"BLOCK": b}, **dict(limit_auto_multi_buffer_only_for_local_buffer=False))
                               for b in (64, 128)], key=["n"])
            @jit
            def kernel(x_ptr, n, BLOCK):
                pass
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton

            configs = [
                triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "multibuffer": True}),
                triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "unit_flag": True}),
            ]
            """,
            doc=True,
        ),
        Valid(
            """
            import triton

            def get_configs():
                _vmix = {"tile_mix_vector_loop": 2}
                return [
                    triton.Config({**_vmix, "BLOCK_M": 128, "BLOCK_K": 512}),
                    triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=2, pre_hook=None),
                    triton.Config({"BLOCK_M": 32}, 4),
                ]

            def run(kernel, x, n):
                kernel[(n,)](x, n, BLOCK=64, multibuffer=False)
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.facts.qualname(node.func) != "triton.Config":
            return
        newer = _version(self.settings["triton-ascend-version"]) >= (3, 3)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) >= 2 and self._options_in(node, positional[1].value):
            names = ", ".join(f"`{k}`" for k in sorted(self._options_in(node, positional[1].value)))
            self.report(positional[1], self.message.format(
                option=names, problem="is passed as `num_warps` (the second positional argument) and dropped"))
        offending: list[tuple[cst.Arg, str]] = []
        for arg in node.args:
            if arg.keyword is not None:
                offending.extend((arg, key) for key in [arg.keyword.value] if self._misplaced(key, newer))
            elif arg.star == "**":
                keys = sorted(k for k in self._options_in(node, arg.value, any_key=True) if self._misplaced(k, newer))
                offending.extend((arg, key) for key in keys)
        if offending:  # one finding per config, on its first misplaced keyword
            keys = [key for _, key in offending]
            unknown = [key for key in keys if key not in ASCEND_OPTIONS]
            if unknown:
                problem = f"{'is a' if len(keys) == 1 else 'are'} `triton.Config` keyword{'s' if len(keys) > 1 else ''}"
                problem += f" ({', '.join(f'`{k}`' for k in unknown)} dropped by 3.2.0), which {_NEWER_VERSIONS} reject"
            else:
                problem = (f"{'is a' if len(keys) == 1 else 'are'} `triton.Config` keyword{'s' if len(keys) > 1 else ''},"
                           f" which {_NEWER_VERSIONS} reject (3.2.x takes {'it' if len(keys) == 1 else 'them'})")
            names = ", ".join(f"`{k}`" for k in keys)
            self.report(offending[0][0], self.message.format(option=names, problem=problem))

    def _misplaced(self, key: str, newer: bool) -> bool:
        if key in _CONFIG_PARAMS:
            return False
        return newer or key not in ASCEND_OPTIONS

    def _options_in(self, call: cst.Call, value: cst.BaseExpression, any_key: bool = False) -> set[str]:
        """The keys of the dict ``value`` stands for (a literal, ``dict(...)`` or a name bound to one in the
        enclosing function or module); only Ascend options unless ``any_key``."""
        keys: set[str] = set()
        for candidate in self._dict_values(call, value):
            if type(candidate) is cst.Dict:
                for element in candidate.elements:
                    key = getattr(element, "key", None)
                    if type(key) is cst.SimpleString:
                        keys.add(key.evaluated_value)
            elif type(candidate) is cst.Call and type(candidate.func) is cst.Name and candidate.func.value == "dict":
                keys.update(a.keyword.value for a in candidate.args if a.keyword is not None)
        return keys if any_key else keys & ASCEND_OPTIONS

    def _dict_values(self, call: cst.Call, value: cst.BaseExpression) -> list[cst.BaseExpression]:
        if type(value) is not cst.Name:
            return [value]
        scope = next((a for a in self.context.index.ancestors(call) if type(a) is cst.FunctionDef), None)
        nodes = self.context.index.subtree(scope) if scope is not None else self.context.index.nodes
        found = []
        for node in nodes:
            if type(node) is cst.Assign and any(
                type(t.target) is cst.Name and t.target.value == value.value for t in node.targets
            ):
                found.append(node.value)
        return found
