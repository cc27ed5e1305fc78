"""The book: twenty balanced opening lines that every pairing walks through.

An :class:`Opening` is a name and a few moves in SAN from the standard start; its
:meth:`~Opening.board` is where an arena game begins::

    >>> from knights.lab.arena.openings import OPENINGS
    >>> OPENINGS[0].name, len(OPENINGS[0].board().move_stack)
    ('Ruy Lopez', 6)

A pairing of ``2k`` games uses the first ``k`` openings, each twice with the colours
swapped (:func:`knights.lab.arena.matches.schedule`). The book moves are recorded in the
game (the PGN header ``OpeningPlies`` says how many) and skipped by the move-quality
judge (:mod:`knights.lab.arena.quality`).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


@dataclass(frozen=True)
class Opening:
    """A named line of moves (SAN) from the standard start."""

    name: str
    moves: tuple[str, ...]

    def board(self) -> chess.Board:
        """The position after the line, with its moves on the move stack."""
        board = chess.Board()
        for san in self.moves:
            board.push_san(san)
        return board


def _line(name: str, moves: str) -> Opening:
    return Opening(name, tuple(moves.split()))


OPENINGS: tuple[Opening, ...] = (
    _line("Ruy Lopez", "e4 e5 Nf3 Nc6 Bb5 a6"),
    _line("Queen's Gambit Declined", "d4 d5 c4 e6 Nc3 Nf6"),
    _line("Sicilian, Open", "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6"),
    _line("King's Indian", "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6"),
    _line("Italian Game", "e4 e5 Nf3 Nc6 Bc4 Bc5"),
    _line("Slav", "d4 d5 c4 c6 Nf3 Nf6"),
    _line("French", "e4 e6 d4 d5 Nc3 Nf6"),
    _line("Nimzo-Indian", "d4 Nf6 c4 e6 Nc3 Bb4"),
    _line("Caro-Kann", "e4 c6 d4 d5 Nc3 dxe4 Nxe4"),
    _line("English, Four Knights", "c4 e5 Nc3 Nf6 Nf3 Nc6"),
    _line("Scotch", "e4 e5 Nf3 Nc6 d4 exd4 Nxd4"),
    _line("Queen's Indian", "d4 Nf6 c4 e6 Nf3 b6"),
    _line("Sicilian, Taimanov", "e4 c5 Nf3 e6 d4 cxd4 Nxd4 Nc6"),
    _line("Gruenfeld", "d4 Nf6 c4 g6 Nc3 d5"),
    _line("Petrov", "e4 e5 Nf3 Nf6 Nxe5 d6 Nf3 Nxe4"),
    _line("Queen's Gambit Accepted", "d4 d5 c4 dxc4 Nf3 Nf6"),
    _line("Pirc", "e4 d6 d4 Nf6 Nc3 g6"),
    _line("London System", "d4 d5 Bf4 Nf6 e3 e6"),
    _line("Scandinavian", "e4 d5 exd5 Qxd5 Nc3 Qa5"),
    _line("Reti", "Nf3 d5 g3 Nf6 Bg2 e6"),
)
"""Twenty balanced openings (2-4 moves each), most common first."""
