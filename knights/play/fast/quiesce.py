"""A compiled network judged where the captures end: ``EL/v21+quiesce``.

The one-ply bot asks its evaluator about each position its moves lead to, where the
opponent is to move and may simply take what was left hanging. The ``+qsearch`` suffix
(:mod:`knights.evaluate.qsearch`) answers that for any evaluator by adding the material the
best capture sequence wins to the evaluator's value of the position *as it stands*; it
never asks the evaluator about the positions the captures lead to, because judging them
with the democracy played worse (its networks learned from every row, and after an
exchange they meet positions unlike their data).

The sparse networks of :data:`~knights.learn.registry.FAST_NETWORKS` learned from quiet
positions only, and the positions where a capture search stops are quiet. So here the
captures are played out by the compiled search's own quiescence
(:func:`knights.play.fast.compiled.quiesce`: every capture the static exchange does not
call losing, in order of the victim, each side free to stand pat on the network's value;
in check every evasion, so a mate is found) and the network judges every position where a
line ends. At the search's first :data:`CHECK_PLIES` plies a side may also play any quiet move
that gives check (:data:`~knights.play.fast.compiled.CFG_CHECK_PLIES`), as Stockfish's quiescence
does at its first: the bot's opponent, after the bot's move, may fork with check, and the bot
may answer a capture with a check that wins it back, not only what can be taken at once.
Chosen in play (``report/results/one_ply_check_plies.json``): one ply ahead against
``sf-elo:1350`` on the same 400 openings ``sparse+quiesce`` scored 0.635 with captures only and
0.703 / 0.703 / 0.729 with the checks at 1 / 2 / 3 plies; on the independent ``games`` set's
1,000 move-quality positions its move was Stockfish's best on 40.0% / 42.1% / 43.8% / 44.5%
(mean loss 50 / 44 / 39 / 37 centipawns). Each further ply costs time: about 11, 18, 30 and
47 ms a middlegame decision on a loaded machine.

With ``check_plies=0`` this is what the compiled search's first iteration does after each
move: the one-ply choice over these values and its value agree with that iteration's best
move and value (tested; the iteration also scores repetitions and the fifty-move rule as
draws, which the one-ply engine does itself before it asks an evaluator).

The one-ply engine hands its evaluator the en-passant square each move leaves
(:class:`~knights.board.positions.PlayedPositions`), so after a double pawn push beside an enemy
pawn the capture en passant is searched; it hands no castling rights, so a castling move that would
give check is not among the first plies' checks. Rows of a data set (:class:`~knights.data.chunks.Encoded`)
carry both, and are searched with them.

    >>> import chess
    >>> ev = QuiescenceEvaluator("EL/v21")
    >>> ev.evaluate_boards([chess.Board("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1"),
    ...                     chess.Board("r1bqkbnr/1pp3pp/p1p2p2/4N3/3PP3/8/PPP2PPP/RNBQK2R b KQkq - 0 6")])
    array([ 7.07, -0.52], dtype=float32)

Nxg5 wins the queen, and the network judges White's position a queen up; fxe5 wins the knight
that took on e5, but then Qh5+ (a check at the second ply) wins the pawn on e5 back with check
(with captures only, ``check_plies=0``: -2.93). (``EL/v21+qsearch`` reads 10.93 and -1.13: its network's value of each
position as it stands, plus 9 and minus 3 pawns.)

Only the play side can build it (the compiled search lives there), so the name is read here
(:func:`split_quiesce`), by the arena's player specs (``ours:EL/v21+quiesce``) and by
``knights results`` (:func:`judged_evaluators`), not by :func:`knights.evaluate.names.load_evaluator`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import chess
import numpy as np

from knights.board.placements import PAWN_COUNTS, PIECE_COUNTS
from knights.board.positions import Positions
from knights.data.csslab import MATE_PAWNS
from knights.learn import registry
from knights.learn.registry import QUIESCE_SUFFIX, SEARCH_NETWORK, SPARSE_DEMOCRACY, SPARSE_NAME
from knights.play.engine import MATE_SCORE
from knights.play.fast import compiled as core
from knights.play.fast.arrays import SearchArrays, warm_up
from knights.play.fast.networks import fast_network_name
from knights.play.incremental import Net, load_net
from knights.play.search import INF, MATE_BOUND

CHECK_PLIES = 3
"""At how many of the capture search's first plies a quiet move that gives check is played too (0: captures only)."""
ENDINGS_DATA = "data/endings"
"""The endings' folder as a version's library names it."""
TT_BITS = 10
"""The transposition table's size (2**TT_BITS slots): the capture search does not use it."""


def split_quiesce(name: str) -> str | None:
    """The network that ``name`` asks to judge at the end of the captures (``"EL/v21+quiesce"``,
    any case, -> ``"EL/v21"``), ``None`` when ``name`` has no ``+quiesce`` suffix.

    >>> split_quiesce("EL/v21+Quiesce"), split_quiesce("democracy+qsearch")
    ('EL/v21', None)
    """
    if not name.lower().endswith(QUIESCE_SUFFIX):
        return None
    return name[: -len(QUIESCE_SUFFIX)]


