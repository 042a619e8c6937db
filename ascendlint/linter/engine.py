"""Lint one text: parse once, build the shared facts once, dispatch every enabled rule in a single walk.

The engine is a library; the CLI drives it. A rule that raises becomes an ASC002 finding naming the rule, and the
other rules still run.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import warnings
from typing import Iterable, Sequence

import libcst as cst

from .. import fixes
from ..fixes import noqa
from .collector import paused_for_one_file
from ..analysis.context import FileContext
from ..diagnostics import Diagnostic, Edit, Fix, Location, Severity
from ..analysis import platform
from ..analysis.module_facts import ModuleFacts
from ..analysis.project import ModuleInProject, summarise
from ..text.locator import Locator
from ..files.prefilter import could_hold_kernel  # noqa: F401 - part of the engine's interface
from ..reports import Report
from ..rule import Rule
from ..files.source import ParseFailure, ParserLimit, parse_module
from ..analysis.walk import NodeIndex

SYNTAX_ERROR = "ASC001"
INTERNAL_ERROR = "ASC002"
UNUSED_NOQA = "ASC003"




def lint_text(
    text: str,
    filename: str,
    rules: Sequence[type[Rule]],
    options: dict[str, dict] | None = None,
    project: ModuleInProject | None = None,
    tree_path: str | None = None,
    lint_cuda_only: bool = False,
    ignore_noqa: bool = False,
    noqa_kept: Sequence[str] = (),
) -> list[Diagnostic]:
    """All findings for one decoded source text, sorted, with suppressions applied.

    With ``project``, the module is linted as part of the tree: jit helpers it imports from modules linted before
    it are known by their summaries, and (when asked) its own helpers' summaries are exported.

    A CUDA-only module (``analysis.platform``: GPU-only evidence, no NPU evidence in the text or in the folders of
    ``tree_path``, the path relative to the project root, ``filename`` when not given) gets no finding from the
    Ascend rules, only from the tool rules (ASC001-ASC003), unless ``lint_cuda_only``.

    ``ignore_noqa`` (ruff's ``--ignore-noqa``): no comment suppresses anything, so none is stale either.
    ``noqa_kept``: codes whose ``# noqa`` ASC003 leaves alone (rules another selection, the project's, enables)."""
    exempt = None
    if not ignore_noqa:
        exempt = noqa.file_exemption(text)
        if exempt == () or noqa.skips_file(text):
            return []
    with paused_for_one_file():
        where = filename if tree_path is None else tree_path
        found = _lint(text, filename, rules, options or {}, project, None if lint_cuda_only else where, where,
                      ignore_noqa, tuple(noqa_kept))
    if exempt:  # `# ascendlint: noqa: ASC101` on a line of its own: that code, nowhere in the file
        found = [d for d in found if not d.code.startswith(exempt)]
    return found


def _lint(text: str, filename: str, rules: Sequence[type[Rule]], options: dict[str, dict],
          project: ModuleInProject | None, platform_path: str | None, tree_path: str,
          ignore_noqa: bool = False, noqa_kept: tuple[str, ...] = ()) -> list[Diagnostic]:
    """``platform_path``: where the module sits, for the CUDA-only decision; None: lint it whatever it shows.
    ``tree_path``: where it sits below the project root, for the rules that read the module's role."""
    enabled = {rule.code for rule in rules}
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as exc:
        if SYNTAX_ERROR not in enabled:
            return []
        message, row, column, valid = _precise_syntax_error(text, exc)
        if valid:
            return [parser_limit_diagnostic(filename, _libcst_refuses(), row, column, rules)]
        return [syntax_error_diagnostic(filename, message, row, column, rules)]
    except ParserLimit as exc:
        return [parser_limit_diagnostic(filename, str(exc), exc.line, 1, rules)] if SYNTAX_ERROR in enabled else []
    except (RecursionError, MemoryError, ValueError) as exc:
        if SYNTAX_ERROR not in enabled:
            return []
        if isinstance(exc, ParseFailure) and _python_accepts(text):
            return [parser_limit_diagnostic(filename, _libcst_refuses(f" ({exc})"), 1, 1, rules)]
        return [syntax_error_diagnostic(filename, f"cannot be parsed: {type(exc).__name__}: {exc}", 1, 1, rules)]
    index = NodeIndex(module)
    if project is not None:
        facts = ModuleFacts(module, index, project.name, project.is_package)
        facts.imported_helpers = project.project.for_imports(facts)
        facts.imported_in_project = project.export
        facts.helpers_of_importers = project.helpers_of_importers
    else:
        facts = ModuleFacts(module, index)
    facts.filename = filename
    facts.tree_path = tree_path
    if platform_path is None:
        facts.platform = platform.NOT_CUDA_ONLY
    elif project is not None and project.cuda_only_importers:  # decided over the tree (tree_order)
        facts.platform = platform.through_importers(project.cuda_only_importers)
    else:
        facts.platform = platform.classify(text, platform_path)
    skipped = facts.platform.cuda_only  # Ascend rules report nothing in a CUDA-only module; tool rules still run
    context = FileContext(
        filename=filename,
        text=text,
        module=module,
        index=index,
        facts=facts,
        locator=Locator(module, text, index),
    )
    crashed: dict[str, BaseException] = {}
    instances = []
    for rule in rules:
        if rule.tool_rule or skipped:
            continue
        try:
            instances.append(rule(context, options.get(rule.code)))
        except Exception as exc:  # noqa: BLE001 - any rule failure is reported, never fatal
            crashed.setdefault(rule.code, exc)
    _walk(context, instances, crashed)
    for instance in instances:
        if instance.code in crashed:
            continue
        try:
            instance.finish()
        except Exception as exc:  # noqa: BLE001
            crashed.setdefault(instance.code, exc)
    diagnostics = _resolve(context, crashed)
    if INTERNAL_ERROR in enabled:
        diagnostics.extend(_internal_error(filename, code, exc, rules) for code, exc in crashed.items())
    if ignore_noqa:
        kept = diagnostics
    else:
        kept, used = _unsuppressed(diagnostics, context.locator)
        # In a CUDA-only module the Ascend rules did not run: their codes in a `# noqa` are not stale there.
        not_run = [r.code for r in rules if not r.tool_rule] if skipped else []
        kept.extend(_unused_noqa(context, rules, used, [*crashed, *not_run, *noqa_kept]))
    if project is not None and project.export:
        project.exported = _summaries(context)
    context.release()
    return sorted(kept, key=Diagnostic.sort_key)


def _summaries(context: FileContext) -> dict:
    try:
        from ..analysis.block_pointers import returned_blocks
        from ..analysis.distributed import waiting_kernels

        return summarise(context.facts, waiting_kernels(context), returned_blocks(context), context.text)
    except Exception:  # noqa: BLE001 - a module whose helpers cannot be summarised is simply unknown to importers
        return {}


def _walk(context: FileContext, instances: list[Rule], crashed: dict[str, BaseException]) -> None:
    handlers: dict[type, list] = {}
    for instance in instances:
        for node_type, attribute in _visitors_of(type(instance)):
            handlers.setdefault(node_type, []).append(getattr(instance, attribute))
    if not handlers:
        return
    get = handlers.get
    for node in context.index.nodes:
        bound = get(type(node))
        if bound is None:
            continue
        for handler in bound:
            code = handler.__self__.code
            if code in crashed:
                continue
            try:
                handler(node)
            except Exception as exc:  # noqa: BLE001
                crashed[code] = exc


@functools.lru_cache(maxsize=None)
def _visitors_of(rule: type[Rule]) -> tuple[tuple[type, str], ...]:
    """(node class, method name) of a rule's ``visit_<NodeClass>`` methods, looked up once per rule class."""
    found = []
    for attribute in dir(rule):
        if attribute.startswith("visit_"):
            node_type = getattr(cst, attribute[len("visit_") :], None)
            if node_type is not None:
                found.append((node_type, attribute))
    return tuple(found)


def _resolve(context: FileContext, crashed: dict[str, BaseException]) -> list[Diagnostic]:
    diagnostics = []
    seen = set()
    for report in context.reports:
        if report.rule.code in crashed:
            continue
        try:
            diagnostic = _diagnostic(context, report)
        except Exception as exc:  # noqa: BLE001
            crashed.setdefault(report.rule.code, exc)
            continue
        key = (diagnostic.code, diagnostic.location, diagnostic.end_location, diagnostic.message)
        if key not in seen:
            seen.add(key)
            diagnostics.append(diagnostic)
    return diagnostics


def _diagnostic(context: FileContext, report: Report) -> Diagnostic:
    locator = context.locator
    start, end = report.span if report.span is not None else locator.span(report.node)
    fix = None
    extra = {}
    if report.edits is not None:
        edits = tuple(sorted((locator.through_form_feeds(_with_original(locator, e)) for e in report.edits(locator)),
                            key=lambda e: (e.start, e.end)))
        stale = fixes.mismatched_edit(context.text, edits)
        if stale is not None:  # the positions are not those of the code the rule saw: offer no fix at all
            extra[fixes.REFUSED_NOTE] = fixes.mismatch_note(context.text, stale)
        elif edits:
            fix = Fix(report.fix_message or "Apply fix", report.applicability, edits)
    rule = report.rule
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=report.severity,
        message=report.message,
        filename=context.filename,
        location=start,
        end_location=end,
        fix=fix,
        noqa_row=_noqa_row(context, start.row),
        url=rule.url(),
        extra=extra,
    )


