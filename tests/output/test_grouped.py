"""The ``grouped`` format: a heading per file, then its findings, then the summary."""

from __future__ import annotations

from ascendlint.output import get


def test_findings_are_listed_under_their_file_in_order(report):
    text = get("grouped")(report)
    lines = text.splitlines()
    assert lines[0] == "kernels/broken.py:"
    assert lines[1].split()[:2] == ["2:7", "ASC001"]
    k = lines.index("kernels/k.py:")
    assert [line.split()[:2] for line in lines[k + 1 : k + 3]] == [["7:52", "ASC003"], ["12:40", "ASC101"]]
    assert all(line.startswith("  ") for line in lines[k + 1 : k + 3])
    assert "Found 3 findings." in lines