class QuiescenceEvaluator:
    """The compiled capture search's value of each position, the network judging where each
    line of captures ends (pawns, White's side; a mate found inside the capture search reads
    ``mate_pawns``: the engine's :data:`~knights.play.engine.MATE_SCORE` by default, the labels'
    mate value when it is measured against them). ``version``: one of
    :data:`~knights.learn.registry.FAST_NETWORKS`, or a packed :class:`~knights.play.incremental.Net`
    (the search's own, for its one-ply stage), then called ``name``. One search at a time (a lock:
    the web page and the UCI engine run in threads)."""

    def __init__(self, version: str | Net, *, name: str | None = None, mate_pawns: float = MATE_SCORE,
                 check_plies: int = CHECK_PLIES) -> None:
        if isinstance(version, Net):
            self.net, self.name = version, name or f"packed network{QUIESCE_SUFFIX}"
        else:
            network = fast_network_name(version)
            if network is None:
                raise ValueError(f"{version}{QUIESCE_SUFFIX}: only the compiled sparse networks are judged where the "
                                 f"captures end (EL/v13's shape, e.g. EL/v21); for any other evaluator ask for "
                                 f"{version}+qsearch, which adds the captures' material")
            self.net, self.name = load_net(network), name or f"{network}{QUIESCE_SUFFIX}"
        self.core = SearchArrays(self.net, TT_BITS)
        self.core.tables.cfg[core.CFG_CHECK_PLIES] = int(check_plies)
        self.mate_pawns = float(mate_pawns)
        self._lock = threading.Lock()
        warm_up()

    def value(self, board: chess.Board) -> float:
        """The capture search's value of ``board`` from White's side, pawns."""
        return self.judge(board)[0]

    def judge(self, board: chess.Board, like: QuiescenceEvaluator | None = None) -> tuple[float, bool]:
        """:meth:`value`, and whether it is a mate the capture search found. ``like``: another evaluator whose last
        judgement was of this position (it is copied from there instead of read from ``board`` again)."""
        with self._lock:
            if like is None:
                self.core.load(board, root=False)
            else:
                self.core.load_like(like.core)
            return self._search()

    def judge_row(self, squares: np.ndarray, white: bool, castling: int = 0, ep: int = -1,
                  like: QuiescenceEvaluator | None = None) -> tuple[float, bool]:
        """:meth:`judge` of a position as a data set's arrays hold it (:func:`position_rows`), read without
        building a python-chess board."""
        with self._lock:
            if like is None:
                self.core.load_arrays(squares, white, castling, ep)
            else:
                self.core.load_like(like.core)
            return self._search()

    def _search(self) -> tuple[float, bool]:
        """The capture search from the loaded position: (pawns from White's side, a mate found)."""
        fast, t = self.core, self.core.tables
        t.stats[:] = 0
        t.ctl[core.C_STOP] = 0
        t.ctl[core.C_NODE_LIMIT] = 0
        mover = int(core.quiesce(fast.pos, self.net, t, -INF, INF, 0))
        mated = abs(mover) > MATE_BOUND                 # a mate inside the capture search
        pawns = (self.mate_pawns if mover > 0 else -self.mate_pawns) if mated else mover / 100
        return (pawns if fast.pos.st[core.SIDE] == 0 else -pawns), mated

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        return np.array([self.value(b) for b in boards], dtype=np.float32)

    def evaluate(self, positions: Positions) -> np.ndarray:
        return np.array([self.judge_row(*row)[0] for row in position_rows(positions)], dtype=np.float32)


def position_rows(positions: Positions) -> list[tuple[np.ndarray, bool, int, int]]:
    """``positions`` as (squares, white to move, castling rights, en-passant square), each row's rights and square
    when they carry them (a data set's rows carry both; the one-ply engine's the en-passant square)."""
    n = len(positions.white)
    castling = getattr(positions, "castling", None)
    ep = getattr(positions, "ep", None)
    castling = [0] * n if castling is None else np.asarray(castling).tolist()
    ep = [-1] * n if ep is None else np.asarray(ep).tolist()
    white = np.asarray(positions.white).astype(bool).tolist()
    squares = np.asarray(positions.squares)
    return [(squares[i], white[i], castling[i], ep[i]) for i in range(n)]


ENDING_MEN = 2 * (1 + (len(PIECE_COUNTS) - 1) + (len(PAWN_COUNTS) - 1))
"""The most men an ending of ``make endings-data`` starts with (kings, and at most 3 pieces and 5 pawns a side:
:func:`knights.board.placements.random_material`): where :class:`JudgedDemocracy`'s networks that learned from
those endings judge alone."""


def trained_on_endings(version: str) -> bool:
    """Whether ``version`` learned from the endings data (``data/endings`` among its library's ``MORE``)."""
    return ENDINGS_DATA in getattr(registry.get(version).library, "MORE", ())


