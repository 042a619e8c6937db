"""The ``ascendlint`` command (click). It only parses options and drives the library.

It is the package's ``__init__`` because ``ascendlint.cli:main`` is the console script's entry point and
``python -m ascendlint`` runs it; what only the command uses lives beside it (``watch``, ``progress``,
``ub_report``, ``report_file``)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from .. import __version__, docs_links, fixes, output
from ..linter import parallel
from . import report_file
from ..workspace import selection
from ..files import temp_files
from ..workspace.config import ConfigError, Settings, SettingsResolver
from ..diagnostics import Diagnostic, fix_applies
from ..workspace.discovery import discover, is_force_excluded
from ..linter.per_file import LinterSet
from ..catalog.rule_index import rule_index
from ..linter.runner import FileResult, Linter, Options

COMPILER_RULES = ("ASC307", "ASC308")  # the rules `--compile` selects; they need the `compiler` extra

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


EXIT_INTERRUPTED = 130


class _FormatChoice(click.Choice):
    def __init__(self) -> None:
        super().__init__(output.names(), case_sensitive=False)


class _Group(click.Group):
    """Any unexpected failure exits 2 with a one-line error, never 1 (which means "findings")."""

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, **kwargs)
        except OSError as exc:  # click could not print a usage error: stderr is full or closed
            _last_words(f"error: {exc}")
            sys.exit(EXIT_ERROR)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):  # click reports these itself
            raise
        except KeyboardInterrupt:  # Ctrl-C: 130 (128 + SIGINT), the shell's convention, never 1 ("findings")
            _last_words("error: interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except OSError as exc:  # e.g. --output-file in a folder that does not exist, or an unwritable stderr
            _last_words(f"error: {exc}")
            sys.exit(EXIT_ERROR)
        except Exception as exc:  # noqa: BLE001 - last resort: report, do not trace back
            _last_words(f"error: ascendlint failed unexpectedly ({type(exc).__name__}: {exc}); "
                        "please report this with the file that caused it")
            sys.exit(EXIT_ERROR)


def _last_words(message: str) -> None:
    """An error said on stderr if stderr takes it: a full or closed stderr must not turn exit 2 into 1 (a
    traceback's exit status, which means "findings")."""
    try:
        click.echo(message, err=True)
        sys.stderr.flush()
    except (OSError, ValueError):
        _silence(sys.stderr)


def _silence(stream) -> None:
    """Point a stream that cannot be written at /dev/null, so that flushing it at exit cannot fail either."""
    import os

    try:
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, descriptor)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ascendlint")
def main() -> None:
    """Static analysis for Triton kernels on Huawei Ascend NPUs."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), replacing the config's.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--format", "--output-format", "output_format", type=_FormatChoice(), default=None,
              envvar="ASCENDLINT_OUTPUT_FORMAT", show_envvar=True,
              help="How to print the findings (config: `output-format`; default: full).")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=Path), envvar="ASCENDLINT_OUTPUT_FILE",
              show_envvar=True, help="Write the report here (missing folders are created).")
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="Also offer and apply unsafe fixes (config: `unsafe-fixes`).")
@click.option("--fix-only/--no-fix-only", default=False,
              help="Apply fixes, but report nothing left over and exit 0 for it (implies --fix).")
@click.option("--ignore-noqa", is_flag=True, help="Ignore every `# noqa` comment (and `# ascendlint: skip-file`).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if any).")
@click.option("--show-fixes", is_flag=True, help="List what --fix fixed.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them (JSON with --format json).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when --fix changed a file, even if nothing remains.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ASCENDLINT_CACHE_DIR",
              show_envvar=True, help="Where to keep the result cache (config: `cache-dir`; default: .ascendlint_cache).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
              help="Worker processes; 0 uses all cores when there is enough to lint, 1 lints serially.")
@click.option("--stdin-filename", help="Read standard input, reported (and configured) as this file name.")
@click.option("--config", "config_values", multiple=True,
              help="A config file for every file instead of each file's closest one, or a TOML `KEY = VALUE` "
                   "pair that overrides every configuration (repeatable).")
@click.option("--force-exclude/--no-force-exclude", default=None,
              help="Apply exclude patterns to paths named on the command line too (for pre-commit).")
@click.option("--show-settings", is_flag=True, help="Print the settings that govern the first path, then exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, then exit.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with findings; report nothing else.")
@click.option("--lint-cuda-only/--no-lint-cuda-only", default=None,
              help="Lint CUDA-only modules with the Ascend rules too (config: `lint-cuda-only`; default: no).")
@click.option("--verbose", "-v", is_flag=True,
              help="Also say, on standard error, which files were treated as CUDA-only and why.")
@click.option("--exclude", multiple=True, help="Exclude patterns (comma-separated) replacing the configuration's.")
@click.option("--extend-exclude", multiple=True, help="Exclude patterns (comma-separated) in addition.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file: the defaults and the options only.")
@click.option("--fixable", multiple=True, help="Rule codes or prefixes whose fixes may be applied (default: ALL).")
@click.option("--extend-fixable", multiple=True, help="Rule codes or prefixes to make fixable in addition.")
@click.option("--unfixable", multiple=True, help="Rule codes or prefixes whose fixes are never applied (still reported).")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the full and concise formats: auto = on a terminal (NO_COLOR / FORCE_COLOR honoured).")
@click.option("--watch", "-w", is_flag=True, help="Lint again whenever a Python file or configuration changes.")
@click.option("--compile", "compile_kernels", is_flag=True,
              help="Also compile every kernel at each stated config with the Ascend compiler (rules ASC307, ASC308; "
                   "needs the `compiler` extra).")
def check(paths, select, extend_select, ignore, output_format, output_file, fix, unsafe_fixes, fix_only, ignore_noqa,
          diff, show_fixes, statistics, exit_zero, exit_non_zero_on_fix, no_cache, cache_dir, jobs, stdin_filename,
          config_values, force_exclude, show_settings, show_files, quiet, add_noqa, lint_cuda_only, verbose, exclude,
          extend_exclude, isolated, fixable, extend_fixable, unfixable, color, watch, compile_kernels) -> None:
    """Lint PATHS (files or folders; `-` reads standard input). Default: the current folder."""
    fix = fix or fix_only
    config_path, config_pairs = _config_arguments(config_values)
    from_stdin = list(paths) == [Path("-")] or (not paths and stdin_filename is not None)
    paths = [Path("-")] if from_stdin else (list(paths) or [Path(".")])
    if add_noqa and (fix or diff or from_stdin):
        click.echo("error: --add-noqa cannot be combined with --fix, --diff or standard input", err=True)
        sys.exit(EXIT_ERROR)
    if isolated and config_path is not None:
        click.echo("error: --isolated ignores every configuration file; it cannot be combined with --config", err=True)
        sys.exit(EXIT_ERROR)
    if watch:
        if from_stdin or add_noqa or diff:
            click.echo("error: --watch cannot be combined with standard input, --add-noqa or --diff", err=True)
            sys.exit(EXIT_ERROR)
        from .watch import watch_and_rerun

        context = click.get_current_context()
        watch_and_rerun(paths, lambda: context.invoke(check, **{**context.params, "watch": False}))
        return
    if compile_kernels:
        extend_select = (*extend_select, ",".join(COMPILER_RULES))
    overrides = (select, extend_select, ignore)
    fix_selectors = (fixable, extend_fixable, unfixable)
    try:
        rules = rule_index(use_stored=not no_cache)
        adjust = _settings_overrides(_split(exclude), _split(extend_exclude), config_pairs, rules, cache_dir)
        resolver = SettingsResolver(rules, config_path, _warn, isolated=isolated, adjust=adjust)
        first = Path(stdin_filename) if from_stdin and stdin_filename else paths[0]
        settings = resolver.for_path(first if from_stdin or first.exists() else Path.cwd())
        docs_links.use_template(settings.docs_url)
        # run-wide settings: the command line (or environment), else the configuration of the first path, as ruff
        output_format = (output_format or settings.output_format or "full").lower()
        unsafe_fixes = settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
        force_exclude = settings.force_exclude if force_exclude is None else force_exclude
        linters = LinterSet(lambda s, cache: Linter(_enabled_rules(rules, s, *overrides), s, cache=cache,
                                                              lint_cuda_only=lint_cuda_only,
                                                              unfixable=_unfixable(rules, s, *fix_selectors),
                                                              ignore_noqa=ignore_noqa),
                            use_cache=not (no_cache or from_stdin))
        if show_settings:
            _emit(_settings_text(settings, linters.linter_for_settings(settings)), output_file)
            return
        errors: list[tuple[str, str]] = []  # (path, why it could not be linted)
        if from_stdin:
            files = []
            linters.linter_for_settings(settings)  # standard input is not discovered: it has the first path's
        else:
            found = discover(paths, settings, force_exclude=force_exclude, settings_for=resolver.for_path)
            files = found.files
            errors = _discovery_errors(paths, found)
            if not files and not errors:
                _warn_nothing_found(paths, resolver)
            linters.prepare(found.sources)  # each file with the settings discovery resolved for it
            if show_files:
                found = parallel.platforms(linters, files)
                _emit("".join(f"{path}{_cuda_only_note(found.get(path))}\n" for path in files), output_file)
                sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)
    except (ConfigError, selection.SelectionError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)

    unsafe_hidden = unsafe_fixes is None  # not chosen either way: the summary says how many unsafe fixes wait
    unsafe_fixes = bool(unsafe_fixes)
    options = Options(fix=fix and not diff, unsafe_fixes=unsafe_fixes, diff=diff,
                      links_named=frozenset(str(path) for path in files if path.is_symlink()) if fix else frozenset())
    if from_stdin:
        skip = force_exclude and stdin_filename is not None and _stdin_excluded(Path(stdin_filename), resolver)
        _refuse_output_file(output_file, [])
        results = [_lint_stdin(linters.linter_for_settings(settings), options, stdin_filename, skip)]
    else:
        _refuse_output_file(output_file, files)
        progress = _progress(len(files), output_format, output_file, quiet)
        try:
            with temp_files.removed_on_signals():
                results = parallel.lint_paths(linters, files, options, jobs, progress=progress)
        finally:
            if progress is not None:
                progress.close()
        linters.save_caches()
    for r in results:
        for d in [*r.diagnostics, *r.fixed]:
            d.url = docs_links.rule_url(d.code)
    errors.extend((r.path, r.error) for r in results if r.error)
    if verbose and not from_stdin:
        _say_cuda_only(linters, files)
    elif not quiet and not from_stdin and not add_noqa:
        _warn_cuda_only(linters, files)
    for path, reason in errors:
        click.echo(f"error: Failed to lint {output.shown(f'{path}: {reason}')}", err=True)
    if add_noqa:
        sys.exit(EXIT_ERROR if errors else _add_noqa(results))

    remaining = [d for r in results for d in r.diagnostics]
    fixed = [d for r in results for d in r.fixed]
    for r in results:
        for d in r.rejected_fixes:
            reason = d.extra.get(fixes.REFUSED_NOTE, fixes.DOES_NOT_PARSE)
            click.echo(f"warning: fix for {d.code} at {output.shown(d.where())} was discarded: {reason}", err=True)
    if diff:
        code = _print_diff(results, fixed)
        sys.exit(EXIT_ERROR if errors else code)

    sources = {}
    for r in results:
        if r.text is not None:
            sources[r.path] = r.text
        sources.update(r.sources)
    report = output.RunReport(
        diagnostics=remaining,
        sources=sources,
        fixed_count=len(fixed),
        fix_mode=options.fix,
        unsafe_fixes=unsafe_fixes,
        show_fixes=show_fixes,
        fixed=fixed,
        show_summary=not quiet,
        failed_paths=len(errors),
        failures=errors,
        color=output_format.lower() in output.TEXT_FORMATS and _use_color(color, output_file),
        unsafe_hint=unsafe_hidden,
        fix_only=fix_only,
    )
    if fix_only:  # ruff's --fix-only: what was fixed, nothing about what is left, and no exit 1 for it
        from ..output.text import summary

        lines = [] if quiet else summary(report)
        _emit("".join(f"{line}\n" for line in lines), output_file, to_stderr=from_stdin)
        sys.exit(EXIT_ERROR if errors else EXIT_FINDINGS if exit_non_zero_on_fix and fixed else EXIT_CLEAN)
    if statistics:
        text = _statistics(remaining, as_json=output_format.lower() in ("json", "json-lines"), unsafe_fixes=unsafe_fixes)
    else:
        text = output.get(output_format.lower())(report)
    _emit(text, output_file, to_stderr=from_stdin and options.fix, color=report.color)
    if errors:
        sys.exit(EXIT_ERROR)
    if exit_non_zero_on_fix and fixed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_FINDINGS if remaining and not exit_zero else EXIT_CLEAN)


def _cuda_only_note(found) -> str:
    """`--show-files`: what follows a file's path when the run treats it as CUDA-only."""
    return f"  ({found.reason()}: Ascend rules skipped)" if found is not None and found.cuda_only else ""


