"""The server answers again after a malformed frame (one without ``Content-Length``): it used to take the next
frame's header as part of the bad frame's body and never answer again."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("pygls")

from ascendlint.server import FramedInput  # noqa: E402
from tests.conftest import REPO  # noqa: E402


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}}


def test_the_next_frame_after_one_without_content_length_is_read():
    bad = b"X-Whatever: 1\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "method": "noise"}).encode()
    stream = FramedInput(io.BytesIO(bad + _frame(INITIALIZE)))
    lines = [stream.readline() for _ in range(4)]
    assert lines[3].startswith(b"Content-Length:")
    assert stream.readline() == b"\r\n"
    body = stream.read(int(lines[3].split(b":")[1]))
    assert json.loads(body)["method"] == "initialize"


def test_the_server_answers_after_a_malformed_frame():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "ascendlint", "server"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        bad = b"X-Whatever: 1\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "method": "noise"}).encode()
        process.stdin.write(bad + _frame(INITIALIZE))
        process.stdin.flush()
        answer = {}

        def read_answer():
            header = process.stdout.readline()
            while process.stdout.readline().strip():
                pass
            answer.update(json.loads(process.stdout.read(int(header.split(b":")[1]))))

        reader = threading.Thread(target=read_answer, daemon=True)
        reader.start()
        reader.join(30)
        assert answer.get("id") == 1 and "capabilities" in answer.get("result", {})
    finally:
        process.kill()
        process.wait()
