"""``python -m ascendlint``.

``-m`` puts the current folder first on ``sys.path``; a repository being linted could then shadow a dependency
(a ``click.py`` in it would run). Drop that entry before importing anything else.
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from ascendlint.cli import main  # noqa: E402 - must follow the sys.path repair above

main()
