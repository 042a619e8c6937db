"""The ``ascendlint`` command (click). It only parses options and drives the library."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import click

from . import __version__, fixes, output, parallel, report_file, selection, temp_files
from .cache import ResultCache
from .config import ConfigError, Settings, find_config, load_settings
from .diagnostics import Diagnostic
from .discovery import discover
from .rule_index import rule_index
from .runner import FileResult, Linter, Options

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


class _FormatChoice(click.Choice):
    def __init__(self) -> None:
        super().__init__(output.names(), case_sensitive=False)


class _Group(click.Group):
    """Any unexpected failure exits 2 with a one-line error, never 1 (which means "findings")."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):  # click reports these itself
            raise
        except OSError as exc:  # e.g. --output-file in a folder that does not exist
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        except Exception as exc:  # noqa: BLE001 - last resort: report, do not trace back
            click.echo(f"error: ascendlint failed unexpectedly ({type(exc).__name__}: {exc}); "
                       "please report this with the file that caused it", err=True)
            sys.exit(EXIT_ERROR)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ascendlint")
def main() -> None:
    """Static analysis for Triton kernels on Huawei Ascend NPUs."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), replacing the config's.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--format", "output_format", type=_FormatChoice(), default="full", show_default=True)
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here.")
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also offer and apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if any).")
@click.option("--show-fixes", is_flag=True, help="List what --fix fixed.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
              help="Worker processes; 0 uses all cores when there is enough to lint, 1 lints serially.")
@click.option("--stdin-filename", help="The file name to report for source read from `-`.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Use this config file instead of searching for one.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with findings; report nothing else.")
def check(paths, select, extend_select, ignore, output_format, output_file, fix, unsafe_fixes, diff, show_fixes,
          statistics, exit_zero, no_cache, jobs, stdin_filename, config_path, quiet, add_noqa) -> None:
    """Lint PATHS (files or folders; `-` reads standard input). Default: the current folder."""
    paths = list(paths) or [Path(".")]
    if add_noqa and (fix or diff or paths == [Path("-")]):
        click.echo("error: --add-noqa cannot be combined with --fix, --diff or standard input", err=True)
        sys.exit(EXIT_ERROR)
    try:
        rules = rule_index(use_stored=not no_cache)
        start = Path(stdin_filename) if stdin_filename and paths == [Path("-")] else paths[0]
        settings = load_settings(config_path or find_config(start if start.exists() else Path.cwd(), _warn), rules)
        enabled = _enabled_rules(rules, settings, select, extend_select, ignore)
    except (ConfigError, selection.SelectionError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)

    cache = None if no_cache or paths == [Path("-")] else ResultCache(settings.root)
    linter = Linter(enabled, settings, cache=cache)
    options = Options(fix=fix and not diff, unsafe_fixes=unsafe_fixes, diff=diff)
    errors: list[str] = []
    if paths == [Path("-")]:
        _refuse_output_file(output_file, [])
        results = [_lint_stdin(linter, options, stdin_filename)]
    else:
        found = discover(paths, settings)
        _refuse_output_file(output_file, found.files)
        explicit = {str(p) for p in paths}
        for path, reason in found.errors:
            message = f"{path}: {reason}"
            if str(path) in explicit:
                errors.append(message)
            else:
                click.echo(f"warning: skipped {output.shown(message)}", err=True)
        errors.extend(f"{path}: {reason}" for path, reason in found.unreadable)
        with temp_files.removed_on_signals():
            results = parallel.lint_paths(linter, found.files, options, jobs)
        if cache is not None:
            cache.save()
    errors.extend(f"{r.path}: {r.error}" for r in results if r.error)
    for message in errors:
        click.echo(f"error: Failed to lint {output.shown(message)}", err=True)
    if add_noqa:
        sys.exit(EXIT_ERROR if errors else _add_noqa(results))

    remaining = [d for r in results for d in r.diagnostics]
    fixed = [d for r in results for d in r.fixed]
    for r in results:
        for d in r.rejected_fixes:
            reason = d.extra.get(fixes.REFUSED_NOTE, fixes.DOES_NOT_PARSE)
            click.echo(f"warning: fix for {d.code} at {output.shown(d.filename)}:{d.location.row}:"
                       f"{d.location.column} was discarded: {reason}", err=True)
    if diff:
        code = _print_diff(results, fixed)
        sys.exit(EXIT_ERROR if errors else code)

    report = output.RunReport(
        diagnostics=remaining,
        sources={r.path: r.text for r in results if r.text is not None},
        fixed_count=len(fixed),
        fix_mode=options.fix,
        unsafe_fixes=unsafe_fixes,
        show_fixes=show_fixes,
        fixed=fixed,
    )
    if statistics:
        text = _statistics(remaining)
    else:
        text = output.get(output_format.lower())(report)
        if quiet and output_format.lower() in output.TEXT_FORMATS:
            heads = _finding_heads(remaining)
            text = "".join(line + "\n" for line in text.splitlines() if _is_finding_line(line, heads))
    _emit(text, output_file, to_stderr=paths == [Path("-")] and options.fix)
    if errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if remaining and not exit_zero else EXIT_CLEAN)


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _add_noqa(results: list[FileResult]) -> int:
    from .add_noqa import add_noqa_to_file

    added = 0
    for result in results:
        if not result.diagnostics:
            continue
        path = Path(result.path)
        text = result.text if result.text is not None else path.read_text(encoding="utf-8")
        outcome = add_noqa_to_file(path, text, result.diagnostics)
        added += outcome.added
        for row, reason in outcome.skipped:
            click.echo(f"warning: {result.path}:{row}: no `# noqa` added: {reason}", err=True)
    click.echo(f"Added {added} noqa code{'s' if added != 1 else ''}.", err=True)
    return EXIT_CLEAN


def _enabled_rules(rules, settings: Settings, select, extend_select, ignore):
    chosen_select = selection.validate(_split(select), rules, "--select") if select else \
        selection.validate(settings.select, rules, _origin(settings, "select"))
    chosen_extend = selection.validate(settings.extend_select, rules, _origin(settings, "extend-select")) + \
        selection.validate(_split(extend_select), rules, "--extend-select")
    chosen_ignore = selection.validate(settings.ignore, rules, _origin(settings, "ignore")) + \
        selection.validate(_split(ignore), rules, "--ignore")
    for glob, codes in settings.per_file_ignores.items():
        selection.validate(codes, rules, _origin(settings, f"per-file-ignores.{glob}"))
    return selection.resolve(rules, chosen_select, chosen_extend, chosen_ignore)


def _origin(settings: Settings, key: str) -> str:
    return f"`{key}` of {settings.path}" if settings.path else f"default `{key}`"


def _lint_stdin(linter: Linter, options: Options, stdin_filename: str | None) -> FileResult:
    data = sys.stdin.buffer.read()
    filename = stdin_filename or "-"
    path = Path(stdin_filename) if stdin_filename else None
    result, new_data = linter.process_bytes(data, filename, path, Options(fix=False, unsafe_fixes=options.unsafe_fixes,
                                                                           diff=options.diff or options.fix))
    if options.fix:
        sys.stdout.buffer.write(new_data if new_data is not None else data)
        sys.stdout.flush()
    return result


def _print_diff(results: list[FileResult], fixed: list[Diagnostic]) -> int:
    changed = [r for r in results if r.diff]
    for r in changed:  # the file names' own bytes, so that `patch` finds the files
        click.echo(r.diff.encode("utf-8", "surrogateescape"), nl=False)
    if fixed:
        click.echo(f"Would fix {len(fixed)} finding{'s' if len(fixed) != 1 else ''}.", err=True)
    else:
        click.echo("No fixes available.", err=True)
    return EXIT_FINDINGS if changed else EXIT_CLEAN


def _statistics(diagnostics: list[Diagnostic]) -> str:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None)
    lines = []
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>5}\t{code}\t{marker} {name}")
    return "\n".join(lines) + ("\n" if lines else "")


def _finding_heads(diagnostics: list[Diagnostic]) -> set[str]:
    return {f"{output.shown(d.filename)}:{d.location.row}:{d.location.column}: {d.code}" for d in diagnostics}


_LINE_HEAD = re.compile(r"^(.*?:\d+:\d+: [A-Z]+[0-9]+)\b")


def _is_finding_line(line: str, heads: set[str]) -> bool:
    """A set lookup per line (a scan of every finding per line is quadratic on big reports)."""
    match = _LINE_HEAD.match(line)
    return match is not None and match.group(1) in heads


def _refuse_output_file(output_file: Path | None, linted: list[Path]) -> None:
    problem = report_file.problem_with(output_file, linted) if output_file is not None else None
    if problem is not None:
        click.echo(f"error: {output.shown(problem)}", err=True)
        sys.exit(EXIT_ERROR)


def _emit(text: str, output_file: Path | None, to_stderr: bool = False) -> None:
    if output_file is not None:
        report_file.write(output_file, text)
    elif to_stderr:
        click.echo(text, nl=False, err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule(code: str | None, show_all: bool) -> None:
    """Print the documentation of rule CODE (code or name), or list all rules."""
    from .docs import render_index, render_rule
    from .registry import all_rules, rule_by_code_or_name

    rules = all_rules()
    if show_all or code is None:
        click.echo(render_index(rules), nl=False)
        return
    found = rule_by_code_or_name(code)
    if found is None:
        click.echo(f"error: Unknown rule `{code}`", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(render_rule(found), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