def _say_cuda_only(linters: LinterSet, files: list[Path]) -> None:
    """`--verbose`: one note per file treated as CUDA-only, with the evidence, on standard error."""
    count = 0
    found = parallel.platforms(linters, files)
    for path in files:
        verdict = found.get(path)
        if verdict is not None and verdict.cuda_only:
            count += 1
            click.echo(f"note: {output.shown(str(path))}: {verdict.reason()}; the Ascend rules reported nothing "
                       "(`lint-cuda-only = true` or --lint-cuda-only lints it)", err=True)
    click.echo(f"note: {count} of {len(files)} file{'s' if len(files) != 1 else ''} treated as CUDA-only", err=True)


def _warn_cuda_only(linters: LinterSet, files: list[Path]) -> None:
    """Without `--verbose`: one line when any file was treated as CUDA-only, so that a stray `device="cuda"` in an
    Ascend module does not silence every Ascend rule without a word."""
    found = parallel.platforms(linters, files)
    skipped = [path for path in files if found.get(path) is not None and found[path].cuda_only]
    if skipped:
        first = output.shown(str(skipped[0]))
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        _warn(f"{first}{more} treated as CUDA-only: the Ascend rules reported nothing there ({found[skipped[0]].reason()}; "
              "`--verbose` lists every such file, `--lint-cuda-only` or `lint-cuda-only = true` lints them)")


