"""Jupyter notebooks as one virtual Python text, and back: what lets the text engine lint and fix ``.ipynb`` files.

The code cells are joined into one text, each followed by a boundary comment line, so that fixes (which edit the
virtual text) can be split back into cells. IPython syntax that is not Python (``%magic`` and ``!shell`` lines,
``x = !cmd``, ``obj?`` help) is blanked out: each such line becomes a numbered ``pass`` placeholder (a statement,
so a magic inside a block keeps the block valid) and is put back verbatim when the cells are written. Cells run by
a cell magic (``%%bash``) are not Python and are left out. Positions map back as ruff shows them: the cell's
1-based position in the notebook, and the row within that cell.

Writing keeps the file's JSON formatting: key order, indentation, ASCII escaping and the trailing newline; only
the changed cells' ``source`` differs, outputs are untouched. A notebook whose formatting cannot be reproduced
exactly is not written. The notebook is read with nbformat and never executed.
"""

from __future__ import annotations

import bisect
import codecs
import copy
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..diagnostics import Diagnostic, Edit, Fix, Location
from ..text.text_positions import line_starts, source_lines

BOUNDARY = "# ascendlint: end of notebook cell"
_PLACEHOLDER = re.compile(r"^[ \t]*pass  # ascendlint: notebook magic (\d+)$")
_MAGIC = re.compile(
    r"""^[ \t]*(?:
        [%!]                                   # %line magic, !shell command
      | \?                                     # ?help
      | [\w.]+[ \t]*\?\??[ \t]*$               # obj? / obj??
      | [\w.,\t ()\[\]]+=[ \t]*[%!]            # x = !cmd, x = %magic
    )""",
    re.VERBOSE,
)


_LINE_ENDS = ("\n", "\r")


class NotebookError(ValueError):
    """The file is not a notebook ascendlint can read, or its fixes cannot be written back faithfully."""


@dataclass
class CodeCell:
    index: int  # 0-based position among all the notebook's cells
    source: str  # the cell's text as the notebook holds it
    start_row: int  # 1-based row of the cell's first line in the virtual text
    line_count: int  # rows the cell occupies in the virtual text (its boundary line not counted)
    magics: dict[int, str] = field(default_factory=dict)  # placeholder number -> the original line

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass
class JsonStyle:
    indent: int | None
    ensure_ascii: bool
    trailing_newline: bool
    bom: bool


