"""Reading the front ends' input: one line at a time, a stray byte reported, not fatal, and a
wait that a signal, a deadline or the engine can end.

``knights uci`` and ``knights play`` read their commands through :class:`Lines`, which decodes
each line itself, strictly, so that a byte that is not valid in the stream's encoding costs
one line (reported by the caller) instead of the whole session:

>>> import io
>>> with Lines(io.StringIO("go\\n")) as lines:
...     lines.read(), lines.read()
(('go\\n', None), ('', None))

A stream with a file descriptor (standard input: a terminal, a pipe, a file) is read from the
descriptor with ``select()``, into the reader's own buffer, never through a blocking
``read()``. A wait then ends when a line is complete, when its timeout passes, when another
descriptor it watches is ready (the UCI engine's pipe), or when a signal arrives: while a
:class:`Lines` is open on the main thread it is the process's ``signal.set_wakeup_fd``, so a
SIGTERM the kernel hands to any thread (torch's, numba's, OpenBLAS's) wakes the main thread,
whose Python handler then runs. A blocking ``read()`` is woken only by a signal delivered to
the main thread itself.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

CHUNK = 65536


class Lines:
    """The lines of ``stream`` (see the module's description); a context manager, which on the
    main thread owns the signal wake-up descriptor while it is open."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.fd = _fileno(stream)
        self._pending = b""
        self._ended = False
        self._wake: tuple[int, int] | None = None     # (read end, write end) of the wake-up pipe
        self._previous_wake = -1

    @property
    def waits(self) -> bool:
        """Whether input can arrive later (a descriptor), so a wait may end before a line is there;
        an in-memory stream has all of its lines at once."""
        return self.fd is not None

    def __enter__(self) -> Lines:
        if self.fd is not None and threading.current_thread() is threading.main_thread():
            read_end, write_end = os.pipe()
            os.set_blocking(read_end, False)
            os.set_blocking(write_end, False)
            try:
                self._previous_wake = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
            except ValueError:       # not the main interpreter: signals reach the main thread as before
                os.close(read_end)
                os.close(write_end)
            else:
                self._wake = (read_end, write_end)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._wake is not None:
            with contextlib.suppress(ValueError):
                signal.set_wakeup_fd(self._previous_wake)
            for fd in self._wake:
                os.close(fd)
            self._wake = None

    def next_line(self) -> tuple[str, str | None]:
        """The next line, however long it takes (:meth:`read` without a timeout)."""
        while (got := self.read()) is None:
            pass
        return got

    def read(self, timeout: float | None = None, also: Sequence[Any] = ()) -> tuple[str, str | None] | None:
        """The next line as ``(text, None)``; ``("", None)`` at the end of input; ``("\\n",
        reason)`` for a line whose bytes are not valid in the stream's encoding (the caller
        reports ``reason`` and reads on). ``None`` when ``timeout`` seconds pass first or one of
        ``also`` (objects with a ``fileno()``) is ready to read. An error of the descriptor
        itself (``EIO``: the terminal is gone) is raised as ``OSError``."""
        if self.fd is None:
            return _stream_line(self.stream)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if b"\n" in self._pending:
                raw, self._pending = self._pending.split(b"\n", 1)
                return _decode(raw + b"\n", self.encoding)
            if self._ended:
                raw, self._pending = self._pending, b""
                return _decode(raw, self.encoding) if raw else ("", None)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            watched: list[Any] = [self.fd, *also]
            if self._wake is not None:
                watched.append(self._wake[0])
            ready, _, _ = select.select(watched, [], [], left)
            if self._wake is not None and self._wake[0] in ready:
                _drain(self._wake[0])    # the signal's handler runs as this returns to Python
            if self.fd in ready:
                chunk = os.read(self.fd, CHUNK)
                self._pending += chunk
                self._ended = not chunk
                continue
            if any(other in ready for other in also) or (deadline is not None and time.monotonic() >= deadline):
                return None


def _decode(raw: bytes, encoding: str) -> tuple[str, str | None]:
    """One line's bytes as text, strictly; ``("\\n", reason)`` when they are not valid ``encoding``."""
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.end].hex(" ")
        return "\n", f"input is not valid {encoding} (byte {bad} at column {exc.start + 1}); line ignored"
    except LookupError:
        return raw.decode("utf-8", errors="replace"), None


def _stream_line(stream: TextIO) -> tuple[str, str | None]:
    """A line of a stream without a descriptor: a byte buffer's line is decoded here, strictly; a text
    stream's is read as it is."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        return stream.readline(), None
    return _decode(buffer.readline(), getattr(stream, "encoding", None) or "utf-8")


def _fileno(stream: TextIO) -> int | None:
    """The descriptor under ``stream``, or ``None`` (an in-memory stream, pytest's captured stdin)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError, OSError):
        while os.read(fd, CHUNK):
            pass