def _discovery_errors(paths: list[Path], found) -> list[tuple[str, str]]:
    """Problems with paths named on the command line are errors; those met while walking are warnings."""
    errors = []
    explicit = {str(p) for p in paths}
    for path, reason in found.errors:
        if str(path) in explicit:
            errors.append((str(path), reason))
        else:
            click.echo(f"warning: skipped {output.shown(f'{path}: {reason}')}", err=True)
    errors.extend((str(path), reason) for path, reason in found.unreadable)
    return errors


def _warn_nothing_found(paths: list[Path], resolver: SettingsResolver) -> None:
    """Say so when a run has nothing to lint (ruff's warning), naming the named folders that an exclude matches."""
    excluded = [str(p) for p in paths if p.is_dir() and is_force_excluded(p, resolver.for_path(p))]
    reason = f" ({', '.join(excluded)}: excluded by the configuration)" if excluded else ""
    _warn(f"No Python files found under the given path(s){output.shown(reason)}")


def _stdin_excluded(path: Path, resolver: SettingsResolver) -> bool:
    return is_force_excluded(path, resolver.for_path(path))


def _settings_text(settings: Settings, linter: Linter) -> str:
    """--show-settings: what governs the first path, as TOML-like lines (ruff prints its resolved settings)."""
    lines = [
        f"config-file = {json.dumps(str(settings.path) if settings.path else None)}",
        f"extends = {json.dumps([str(p) for p in settings.extends])}",
        f"root = {json.dumps(str(settings.root))}",
        f"enabled = {json.dumps([r.code for r in linter.rules])}",
        f"select = {json.dumps(settings.select)}",
        f"extend-select = {json.dumps(settings.extend_select)}",
        f"ignore = {json.dumps(settings.ignore)}",
        f"exclude = {json.dumps(settings.exclude)}",
        f"extend-exclude = {json.dumps(settings.extend_exclude)}",
        f"respect-gitignore = {json.dumps(settings.respect_gitignore)}",
        f"lint-cuda-only = {json.dumps(linter.lint_cuda_only)}",
        f"docs-url = {json.dumps(docs_links.rule_url('{code}', settings.docs_url))}",
        f"per-file-ignores = {json.dumps(settings.per_file_ignores)}",
        f"include = {json.dumps(settings.all_includes)}",
        f"unfixable-codes = {json.dumps(list(linter.unfixable))}",
        f"unsafe-fixes = {json.dumps(settings.unsafe_fixes)}",
        f"output-format = {json.dumps(settings.output_format)}",
        f"force-exclude = {json.dumps(settings.force_exclude)}",
        f"cache-dir = {json.dumps(str(settings.cache_dir) if settings.cache_dir else None)}",
        f"rule-options = {json.dumps(settings.rule_options, sort_keys=True)}",
    ]
    return "\n".join(lines) + "\n"


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _add_noqa(results: list[FileResult]) -> int:
    from ..fixes.add_noqa import add_noqa_to_file

    added = removed = unwritten = 0
    for result in results:
        if not result.diagnostics:
            continue
        if result.path.endswith(".ipynb"):
            click.echo(f"warning: {result.path}: --add-noqa does not edit notebooks; add the comments in the cells",
                       err=True)
            continue
        outcome = add_noqa_to_file(Path(result.path), result.text, result.diagnostics)
        added += outcome.added
        removed += outcome.removed
        unwritten += outcome.unwritten
        for row, reason in outcome.skipped:
            if outcome.unwritten:
                click.echo(f"error: {output.shown(result.path)}: no `# noqa` added: {reason}", err=True)
            else:
                click.echo(f"warning: {result.path}:{row}: no `# noqa` added: {reason}", err=True)
    click.echo(f"Added {added} noqa code{'s' if added != 1 else ''}.", err=True)
    if removed:
        click.echo(f"Removed unused codes from {removed} noqa comment{'s' if removed != 1 else ''}.", err=True)
    return EXIT_ERROR if unwritten else EXIT_CLEAN