@dataclass
class Notebook:
    raw: dict  # the parsed JSON, key order kept
    cells: list[CodeCell]
    text: str  # the virtual text the engine lints
    style: JsonStyle
    original: str  # the file's text, to check that the formatting round-trips

    # -- positions ---------------------------------------------------------------------------------------------
    def cell_at_row(self, row: int) -> CodeCell | None:
        starts = [cell.start_row for cell in self.cells]
        position = bisect.bisect_right(starts, row) - 1
        if position < 0:
            return None
        cell = self.cells[position]
        return cell if row < cell.start_row + cell.line_count else None

    def _cell_for(self, row: int) -> CodeCell:
        """The cell holding ``row``, or the one before it (a boundary line belongs to the cell it closes)."""
        starts = [cell.start_row for cell in self.cells]
        return self.cells[max(0, bisect.bisect_right(starts, row) - 1)]

    def map_diagnostic(self, diagnostic: Diagnostic) -> Diagnostic:
        """The finding with cell-relative positions (and fix edits relative to that cell's text)."""
        cell = self._cell_for(diagnostic.location.row)
        lines = _lines(cell.source)
        start = _cell_location(cell, diagnostic.location, lines)
        end = _cell_location(cell, diagnostic.end_location, lines)
        if end < start:
            end = start
        return replace(
            diagnostic,
            location=start,
            end_location=end,
            fix=self._cell_fix(diagnostic.fix, cell),
            noqa_row=None if diagnostic.noqa_row is None else max(1, diagnostic.noqa_row - cell.start_row + 1),
            extra=dict(diagnostic.extra),
            cell=cell.number,
        )

    @cached_property
    def _text_starts(self) -> list[int]:
        """Where the virtual text's lines begin (once per notebook, not once per fix)."""
        return line_starts(self.text)

    @cached_property
    def _magic_rows(self) -> set[int]:
        """Rows of the virtual text that stand for IPython magics, which no fix may touch."""
        return {row for row, line in enumerate(source_lines(self.text), 1) if _PLACEHOLDER.match(line)}

    def _cell_fix(self, fix: Fix | None, cell: CodeCell) -> Fix | None:
        """A fix's edits as offsets into the cell's own text; None when an edit leaves the cell or touches magic."""
        if fix is None:
            return None
        starts, magic_rows = self._text_starts, self._magic_rows
        cell_starts = line_starts(cell.source)
        edits = []
        for edit in fix.edits:
            offsets = []
            for offset in (edit.start, edit.end):
                row = bisect.bisect_right(starts, offset)
                relative = row - cell.start_row
                if not 0 <= relative < cell.line_count or row in magic_rows:
                    return None
                offset_in_cell = cell_starts[relative] + offset - starts[row - 1] if relative < len(cell_starts) \
                    else len(cell.source)
                offsets.append(min(offset_in_cell, len(cell.source)))
            edits.append(Edit(offsets[0], offsets[1], edit.content))
        return Fix(fix.message, fix.applicability, tuple(edits))

    def cell_sources(self, filename: str) -> dict[str, str]:
        from ..output import source_key

        return {source_key(filename, cell.number): cell.source for cell in self.cells}

    # -- writing ----------------------------------------------------------------------------------------------
    def with_text(self, text: str) -> "Notebook":
        """The notebook whose virtual text is ``text`` (fixed cells put back in place, magics restored)."""
        chunks = _split_cells(text, len(self.cells))
        raw = copy.deepcopy(self.raw)
        for cell, chunk in zip(self.cells, chunks):
            restored = _restore_magics(chunk, cell.magics)
            if not cell.source.endswith(_LINE_ENDS) and restored.endswith("\n"):
                restored = restored[:-1]  # the newline the virtual text added after the cell's last line
            if restored == cell.source:
                continue
            entry = raw["cells"][cell.index]
            entry["source"] = _jupyter_lines(restored) if isinstance(entry["source"], list) else restored
        updated = from_json(raw, self.original, self.style)
        if updated.text != text:
            raise NotebookError("the fixed cells do not map back onto the notebook")
        return updated

    def to_bytes(self) -> bytes:
        """The file's new bytes, formatted as the original was."""
        if _dump(json.loads(self.original), self.style) != self.original:
            raise NotebookError(
                "fixes not written: the notebook's JSON formatting cannot be reproduced exactly "
                "(save it once from Jupyter, or format it with `jupyter nbconvert --to notebook --inplace`)"
            )
        data = _dump(self.raw, self.style).encode("utf-8")
        return codecs.BOM_UTF8 + data if self.style.bom else data

    def cell_texts(self) -> dict[int, str]:
        return {cell.number: cell.source for cell in self.cells}


def read(data: bytes) -> Notebook | None:
    """The notebook's code cells as one text; None when its kernel is not Python."""
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        original = data[len(codecs.BOM_UTF8):].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"a notebook must be UTF-8 (byte {exc.start}: {exc.reason})") from exc
    try:
        raw = json.loads(original)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not valid JSON: {exc}") from exc
    _check_structure(raw)
    _validated(original)
    if not _is_python(raw.get("metadata") or {}):
        return None
    return from_json(raw, original, _style(original, bom))


def _check_structure(raw) -> None:
    """The parts of the notebook format this module reads or writes back have the types the format gives them.

    A notebook damaged by hand, by a merge or by a generator (a cell that is a string, ``metadata`` or ``outputs``
    that is not an object or list) is one file's ASC001, never an exception that ends the run.
    """
    if not isinstance(raw, dict):
        raise NotebookError(f"not a Jupyter notebook (the document is a JSON {_kind(raw)}, not an object)")
    if raw.get("nbformat") != 4:
        raise NotebookError(f"notebook format version {raw.get('nbformat')!r} is not supported (only version 4)")
    _expect(raw, "metadata", dict, "the notebook's")
    metadata = raw.get("metadata") or {}
    for key in ("kernelspec", "language_info"):
        _expect(metadata, key, dict, "the notebook's metadata")
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f"not a Jupyter notebook (`cells` is a JSON {_kind(cells)}, not a list)")
    for number, cell in enumerate(cells, 1):
        where = f"cell {number}"
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook ({where} is a JSON {_kind(cell)}, not an object)")
        if not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"not a Jupyter notebook ({where} has no `cell_type` string)")
        source = cell.get("source", "")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise NotebookError(f"not a Jupyter notebook ({where}: `source` is not a string or a list of strings)")
        _expect(cell, "metadata", dict, where)
        _expect(cell, "outputs", list, where)


def _expect(container: dict, key: str, kind: type, where: str) -> None:
    if key in container and not isinstance(container[key], kind):
        wanted = "an object" if kind is dict else "a list"
        raise NotebookError(f"not a Jupyter notebook ({where} `{key}` is a JSON {_kind(container[key])}, not {wanted})")


