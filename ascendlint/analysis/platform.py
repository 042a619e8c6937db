"""Which hardware a module is written for: CUDA-only modules are not Ascend code (RULES.md, "What counts as kernel
code").

A module is CUDA-only when it shows GPU-only evidence and no NPU evidence anywhere: not in its code, not in the
folders on its path. Real Ascend repositories vendor such modules (an upstream model package kept for
reference, a GPU benchmark), and Ascend rules reported nothing useful there. The decision is made once per module,
by the engine, before any rule runs; the CLI asks the same function to say which files were treated so and why.

GPU-only evidence: a CUDA device (``device="cuda"``, ``"cuda:4"``, ``torch.device("cuda")``, ``.cuda()``,
``torch.cuda.*``), ``x.is_cuda``, inline assembly in PTX (or AMD GCN) text, ``triton.language.extra.cuda`` (its
``libdevice`` included), and the AMD counterparts ``triton.language.extra.hip``, ``torch.version.hip``,
``is_hip``, and a GPU backend's folder on the path (``nvidia``, ``cuda``, ``amd``, ``hip``, ``rocm``: Triton-
distributed keeps its GPU kernels in ``kernels/nvidia/`` and ``kernels/amd/``). NPU evidence: ``torch_npu``, ``torch.npu``, ``.npu()``, ``"npu"`` devices, ``is_npu``,
``triton.language.extra.cann`` / ``.ascend``, any imported module with ``ascend`` or ``npu`` in its name
(``triton_dist.language.extra.ascend``, ``vllm_ascend``), vector/cube/AI core counts (``get_vectorcore_num``,
``"num_aicore"``), and a folder on the path (relative to the project root) named with ``ascend`` or ``npu``
(``_ascend``, ``triton_ascend``, ``npu``). A dispatcher that shows both is Ascend code.

Only code counts: comments and docstrings do not (a docstring saying "never selected on the NPU" is no NPU
evidence). The module is read with Python's own parser (``ast``), which is fast enough to run for every file the
CLI lists; text that cannot mention any GPU-only evidence is answered without parsing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..text.lazy_regex import lazy

# Every GPU-only form spells one of these; a text without them is never CUDA-only (most Ascend code).
_GPU_WORDS = lazy(r"cuda|hip|inline_asm")
_GPU_DEVICE = lazy(r"^cuda(:\d+)?$")
_NPU_DEVICE = lazy(r"^npu(:\d+)?$")
_CORE_COUNT = lazy(r"(vector|cube|ai)_?core", re.IGNORECASE)
_NPU_NAME_TOKENS = {"ascend", "npu"}
_GPU_FOLDER_TOKENS = {"nvidia", "cuda", "amd", "hip", "rocm"}  # a GPU backend's folder (`kernels/nvidia/`)
# Dotted PTX mnemonics (``cvt.rn.f16.f32``, ``mov.b32``, ``ld.global.v4.b32``) and AMD GCN ones (``v_add_f32``).
_PTX = lazy(r"\b[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)+\b")
_GCN = lazy(r"\b[vs]_[a-z][a-z0-9_]*\b")
_GPU_MODULES = (
    ("triton.language.extra.cuda", "`triton.language.extra.cuda`"),
    ("triton.language.extra.hip", "`triton.language.extra.hip`"),
    ("triton_dist.language.extra.cuda", "`triton_dist.language.extra.cuda`"),
    ("triton_dist.language.extra.hip", "`triton_dist.language.extra.hip`"),
    ("torch.version.hip", "`torch.version.hip`"),
    ("torch.cuda", "`torch.cuda`"),
)
_NPU_MODULES = (
    ("torch_npu", "`torch_npu`"),
    ("torch.npu", "`torch.npu`"),
    ("triton.language.extra.cann", "`triton.language.extra.cann`"),
    ("triton.language.extra.ascend", "`triton.language.extra.ascend`"),
)


@dataclass(frozen=True)
class Evidence:
    what: str
    line: int | None = None  # None: the path

    def __str__(self) -> str:
        return self.what if self.line is None else f"{self.what} (line {self.line})"


@dataclass(frozen=True)
class Platform:
    """What a module shows of the hardware it runs on."""

    gpu: tuple[Evidence, ...] = ()
    npu: tuple[Evidence, ...] = ()

    @property
    def cuda_only(self) -> bool:
        return bool(self.gpu) and not self.npu

    def reason(self) -> str:
        """Why the module is CUDA-only, in a line: the first pieces of evidence, and the absence of NPU ones."""
        shown = ", ".join(str(e) for e in self.gpu[:3])
        more = f" and {len(self.gpu) - 3} more" if len(self.gpu) > 3 else ""
        return f"CUDA-only module: {shown}{more}; no NPU evidence"


NOT_CUDA_ONLY = Platform()


def through_importers(importers) -> Platform:
    """The verdict for a module with no evidence of its own that only CUDA-only modules import."""
    shown = ", ".join(f"`{name}`" for name in list(importers)[:3])
    more = f" and {len(importers) - 3} more" if len(importers) > 3 else ""
    return Platform(gpu=(Evidence(f"imported only by CUDA-only modules ({shown}{more})"),))


def classify(text: str, path: str | None = None, complete: bool = False) -> Platform:
    """The evidence in ``text`` (a module's source) and in the folders of ``path`` (relative to the project root).

    A text that cannot be CUDA-only is answered without looking for NPU evidence, unless ``complete``."""
    folder = _folder(path, _NPU_NAME_TOKENS)
    if folder is not None:  # decided by the path: nothing in the text can make the module CUDA-only
        return Platform(npu=(folder,))
    gpu_folder = _folder(path, _GPU_FOLDER_TOKENS)
    if gpu_folder is None and not complete and _GPU_WORDS.search(text) is None:
        return NOT_CUDA_ONLY
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return NOT_CUDA_ONLY  # the engine reports what it can of a module it cannot parse
    collector = _Collector()
    if gpu_folder is not None:
        collector.gpu.append(gpu_folder)
    collector.run(tree)
    by_line = lambda e: e.line or 0  # noqa: E731
    return Platform(gpu=tuple(sorted(collector.gpu, key=by_line)), npu=tuple(sorted(collector.npu, key=by_line)))


def _folder(path: str | None, tokens: set[str]) -> Evidence | None:
    """The first folder of ``path`` whose name has one of ``tokens`` as a word (``vllm_ascend``, ``nvidia``)."""
    if not path:
        return None
    for folder in PurePosixPath(path.replace("\\", "/")).parts[:-1]:
        if tokens & set(re.split(r"[_\-.\s]+", folder.lower())):
            return Evidence(f"the folder `{folder}` on the path")
    return None


def _module_is_npu(module: str) -> bool:
    return any(_NPU_NAME_TOKENS & set(part.lower().split("_")) for part in module.split("."))


@dataclass
class _Collector:
    gpu: list[Evidence] = field(default_factory=list)
    npu: list[Evidence] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    strings: dict[str, list[str]] = field(default_factory=dict)  # name -> string constants assigned to it
    _seen: set = field(default_factory=set)

    def add(self, gpu: bool, what: str, node: ast.AST | None) -> None:
        line = getattr(node, "lineno", None)
        key = (gpu, what)
        if key in self._seen:  # one piece of evidence of each kind is enough to say why
            return
        self._seen.add(key)
        (self.gpu if gpu else self.npu).append(Evidence(what, line))

    def run(self, tree: ast.Module) -> None:
        docstrings = set()
        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
                first = node.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    docstrings.add(id(first.value))
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                    isinstance(node.value.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.strings.setdefault(target.id, []).append(node.value.value)
        for node in nodes:
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                self._string(node)
            elif isinstance(node, ast.JoinedStr):
                self._fstring(node)
            elif isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Name):
                self._name(node.id, node)
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._name(node.name, node)
            elif isinstance(node, ast.keyword) and node.arg:
                self._name(node.arg, node.value)

    # -- the forms ----------------------------------------------------------------------------------------------
    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._module(alias.name, node)
                local = alias.asname or alias.name.split(".")[0]
                self.aliases[local] = alias.name if alias.asname else local
            return
        for alias in node.names:
            self._name(alias.name, node)  # `from .utils import get_vectorcore_num, is_hip`
        if node.level or node.module is None:
            base = node.module or ""
            if _module_is_npu(base):
                self.add(False, f"an import from `{'.' * node.level}{base}`", node)
            return
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            self._module(full, node)
            self.aliases[alias.asname or alias.name] = full

    def _module(self, module: str, node: ast.AST) -> None:
        for prefix, label in _GPU_MODULES:
            if module == prefix or module.startswith(prefix + "."):
                self.add(True, label, node)
                return
        for prefix, label in _NPU_MODULES:
            if module == prefix or module.startswith(prefix + "."):
                self.add(False, label, node)
                return
        if _module_is_npu(module):
            self.add(False, f"`import {module}`", node)

    def _qualified(self, node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id)
        if head is None:
            return None
        return ".".join([head, *reversed(parts)])

    def _attribute(self, node: ast.Attribute) -> None:
        qualified = self._qualified(node)
        if qualified is not None:
            self._module(qualified, node)
        if node.attr == "is_cuda":
            self.add(True, "`.is_cuda`", node)
        elif node.attr == "is_hip":
            self.add(True, "`is_hip`", node)
        elif node.attr == "is_npu":
            self.add(False, "`is_npu`", node)
        elif _CORE_COUNT.search(node.attr):
            self.add(False, f"the core count `{node.attr}`", node)

    def _name(self, name: str, node: ast.AST) -> None:
        if name == "is_hip":
            self.add(True, "`is_hip`", node)
        elif name in ("is_npu", "torch_npu"):
            self.add(False, f"`{name}`", node)
        elif _CORE_COUNT.search(name):
            self.add(False, f"the core count `{name}`", node)

    def _string(self, node: ast.Constant) -> None:
        value = node.value.strip()
        if _GPU_DEVICE.match(value):
            self.add(True, f"the device `\"{value}\"`", node)
        elif _NPU_DEVICE.match(value):
            self.add(False, f"the device `\"{value}\"`", node)
        elif len(value) < 40 and _CORE_COUNT.search(value):
            self.add(False, f"the core count `\"{value}\"`", node)

    def _fstring(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            if first.value.startswith("cuda:"):
                self.add(True, "a `cuda:` device", node)
            elif first.value.startswith("npu:"):
                self.add(False, "an `npu:` device", node)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if attr == "cuda" and isinstance(func, ast.Attribute) and self._qualified(func) != "torch.cuda":
            self.add(True, "`.cuda()`", node)
        elif attr == "npu" and isinstance(func, ast.Attribute):
            self.add(False, "`.npu()`", node)
        elif attr == "is_cuda":
            self.add(True, "`is_cuda()`", node)
        elif attr == "inline_asm_elementwise" and self._gpu_assembly(node):
            self.add(True, "inline GPU assembly (`inline_asm_elementwise`)", node)

    def _gpu_assembly(self, call: ast.Call) -> bool:
        asm = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "asm"), None)
        texts: list[str] = []
        if isinstance(asm, ast.Constant) and isinstance(asm.value, str):
            texts = [asm.value]
        elif isinstance(asm, ast.Name):
            texts = self.strings.get(asm.id, [])
        elif isinstance(asm, ast.JoinedStr):
            texts = [v.value for v in asm.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return any(_PTX.search(text) or _GCN.search(text) for text in texts)