def _enabled_rules(rules, settings: Settings, select, extend_select, ignore):
    chosen_select = selection.validate(_split(select), rules, "--select") if select else \
        selection.validate(settings.select, rules, _origin(settings, "select"))
    config_extend = selection.validate(settings.extend_select, rules, _origin(settings, "extend-select"))
    config_ignore = selection.validate(settings.ignore, rules, _origin(settings, "ignore"))
    cli_extend = selection.validate(_split(extend_select), rules, "--extend-select")
    cli_ignore = selection.validate(_split(ignore), rules, "--ignore")
    for glob, codes in settings.per_file_ignores.items():
        selection.validate(codes, rules, _origin(settings, f"per-file-ignores.{glob}"))
    if select or "ALL" not in cli_ignore:
        enabled = selection.resolve(rules, chosen_select, config_extend + cli_extend, config_ignore + cli_ignore)
    else:  # `--ignore ALL` without `--select`: the command line is a layer over the configuration's, as in ruff
        enabled = selection.override(rules, selection.resolve(rules, chosen_select, config_extend, config_ignore),
                                     cli_extend, cli_ignore)
    _warn_compiler_missing(enabled)
    return enabled


_COMPILER_WARNED: list[bool] = []


def _warn_compiler_missing(enabled) -> None:
    """Rules that need the compiler say once that they cannot run, instead of passing silently."""
    wanted = sorted({r.code for r in enabled} & set(COMPILER_RULES))
    if not wanted or _COMPILER_WARNED:
        return
    from ..compiler import missing

    reason = missing()
    if reason is not None:
        _COMPILER_WARNED.append(True)
        click.echo(f"warning: {', '.join(wanted)} not run: {reason}", err=True)


