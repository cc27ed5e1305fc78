"""The one error the web API answers with: a status (4xx) and one clear line, which quotes
what the request sent by a short prefix (:func:`knights.common.quoted`).

>>> RequestError("no game with id 'x'", 404).status
404
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
