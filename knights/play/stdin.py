"""Reading the front ends' input safely: one line at a time, a stray byte reported, not fatal.

``knights uci`` and ``knights play`` read their commands with :func:`read_line`, which
decodes each line itself, strictly, so that a byte that is not valid in the stream's
encoding costs one line (reported by the caller) instead of the whole session:

>>> import io
>>> read_line(io.StringIO("go\\n"))
('go\\n', None)
>>> read_line(io.StringIO(""))
('', None)
"""

from __future__ import annotations

from typing import TextIO


def read_line(stdin: TextIO) -> tuple[str, str | None]:
    """The next line of ``stdin`` as ``(text, None)``; ``("", None)`` at the end of input;
    ``("\\n", reason)`` for a line whose bytes are not valid in the stream's encoding (one bad
    byte must not end a session: the caller reports ``reason`` and reads on).

    A text stream with a byte buffer (``sys.stdin``) is read as bytes and decoded here,
    strictly; any other text stream (``io.StringIO``) is read as it is."""
    buffer = getattr(stdin, "buffer", None)
    if buffer is None:
        return stdin.readline(), None
    raw = buffer.readline()
    encoding = getattr(stdin, "encoding", None) or "utf-8"
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.end].hex(" ")
        return "\n", f"input is not valid {encoding} (byte {bad} at column {exc.start + 1}); line ignored"
    except LookupError:
        return raw.decode("utf-8", errors="replace"), None