def _origin(settings: Settings, key: str) -> str:
    return f"`{key}` of {settings.path}" if settings.path else f"default `{key}`"


def _lint_stdin(linter: Linter, options: Options, stdin_filename: str | None, skip: bool = False) -> FileResult:
    from ..files.prefilter import could_hold_kernel
    from ..files.user_input import MAX_SOURCE_BYTES, bounded_stream

    data, more = bounded_stream(sys.stdin.buffer)  # never more than the size limit in memory
    filename = stdin_filename or "-"
    path = Path(stdin_filename) if stdin_filename else None
    if more:  # passed through untouched (with --fix) and, if it may hold a kernel, refused as a file would be
        if options.fix:
            sys.stdout.buffer.write(data)
            import shutil

            shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)
            sys.stdout.flush()
        if skip or not could_hold_kernel(data):
            return FileResult(path=filename)
        return FileResult(path=filename, error=f"standard input is over the {MAX_SOURCE_BYTES // 2**20} MiB limit "
                                               "for linting")
    if skip:  # --force-exclude and the name is excluded: pass the text through untouched, as ruff does
        if options.fix:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        return FileResult(path=filename)
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


def _statistics(diagnostics: list[Diagnostic], as_json: bool = False, unsafe_fixes: bool = False) -> str:
    """Findings per rule; a rule is fixable when `--fix` (with the run's `--unsafe-fixes`) would fix one of them."""
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if fix_applies(d, unsafe_fixes))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:  # ruff's shape: code, name, count, fixable
        rows = [{"code": code, "name": name, "count": count, "fixable": bool(fixable[code])}
                for (code, name), count in ordered]
        return json.dumps(rows, indent=2) + "\n"
    lines = []
    for (code, name), count in ordered:
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>5}\t{code}\t{marker} {name}")
    return "\n".join(lines) + ("\n" if lines else "")


