"""The engine's numbers, each defined once: scores, depths and the searches' margins.

Both searches read them from here: the Python search (:mod:`knights.engine.search`) and the compiled one
(:mod:`knights.engine.compiled`), whose functions numba compiles with these values frozen in. numba's disk
cache watches only the compiled module's own file, so the compiled module keys its cache by
:func:`cache_key` (a digest of every value below and of the piece table): change a number here and
the next import compiles afresh (``tests/test_fast_search.py`` checks that the compiled code sees these
values). Piece values live in :mod:`knights.board.pieces`, the project's one table.

Scores inside a search are integer centipawns from the side to move's view; a mate in ``n`` plies
scores ``MATE - n``. Outside a search (a decision's score, the terminal, the web page) they are pawns
from White's side, a mate :data:`MATE_SCORE`.

>>> EVAL_LIMIT < MATE_SCORE < MATE_BOUND / 100
True
"""

from __future__ import annotations

import hashlib

from knights.board.pieces import CENTIPAWNS

# -- scores ---------------------------------------------------------------------------------------------
INF = 1_000_000
"""Centipawns beyond any score: the searches' open window."""
MATE = 100_000
"""Centipawns of a mate on the board; a mate in ``n`` plies scores ``MATE - n``."""
MATE_BOUND = MATE - 1_000
"""Scores beyond this are mates."""
MATE_SCORE = 100.0
"""A mate in pawns, White's side, as a decision reports it (positive: White mates): above :data:`EVAL_LIMIT`, so
that no evaluation reads as a mate. (A search's mate, :data:`MATE` centipawns less its plies, reads as this.)"""
EVAL_LIMIT = 99.0
"""Pawns: an evaluator's value (plus the capture bonus) is clipped to this, below a mate."""
DRAW = 0
"""The score of a draw by the rules (stalemate, repetition, fifty moves, too little material): no contempt."""
KING_SEE = 20_000
"""Centipawns a king counts for in the static exchange: more than anything it could win."""

# -- depths -----------------------------------------------------------------------------------------------
UNLIMITED_DEPTH = 64
"""The deepest iteration a bot is asked for when only its clock should stop it (the option's ceiling); 1 is the
one-ply bot."""
MAX_PLY = 128
"""Plies a search line may reach, check extensions and the capture search included: its stacks are this long."""

# -- the searches' margins and reductions (centipawns, plies) -----------------------------------------------------
DELTA = 200
"""Capture search: a capture that cannot raise alpha even with this margin is not tried."""
REVERSE_FUTILITY_MARGIN = 120
"""A node this many centipawns a ply above beta, at most :data:`REVERSE_FUTILITY_DEPTH` plies from the horizon,
returns at once."""
REVERSE_FUTILITY_DEPTH = 3
FUTILITY_MARGIN = 150
"""One ply from the horizon, a quiet move that does not give check is skipped when the static value plus this
cannot raise alpha."""
NULL_MIN_DEPTH = 3
NULL_REDUCTION = 2
"""The null move is searched this many plies shallower (one more from depth :data:`NULL_DEEP_DEPTH`)."""
NULL_DEEP_DEPTH = 7
NULL_DEPTH_STEP = 3
NULL_MARGIN = 200
NULL_MARGIN_PLIES = 3
"""With the reduction adapted (the search's ``null_adaptive`` part), the null move is searched
``NULL_REDUCTION + 1`` plies shallower, one more for every :data:`NULL_DEPTH_STEP` plies of depth and
for every :data:`NULL_MARGIN` centipawns the static value stands above beta (at most
:data:`NULL_MARGIN_PLIES` of these)."""
LMR_MIN_DEPTH = 3
LMR_AFTER = 4
"""Late move reductions: from the fifth legal move on, quiet moves are searched shallower first."""
LMR_BASE = 0.75
LMR_DIVISOR = 2.25
"""The reduction of the ``m``-th legal move at depth ``d``: ``LMR_BASE + ln d * ln m / LMR_DIVISOR`` plies,
rounded down (one ply at depth 3, two or three from depth 8); one less at a principal-variation node, at least
one, and never straight into the capture search."""
SEE_PRUNE_DEPTH = 8
SEE_QUIET_MARGIN = 64
SEE_CAPTURE_MARGIN = 20
"""Static-exchange pruning (the search's ``see_prune`` part): at most :data:`SEE_PRUNE_DEPTH` plies from the horizon,
out of check and after the first move, a move that gives no check is not searched when the static exchange on its
square loses more than :data:`SEE_QUIET_MARGIN` centipawns a ply (a quiet move) or :data:`SEE_CAPTURE_MARGIN` times
the depth squared (a capture)."""
LMP_DEPTH = 3
LMP_BASE = 3
"""Late move pruning: at most :data:`LMP_DEPTH` plies from the horizon, off the principal variation and out of
check, a quiet move that gives no check is not searched once ``LMP_BASE + depth**2`` legal moves have been."""
HISTORY_LIMIT = 16_384
"""The history table's values stay within plus or minus this: a quiet move that cuts off the search moves its value
toward the limit by ``depth**2`` (a quarter of the limit at most), less the nearer it already is, and the quiet moves
tried before it move toward minus the limit as much."""
LMR_HISTORY = 8_192
"""A late move's reduction shrinks by ``value // LMR_HISTORY`` plies, two plies at most either way, ``value`` its
ordering score: its history-table value plus, with the continuation history on, the value after the opponent's last
move. The division floors: any negative value, however small, adds a ply, and a value must reach this much to take
one off (a quiet move that has cut off often is reduced less, down to none)."""
IIR_DEPTH = 4
"""From this depth, a node with no move from an earlier search to try first (none in the transposition table) is
searched one ply shallower."""
MOPUP_FROM = 500
MOPUP_EDGE = 10
MOPUP_CLOSE = 4
"""Mop-up (the search's ``mop_up`` part): a static value of at least :data:`MOPUP_FROM` centipawns either way, where the
side behind has its king alone and the side ahead a rook, a queen or two minor pieces, moves further toward the side
ahead by :data:`MOPUP_EDGE` for each file and rank between the lone king and the centre, and by :data:`MOPUP_CLOSE`
for each file and rank the kings are nearer than fourteen apart: the network's values flatten out there, and without
a slope toward the edge a won ending is shuffled until the fifty-move rule."""
OPENING_MARGIN = 50
"""Centipawns: how far below the best a move may be valued and still be a stochastic opening pick."""


def cache_key() -> str:
    """A digest of every number the compiled search freezes in: this module's and the piece table."""
    values = {name: value for name, value in sorted(globals().items())
              if name.isupper() and isinstance(value, int | float)}
    return hashlib.sha256(repr((values, CENTIPAWNS)).encode()).hexdigest()[:16]
