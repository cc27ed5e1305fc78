"""Engines outside the project that the bot is measured against, found on this machine.

sunfish (PyPI ``sunfish``: one file of pure Python, a hand-written piece-square table, an
MTD-bi search) is the peer the fast search is held to: the arena plays it
(:mod:`knights.lab.arena.specs`, ``sunfish``), the search benchmark counts its nodes a second
(:mod:`knights.lab.bench.search`). It is run, never imported: its ``sunfish-uci`` speaks UCI.
The package pins an old python-chess for its own user interface, which ``sunfish-uci``
does not use, so ``make setup`` installs it without its dependencies.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def sunfish_command() -> str:
    """The ``sunfish-uci`` command beside this Python, or on the ``PATH``; ``ValueError``
    (saying how to install it) when it is in neither."""
    beside = Path(sys.executable).parent / "sunfish-uci"
    found = str(beside) if beside.exists() else shutil.which("sunfish-uci")
    if not found:
        raise ValueError("sunfish-uci is not installed: make setup installs it (pip install --no-deps sunfish)")
    return shlex.quote(found)