def _refuse_output_file(output_file: Path | None, linted: list[Path]) -> None:
    problem = report_file.problem_with(output_file, linted) if output_file is not None else None
    if problem is not None:
        click.echo(f"error: {output.shown(problem)}", err=True)
        sys.exit(EXIT_ERROR)


def _emit(text: str, output_file: Path | None, to_stderr: bool = False, color: bool = False) -> None:
    if output_file is not None:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        report_file.write(output_file, text)
    elif to_stderr:
        click.echo(text, nl=False, err=True, color=color or None)
    else:
        click.echo(text, nl=False, color=color or None)  # click keeps the colours we chose, even in a pipe


def _use_color(choice: str, output_file: Path | None) -> bool:
    from .progress import use_color

    if output_file is not None:
        return choice == "always"
    return use_color(choice)


def _progress(total: int, output_format: str, output_file: Path | None, quiet: bool):
    """The stderr progress line: a terminal's stderr, and a report that is not a machine format on that terminal."""
    if quiet or total < 2:
        return None
    from .progress import Progress, wanted

    if not wanted(sys.stderr):
        return None
    if output_file is None and output_format.lower() not in output.TEXT_FORMATS and wanted(sys.stdout):
        return None  # a machine format on the same terminal: nothing may interleave with it
    return Progress(total)


def _settings_overrides(exclude: list[str], extend_exclude: list[str], pairs: list[str], rules,
                        cache_dir: Path | None):
    """What the command line changes in every configuration: `--config KEY=VALUE` pairs first (they win over the
    files), then --exclude (replaces `exclude`), --extend-exclude (adds to `extend-exclude`), --cache-dir."""
    from ..workspace.config import parse_overrides, settings_from_table

    table = parse_overrides(pairs, rules) if pairs else {}

    def adjust(settings: Settings) -> None:
        if table:
            settings_from_table(table, settings.path or Path("--config"), rules, into=settings)
        if exclude:
            settings.exclude = list(exclude)
        if extend_exclude:
            settings.extend_exclude = [*settings.extend_exclude, *extend_exclude]
        if cache_dir is not None:
            settings.cache_dir = Path(cache_dir).resolve()

    return adjust