class JudgedDemocracy:
    """``sparse+quiesce``: the mean of :class:`QuiescenceEvaluator` over the networks of
    :data:`~knights.learn.registry.SPARSE_DEMOCRACY` (equal weights), pawns from White's side; a position of at
    most :data:`ENDING_MEN` men is judged by the members that learned from the endings data alone (``endings``;
    kept for its errors: the quiet-level errors on every independent set fell, most on ``endgames``, where the
    older members err most; in play it was not shown better or worse: 0.754 with the rule and 0.729 without over
    the same 400 openings against ``sf-elo:1350``, ``report/results/one_ply_endings.json``). ``net``: the
    search network's packed weights (:data:`~knights.learn.registry.SEARCH_NETWORK`: a member's own, or loaded
    beside them when it is none), what a search deeper than one ply asked for this evaluator plays with."""

    def __init__(self, members: Sequence[str] = SPARSE_DEMOCRACY, *, mate_pawns: float = MATE_SCORE,
                 check_plies: int = CHECK_PLIES, endings: bool = True) -> None:
        if not members:
            raise ValueError(f"{SPARSE_NAME}{QUIESCE_SUFFIX} needs at least one network")
        self.members = [QuiescenceEvaluator(m, mate_pawns=mate_pawns, check_plies=check_plies) for m in members]
        enders = [i for i, m in enumerate(members) if trained_on_endings(m)] if endings else []
        self.enders = enders if 0 < len(enders) < len(members) else []   # who judges an ending; [] all
        self.name = f"{SPARSE_NAME}{QUIESCE_SUFFIX}"
        by_name = {m.name: m for m in self.members}
        search = by_name.get(f"{SEARCH_NETWORK}{QUIESCE_SUFFIX}")
        self.net = search.net if search is not None else load_net(SEARCH_NETWORK)
        self.mate_pawns = float(mate_pawns)
        self._lock = threading.Lock()

    def vote(self, values: np.ndarray, mates: np.ndarray, used: np.ndarray | None = None) -> np.ndarray:
        """The mean for each position (a column of ``values``, a member a row) of the members ``used`` there (all
        by default); where one of them found a mate in its capture search (``mates``; the members' stand-pat
        cut-offs decide which lines each searches) and none found one for the other side, that mate, not a mean
        of it and ordinary values."""
        values, mates = np.asarray(values, dtype=np.float64), np.asarray(mates, dtype=bool)
        used = np.ones(values.shape, bool) if used is None else np.asarray(used, dtype=bool)
        mates = mates & used
        wins, losses = (mates & (values > 0)).any(axis=0), (mates & (values < 0)).any(axis=0)
        mean = np.where(used, values, 0.0).sum(axis=0) / np.maximum(used.sum(axis=0), 1)
        out = np.where(wins & ~losses, self.mate_pawns, np.where(losses & ~wins, -self.mate_pawns, mean))
        return np.asarray(out, dtype=np.float32)

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        """Every member's value of each board; a board of at most :data:`ENDING_MEN` men is judged only by the
        members trained on the endings (:func:`trained_on_endings`), when some are and some are not."""
        return self._votes([chess.popcount(b.occupied) for b in boards],
                           lambda member, j, like: member.judge(boards[j], like))

    def evaluate(self, positions: Positions) -> np.ndarray:
        rows = position_rows(positions)
        return self._votes([int(np.count_nonzero(row[0])) for row in rows],
                           lambda member, j, like: member.judge_row(*rows[j], like=like))

    def _votes(self, men: Sequence[int], judge: Callable[[QuiescenceEvaluator, int, QuiescenceEvaluator | None],
                                                         tuple[float, bool]]) -> np.ndarray:
        """:meth:`vote` over ``judge(member, j, like)`` of position ``j`` (``men`` on its board); each position is
        read once, by its first member, and copied from it by the others (``like``)."""
        shape = (len(self.members), len(men))
        values, mates, used = np.zeros(shape), np.zeros(shape, bool), np.ones(shape, bool)
        if self.enders:
            ending = np.array(men, int) <= ENDING_MEN
            others = np.setdiff1d(np.arange(len(self.members)), self.enders)
            used[np.ix_(others, np.flatnonzero(ending))] = False
        with self._lock:
            for j in range(len(men)):
                first = None
                for i, member in enumerate(self.members):
                    if used[i, j]:
                        values[i, j], mates[i, j] = judge(member, j, first)
                        first = first or member
        return self.vote(values, mates, used)


def judged_evaluators() -> list[tuple[str, QuiescenceEvaluator | JudgedDemocracy]]:
    """What ``knights results`` measures beside the evaluators of :mod:`knights.evaluate`, as (kind, evaluator):
    the newest trained network of :data:`~knights.learn.registry.FAST_NETWORKS` judged where the captures end,
    and ``sparse+quiesce`` when its members are trained; a mate read as the labels read one."""
    trained = [name for name in registry.FAST_NETWORKS if registry.get(name).is_trained()]
    judged: list[tuple[str, QuiescenceEvaluator | JudgedDemocracy]] = []
    if trained:
        judged.append(("network", QuiescenceEvaluator(trained[-1], mate_pawns=MATE_PAWNS)))
    if f"{SPARSE_NAME}{QUIESCE_SUFFIX}" in registry.judged_names(trained):   # the one rule of when it is offered
        judged.append(("democracy", JudgedDemocracy(mate_pawns=MATE_PAWNS)))
    return judged
