"""What every stage shares: the one atomic JSON writer, the one ``main()`` wrapper and the commit a result
was made at.

This module imports no other part of ``knights`` (it is the first stage of the core), so
any stage and any application may use it.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "out" / "result.json"
>>> write_json(path, {"a": 1})
>>> path.read_text()
'{\\n "a": 1\\n}\\n'
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

COMMAND_ERRORS: tuple[type[BaseException], ...] = (FileNotFoundError, ValueError, RuntimeError)
"""What a command reports in one line (exit status 2) instead of a traceback."""


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut.

    >>> clip("e2e4", 10), clip("x" * 12, 6)
    ('e2e4', 'xxxxx…')
    """
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def quoted(value: object, width: int = 40) -> str:
    """``repr(value)`` cut to ``width`` characters: how a message quotes what a user sent (a line, a body or a
    file may hold megabytes of it), an ellipsis marking the cut."""
    return clip(repr(value), width)


RESULTS_FOLDER = "report/results"
"""Where the commands write their results files: a change there leaves the code as committed."""


def commit(root: Path | None = None) -> str:
    """The short hash of this checkout's HEAD (or ``root``'s), with ``-dirty`` when tracked files have uncommitted
    changes outside :data:`RESULTS_FOLDER` (``unknown`` outside a git checkout): what a results file records as the
    code it was made with. A run that rewrites results files as it goes (``knights strength --retire`` sets earlier
    runs aside at its start) is still the committed code."""
    root = root or Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", f":(exclude){RESULTS_FOLDER}")
        return f"{head}-dirty" if changed else head
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_json(path: str | Path, value: object, *, indent: int | None = 1) -> None:
    """Write ``value`` as JSON (and a final newline) through a temporary file and a rename,
    so that a reader, or another machine sharing the folder, never sees half of it; the
    parent folder is made when missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value, indent=indent) + "\n")
    os.replace(tmp, target)


def not_a_regular_file(path: str | Path) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a directory (``"a FIFO"``,
    ``"a character device"``, ...): an output must never replace such a thing; ``None`` otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    kinds = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((what for test, what in kinds if test(mode)), None)


@contextlib.contextmanager
def exit_on_termination(*, as_interrupt: bool = False) -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``SystemExit(128 + signal)`` instead of ending the
    process at once, so that ``finally`` blocks and ``except BaseException`` clean-ups (a
    temporary file) run; with ``as_interrupt``, ``KeyboardInterrupt``, so that they stop the
    process as Ctrl-C does. The previous handlers come back afterwards; off the main thread,
    where handlers cannot be set, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: object) -> None:
        if as_interrupt:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    previous = {sig: signal.signal(sig, leave) for sig in wanted}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def command_main(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int],
                 argv: Sequence[str] | None = None, *,
                 errors: tuple[type[BaseException], ...] = COMMAND_ERRORS, name: str | None = None) -> int:
    """The ``main()`` of a ``python -m`` command: parse ``argv`` with ``parser``, run, and
    turn an expected failure (``errors``) into one line on stderr and exit status 2."""
    args = parser.parse_args(argv)
    try:
        return run(args)
    except errors as exc:
        print(f"{name or parser.prog}: error: {exc}", file=sys.stderr)
        return 2


def module_main(module: str, description: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                run: Callable[[argparse.Namespace], int], argv: Sequence[str] | None = None) -> int:
    """:func:`command_main` of ``python -m module``, whose options ``add_arguments`` adds (the
    same options the ``knights`` command of that name takes)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    add_arguments(parser)
    return command_main(parser, run, argv)
