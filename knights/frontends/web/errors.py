"""The one error the web API answers with: a status (4xx) and one clear line, which quotes
what the request sent by a short prefix (:func:`quoted`).

>>> RequestError("no game with id 'x'", 404).status
404
>>> quoted("e2e4" * 20)[-3:], len(quoted("e2e4" * 20))
('e2\u2026', 40)
"""

from __future__ import annotations


class RequestError(ValueError):
    """A request the server refuses: ``status`` is the HTTP status (400 unless told),
    the message is what the JSON answer's ``error`` says."""

    def __init__(self, message: str, status: int = 400) -> None:
        if not 400 <= status < 500:
            raise ValueError(f"a refused request answers 4xx, not {status}")
        super().__init__(message)
        self.status = status


def quoted(value: object, width: int = 40) -> str:
    """``repr(value)`` as an answer quotes what a request sent: at most ``width`` characters, an
    ellipsis marking the cut (a body may hold 16 KB of it)."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "\u2026"