def _noqa_row(context: FileContext, row: int) -> int:
    """Where a ``# noqa`` for a finding on ``row`` goes: the end of its multi-line string or continuation."""
    rows = context.memo(("noqa-rows",), lambda: noqa.statement_rows(context.text))
    return rows.get(row, row)


def _with_original(locator: Locator, edit: Edit) -> Edit:
    """The edit, carrying the text the rules saw under its range (unless its builder recorded it already)."""
    if edit.original is not None:
        return edit
    return dataclasses.replace(edit, original=locator.original_text(edit.start, edit.end))


def _unsuppressed(diagnostics: Iterable[Diagnostic], locator: Locator) -> tuple[list[Diagnostic], set[tuple[int, str]]]:
    """The findings no ``# noqa`` suppresses, and the (row, listed code) pairs that suppressed one."""
    kept, used = [], set()
    for diagnostic in diagnostics:
        line = locator.line_text(diagnostic.noqa_row) if diagnostic.noqa_row else ""
        listed = noqa.suppressing_code(diagnostic.code, line)
        if listed is None:
            kept.append(diagnostic)
        else:
            used.add((diagnostic.noqa_row, listed))
    return kept, used


def _unused_noqa(context: FileContext, rules, used, crashed) -> list[Diagnostic]:
    """ASC003 runs after suppression: it needs to know which ``# noqa`` codes suppressed something."""
    rule = _rule_named(rules, UNUSED_NOQA)
    if rule is None:
        return []
    try:
        found = rule.unused_directives(context.text, context.filename, used, [r.code for r in rules], crashed)
    except Exception as exc:  # noqa: BLE001
        crash = _internal_error(context.filename, UNUSED_NOQA, exc, rules)
        return [crash] if _rule_named(rules, INTERNAL_ERROR) else []
    kept = [d for d in found if not noqa.is_suppressed(d.code, context.locator.line_text(d.noqa_row))]
    for diagnostic in kept:  # built from the text itself (comment tokens), so that is what it saw
        if diagnostic.fix is not None:
            edits = tuple(e if e.original is not None else dataclasses.replace(e, original=context.text[e.start : e.end])
                          for e in diagnostic.fix.edits)
            diagnostic.fix = dataclasses.replace(diagnostic.fix, edits=edits)
    return kept