def _config_arguments(values: tuple[str, ...]) -> tuple[Path | None, list[str]]:
    """ruff's `--config`: each value is a configuration file (at most one) or a TOML `KEY = VALUE` pair."""
    files, pairs = [], []
    for value in values:
        path = Path(value)
        if path.exists() and not path.is_dir():  # a FIFO or device too: reading it says why it is refused
            files.append(path)
        elif "=" in value:
            pairs.append(value)
        else:
            click.echo(f"error: --config {value!r} is neither an existing file nor a TOML `KEY = VALUE` pair", err=True)
            sys.exit(EXIT_ERROR)
    if len(files) > 1:
        click.echo("error: --config names more than one configuration file", err=True)
        sys.exit(EXIT_ERROR)
    return (files[0] if files else None), pairs


def _unfixable(rules, settings: Settings, fixable, extend_fixable, unfixable) -> list[str]:
    """The codes whose fixes are dropped: ruff's `fixable` / `extend-fixable` / `unfixable` of the configuration,
    the command line's `--fixable` replacing `fixable` and the other two adding to theirs."""
    chosen = selection.validate(_split(fixable), rules, "--fixable") if fixable else \
        selection.validate(settings.fixable, rules, _origin(settings, "fixable"))
    extend = selection.validate(settings.extend_fixable, rules, _origin(settings, "extend-fixable")) + \
        selection.validate(_split(extend_fixable), rules, "--extend-fixable")
    ignored = selection.validate(settings.unfixable, rules, _origin(settings, "unfixable")) + \
        selection.validate(_split(unfixable), rules, "--unfixable")
    return selection.unfixable(rules, chosen, extend, ignored)


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule(code: str | None, show_all: bool) -> None:
    """Print the documentation of rule CODE (code or name), or list all rules."""
    from ..catalog.docs import render_index, render_rule
    from ..catalog.registry import all_rules, rule_by_code_or_name

    rules = all_rules()
    if show_all or code is None:
        click.echo(render_index(rules), nl=False)
        return
    found = rule_by_code_or_name(code)
    if found is None:
        click.echo(f"error: Unknown rule `{code}`", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(render_rule(found), nl=False)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("--compile/--no-compile", "compile_kernels", default=None,
              help="Show BiShengIR's verdict beside each estimate (default: when the `compiler` extra is installed).")
def ub(paths: tuple[Path, ...], output_format: str, compile_kernels: bool | None) -> None:
    """Print the estimated Unified Buffer use of each kernel per launch or autotune config against the budget."""
    from . import ub_report
    from ..compiler import missing

    reason = missing()
    if compile_kernels and reason:
        click.echo(f"warning: no compiler verdicts: {reason}", err=True)
    compiled = bool(compile_kernels if compile_kernels is not None else True) and reason is None
    rows, errors = ub_report.collect(list(paths), compile_kernels=compiled)
    for error in errors:
        click.echo(f"warning: {error}", err=True)
    click.echo(ub_report.render_json(rows) if output_format == "json" else ub_report.render_table(rows, compiled),
               nl=False)
    # over the budget is a finding, as ASC305's: a CI step running `ub` must fail on it
    sys.exit(EXIT_FINDINGS if any(ub_report.over_budget(row) for row in rows) else EXIT_CLEAN)


@main.command()
def server() -> None:
    """Run the Language Server (LSP over standard input and output) for editors; needs `ascendlint[server]`."""
    try:
        from ..server import run
    except ImportError as exc:
        click.echo(f"error: the language server needs the `server` extra: pip install 'ascendlint[server]' ({exc})",
                   err=True)
        sys.exit(EXIT_ERROR)
    run()


if __name__ == "__main__":  # pragma: no cover
    main()
