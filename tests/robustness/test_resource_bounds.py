"""The documented bounds hold on the worst inputs under the size limit: with the default rules no file takes more
than 10 s of CPU or 1 GB of memory (docs/robustness.md, "Bounds"). Each shape runs in a fresh process, which is
measured by the kernel (CPU time and peak resident memory), so the figures do not depend on the machine's load."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from ascendlint.files import source
from tests.conftest import REPO

pytestmark = pytest.mark.slow

MEASURE = """
import resource, sys
from ascendlint.linter import engine
from ascendlint.catalog.registry import all_rules
text = open(sys.argv[1], encoding="utf-8").read()
found = engine.lint_text(text, "worst.py", [rule for rule in all_rules() if rule.default])
print(",".join(sorted({d.code for d in found})))
own = resource.getrusage(resource.RUSAGE_SELF)
print(own.ru_utime + own.ru_stime, own.ru_maxrss)
"""

KERNEL_HEAD = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
               "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n")
WORST = {
    # a literal list just under the token limit (a 1 MB one took 2.2 GB and 13-36 s)
    "literal-list": lambda: "import triton\nX = [" + ", ".join(str(i % 1000) for i in range(49_000)) + "]\n",
    # one jit function just under the token limit
    "jit-function": lambda: KERNEL_HEAD + "".join(f"    v{i} = tl.load(x_ptr + offs + {i}) * {i % 7}\n"
                                                  for i in range(6_900)) + "\ndef run(x):\n    k[(1,)](x, BLOCK=128)\n",
    # chains at the per-file budget: three of 1,000 parts
    "chains": lambda: "import triton\n" + ("x = (a\n" + "[0]\n" * 1000 + ")\n") * 3,
    # runs of binary operators: the most a file can hold without being counted on the tree, and more
    "operators-unchecked": lambda: "import triton\n" + "s = " + " + ".join(["x"] * 2_990) + "\n",
    "operators": lambda: "import triton\n" + ("s = " + " + ".join(["x"] * 1_500) + "\n") * 4,
    # a file over the token limit: refused at once
    "over-the-token-limit": lambda: "import triton\nX = [" + ", ".join("1" for _ in range(200_000)) + "]\n",
}


@pytest.mark.parametrize("shape", sorted(WORST))
def test_no_file_under_the_limits_costs_more_than_10_s_or_1_gb(tmp_path, shape):
    text = WORST[shape]()
    assert len(text.encode()) <= source.MAX_SOURCE_BYTES
    path = tmp_path / "worst.py"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    codes, usage = result.stdout.splitlines()[-2:]
    # the child's own figures: the peak of RUSAGE_CHILDREN is the largest child this test process ever started
    cpu, peak_kb = float(usage.split()[0]), int(usage.split()[1])
    peak_mb = peak_kb / 1024  # kilobytes on Linux
    assert cpu < 10, f"{shape}: {cpu:.1f} s of CPU"
    assert peak_mb < 1024, f"{shape}: {peak_mb:.0f} MB"
    if shape == "over-the-token-limit":
        assert codes == "ASC001"
