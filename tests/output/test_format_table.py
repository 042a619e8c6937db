"""The table of built-in formats (what ``--format`` offers without importing a format) is what the modules register."""

from __future__ import annotations

import importlib
import pkgutil
import sys

from ascendlint import output


def test_every_format_module_registers_exactly_the_names_the_table_gives_it():
    for info in pkgutil.iter_modules(output.__path__):
        importlib.import_module(f"{output.__name__}.{info.name}")
    registered = {name: function.__module__.rsplit(".", 1)[1] for name, function in output._FORMATS.items()}
    assert registered == output.BUILTIN_FORMATS


def test_a_format_is_imported_when_first_asked_for(monkeypatch):
    monkeypatch.delitem(output._FORMATS, "junit", raising=False)
    monkeypatch.delitem(sys.modules, f"{output.__name__}.junit", raising=False)
    assert "junit" in output.names()
    assert callable(output.get("junit")) and "junit" in output._FORMATS
