"""Stage 0, the board: a position as arrays (signed squares, bitboards), the one
:class:`~knights.board.positions.Positions` batch type, and the table of piece values.

Every later stage (data, features, learn, evaluate, play, arena, bench) builds on
these; this package imports nothing else from the project.
"""
