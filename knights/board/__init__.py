"""Core stage board: a position as arrays (signed squares, bitboards), the one
:class:`~knights.board.positions.Positions` batch type, the table of piece values and the
one game-end rule (:mod:`~knights.board.outcome`).

Every later stage (data, features, learn, evaluate, play) and every application builds
on these; this package imports nothing else from the project.
"""
