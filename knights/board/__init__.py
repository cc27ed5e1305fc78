"""Core stage board: a position as arrays (signed squares, bitboards), the one
:class:`~knights.board.positions.Positions` batch type, the table of piece values and the
one game-end rule (:mod:`~knights.board.outcome`), and every child of a position at once
(:mod:`~knights.board.children`: the one-ply engine judges them, EL/v26's training ranks them).

Every later stage (data, features, learn, evaluate, play) and every application builds
on these; this package imports nothing else from the project.
"""