def _kind(value) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _validated(original: str):
    import nbformat

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return nbformat.reads(original, as_version=nbformat.NO_CONVERT, capture_validation_error={})
        except Exception as exc:  # noqa: BLE001 - whatever nbformat raises on a damaged notebook is its verdict
            # NotJSONError is a ValueError; a document that is no notebook fails inside nbformat in many ways
            # (ValidationError wrapping an AttributeError, KeyError, TypeError, RecursionError...)
            raise NotebookError(f"not a Jupyter notebook ({type(exc).__name__}: {exc})") from exc


def _is_python(metadata: dict) -> bool:
    language = (metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name")
    return language is None or str(language).lower() == "python"


def from_json(raw: dict, original: str, style: JsonStyle) -> Notebook:
    cells: list[CodeCell] = []
    parts: list[str] = []
    row = 1
    raw_cells = raw.get("cells")
    if not isinstance(raw_cells, list):
        raise NotebookError("the notebook has no list of cells")
    for index, entry in enumerate(raw_cells):
        if not isinstance(entry, dict) or entry.get("cell_type") != "code":
            continue
        source = entry.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if not isinstance(source, str) or source.lstrip().startswith("%%"):
            continue  # a cell magic: the cell is not Python
        body, magics = _blank_magics(source, len(cells))
        if not body.endswith(_LINE_ENDS):
            body += "\n"
        line_count = len(line_starts(body)) - 1  # Python's lines: \n, \r\n and a lone \r end one
        cells.append(CodeCell(index=index, source=source, start_row=row, line_count=line_count, magics=magics))
        parts.append(body + BOUNDARY + "\n")
        row += line_count + 1
    return Notebook(raw=raw, cells=cells, text="".join(parts), style=style, original=original)


def _blank_magics(source: str, cell_position: int) -> tuple[str, dict[int, str]]:
    magics: dict[int, str] = {}
    out = []
    for line in source_lines(source, keepends=True):
        content = line.rstrip("\r\n")
        if _MAGIC.match(content) and not content.lstrip().startswith("#"):
            number = cell_position * 100_000 + len(magics)
            magics[number] = content
            indent = content[: len(content) - len(content.lstrip())]
            out.append(f"{indent}pass  # ascendlint: notebook magic {number}" + line[len(content):])
        else:
            out.append(line)
    return "".join(out), magics


def _restore_magics(text: str, magics: dict[int, str]) -> str:
    lines = source_lines(text, keepends=True)
    found = set()
    for position, line in enumerate(lines):
        content = line.rstrip("\r\n")
        match = _PLACEHOLDER.match(content)
        if match and int(match.group(1)) in magics:
            number = int(match.group(1))
            found.add(number)
            lines[position] = magics[number] + line[len(content):]
    if found != set(magics):
        raise NotebookError("a fix removed an IPython magic line; the notebook is left as it was")
    return "".join(lines)


def _split_cells(text: str, count: int) -> list[str]:
    chunks, current = [], []
    for line in source_lines(text, keepends=True):
        if line.rstrip("\r\n") == BOUNDARY:
            chunks.append("".join(current))
            current = []
        else:
            current.append(line)
    if len(chunks) != count or "".join(current).strip():
        raise NotebookError("a fix moved code across notebook cells; the notebook is left as it was")
    return chunks


def _style(original: str, bom: bool) -> JsonStyle:
    match = re.search(r"\n([ \t]+)\S", original)
    indent = len(match.group(1)) if match else None
    ascii_only = original.isascii()
    return JsonStyle(
        indent=indent,
        ensure_ascii=ascii_only and "\\u" in original,
        trailing_newline=original.endswith("\n"),
        bom=bom,
    )


def _dump(raw: dict, style: JsonStyle) -> str:
    text = json.dumps(raw, indent=style.indent, ensure_ascii=style.ensure_ascii)
    return text + "\n" if style.trailing_newline else text


def _jupyter_lines(text: str) -> list[str]:
    """A cell's source as Jupyter stores it in a list: split after each \\n only (never at \\r, \\f or U+2028)."""
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def _lines(text: str) -> list[str]:
    """The cell's lines without their endings, as the engine counts rows (a lone \\r ends a line)."""
    lines = [line.rstrip("\r\n") for line in source_lines(text, keepends=True)]
    return lines + [""] if not lines or text.endswith(_LINE_ENDS) else lines


def _cell_location(cell: CodeCell, location: Location, lines: list[str]) -> Location:
    row = location.row - cell.start_row + 1
    if row < 1:
        return Location(1, 1)
    if row > cell.line_count or row > len(lines):
        last = min(cell.line_count, len(lines))
        return Location(last, len(lines[last - 1]) + 1)
    return Location(row, min(location.column, len(lines[row - 1]) + 1))
