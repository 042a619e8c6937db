"""Every registered format through the real command: the document is produced and the exit code is unchanged."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.output.conftest import KERNEL, SELECT

PARSERS = {"sarif": json.loads, "rdjson": json.loads, "junit": ET.fromstring}


@pytest.mark.parametrize("name", ["sarif", "rdjson", "github", "junit", "grouped"])
def test_format_is_selectable_and_keeps_exit_code_1_on_findings(cli, write, name):
    path = write("k.py", KERNEL)
    result = cli("check", "--no-cache", "--select", SELECT, str(path), "--format", name)
    assert result.returncode == 1, result.stderr
    assert "num_warps" in result.stdout
    if name in PARSERS:
        PARSERS[name](result.stdout)