def _precise_syntax_error(text: str, exc: cst.ParserSyntaxError) -> tuple[str, int, int, bool]:
    """CPython's parser pinpoints syntax errors better than libcst's; ask it only once a file failed to parse.

    The last item says whether CPython accepts the file: then the error is libcst's limit, not the code's.
    """
    try:
        _compile_quietly(text)
    except SyntaxError as error:
        if error.lineno:
            return error.msg, error.lineno, error.offset or 1, False
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        return exc.message, exc.raw_line, exc.raw_column + 1, True
    return exc.message, exc.raw_line, exc.raw_column + 1, False


def _compile_quietly(text: str) -> None:
    with warnings.catch_warnings():  # e.g. "invalid escape sequence": not ours to print
        warnings.simplefilter("ignore")
        compile(text, "<lint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def _python_accepts(text: str) -> bool:
    try:
        _compile_quietly(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _libcst_refuses(detail: str = "") -> str:
    return (f"libcst, the parser ascendlint uses, cannot parse this code although Python accepts it{detail}; "
            "the file was not linted")


def _rule_named(rules: Sequence[type[Rule]], code: str) -> type[Rule] | None:
    return next((r for r in rules if r.code == code), None)


def syntax_error_diagnostic(filename: str, message: str, row: int, column: int, rules,
                            kind: str = "SyntaxError") -> Diagnostic:
    rule = _rule_named(rules, SYNTAX_ERROR)
    first_line = message.strip().splitlines()[0] if message.strip() else "invalid syntax"
    return Diagnostic(
        code=SYNTAX_ERROR,
        name=rule.name if rule else "syntax-error",
        severity=Severity.ERROR,
        message=f"{kind}: {first_line}",
        filename=filename,
        location=Location(max(row, 1), max(column, 1)),
        end_location=Location(max(row, 1), max(column, 1)),
        url=rule.url() if rule else None,
    )


def parser_limit_diagnostic(filename: str, message: str, row: int, column: int, rules) -> Diagnostic:
    """ASC001 for valid Python the parser cannot take: the parser is the limit, not the code."""
    return syntax_error_diagnostic(filename, message, row, column, rules, kind="Parser limit")


def _internal_error(filename: str, code: str, exc: BaseException, rules) -> Diagnostic:
    rule = _rule_named(rules, INTERNAL_ERROR)
    import traceback  # only for a rule that crashed

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return Diagnostic(
        code=INTERNAL_ERROR,
        name=rule.name if rule else "internal-error",
        severity=Severity.ERROR,
        message=f"Rule {code} crashed on this file ({type(exc).__name__}: {exc}{where}); other rules still ran",
        filename=filename,
        location=Location(1, 1),
        end_location=Location(1, 1),
        url=rule.url() if rule else None,
        extra={"rule": code},
    )
