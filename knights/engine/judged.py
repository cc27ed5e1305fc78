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
(:func:`knights.engine.compiled.quiesce`: every capture the static exchange does not
call losing, in order of the victim, each side free to stand pat on the network's value;
in check every evasion, so a mate is found) and the network judges every position where a
line ends. At the search's first :data:`CHECK_PLIES` plies a side may also play any quiet move
that gives check (:data:`~knights.engine.compiled.CFG_CHECK_PLIES`), as Stockfish's quiescence
does at its first: the bot's opponent, after the bot's move, may fork with check, and the bot
may answer a capture with a check that wins it back, not only what can be taken at once.
Chosen in play, one ply ahead against ``sf-elo:1350`` on the same openings, against captures only and checks at one,
two or three plies (``report/results/one_ply_check_plies.json``); each further ply costs the decision more time.

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
``knights results`` (:func:`knights.lab.results.depth_one.judged_evaluators`), not by
:func:`knights.evaluate.names.load_evaluator`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess
import numpy as np

from knights.board.positions import Positions
from knights.engine import compiled as core
from knights.engine.compiled_arrays import SearchArrays, warm_up
from knights.engine.compiled_board import states_from_arrays, states_from_boards
from knights.engine.constants import INF, MATE_BOUND, MATE_SCORE
from knights.engine.incremental import Net, files_mirrored, load_net
from knights.engine.spec import SEARCH_NETWORK, SPARSE_DEMOCRACY
from knights.evaluate.democracy import ENDING_MEN, mate_rule, trained_on_endings
from knights.evaluate.names import QUIESCE_SUFFIX, SPARSE_NAME, EvaluatorError, canonical_evaluator_name
from knights.learn import registry

if TYPE_CHECKING:
    from knights.evaluate.ensemble import Democracy

CHECK_PLIES = 3
"""At how many of the capture search's first plies a quiet move that gives check is played too (0: captures only)."""
MIRRORS = False
"""Whether ``sparse+quiesce`` also asks each member's mirrored twin (:func:`~knights.engine.incremental.files_mirrored`)
where no side can castle. Off: on the independent sets the twins lowered a single network's quiet-level error but
not the democracy's, whose six members already average much of the same noise away, they double its capture
searches, and they moved the one-ply move's best-move share by less than the noise (measured by hand; not in a
results file)."""
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
    ``mate_pawns``: the engine's :data:`~knights.engine.one_ply.MATE_SCORE` by default, the labels'
    mate value when it is measured against them). ``version``: one of
    :data:`~knights.learn.registry.FAST_NETWORKS`, or a packed :class:`~knights.engine.incremental.Net`
    (the search's own, for its one-ply stage), then called ``name``. One batch of searches at a time (a lock:
    the web page and the UCI engine run in threads)."""

    def __init__(self, version: str | Net, *, name: str | None = None, mate_pawns: float = MATE_SCORE,
                 check_plies: int = CHECK_PLIES) -> None:
        if isinstance(version, Net):
            self.net, self.name = version, name or f"packed network{QUIESCE_SUFFIX}"
        else:
            try:
                network: str | None = canonical_evaluator_name(version)
            except EvaluatorError:
                network = None
            if network not in registry.FAST_NETWORKS:
                raise ValueError(f"{version}{QUIESCE_SUFFIX}: only the compiled sparse networks are judged where the "
                                 f"captures end (EL/v13's shape, e.g. EL/v21); for any other evaluator ask for "
                                 f"{version}+qsearch, which adds the captures' material")
            assert network is not None
            self.net, self.name = load_net(network), name or f"{network}{QUIESCE_SUFFIX}"
        self.core = SearchArrays(self.net, TT_BITS)
        self.core.tables.cfg[core.CFG_CHECK_PLIES] = int(check_plies)
        self.mate_pawns = float(mate_pawns)
        self._lock = threading.Lock()
        warm_up()

    def value(self, board: chess.Board) -> float:
        """The capture search's value of ``board`` from White's side, pawns."""
        return self.judge(board)[0]

    def judge(self, board: chess.Board) -> tuple[float, bool]:
        """:meth:`value`, and whether it is a mate the capture search found."""
        values, mates = self.judge_states(*states_from_boards([board]))
        return float(values[0]), bool(mates[0])

    def judge_states(self, boards: np.ndarray, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The capture search's value of each compiled position
        (:func:`~knights.engine.compiled_board.states_from_boards`,
        :func:`position_states`), pawns from White's side, and whether it is a mate found there: one compiled call
        for them all."""
        boards, states = np.ascontiguousarray(boards, np.int8), np.ascontiguousarray(states, np.int64)
        if boards.ndim != 2 or boards.shape[1] != 64 or states.shape != (len(boards), core.N_STATE):
            raise ValueError(f"judge_states takes boards (N, 64) and states (N, {core.N_STATE}) as board.states_from_"
                             f"boards makes them, not {boards.shape} and {states.shape}")   # numba checks no bounds
        mover = np.zeros(len(boards), np.int64)
        with self._lock:
            core.quiesce_rows(self.core.pos, self.net, self.core.tables, boards, states, -INF, INF, mover)
        mated = np.abs(mover) > MATE_BOUND                # a mate inside the capture search
        pawns = np.where(mated, np.sign(mover) * self.mate_pawns, mover / 100)
        return np.where(states[:, core.SIDE] == 0, pawns, -pawns), mated

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        return self.judge_states(*states_from_boards(boards))[0].astype(np.float32)

    def evaluate(self, positions: Positions) -> np.ndarray:
        return self.judge_states(*position_states(positions))[0].astype(np.float32)


def position_states(positions: Positions) -> tuple[np.ndarray, np.ndarray]:
    """``positions`` as compiled boards and states
    (:func:`~knights.engine.compiled_board.states_from_arrays`), with each
    row's castling rights and en-passant square when they carry them (a data set's rows carry both; the one-ply
    engine's the en-passant square), without building python-chess boards."""
    n = len(positions.white)
    castling = getattr(positions, "castling", None)
    ep = getattr(positions, "ep", None)
    return states_from_arrays(np.asarray(positions.squares), np.asarray(positions.white).astype(bool).tolist(),
                              [0] * n if castling is None else np.asarray(castling).tolist(),
                              [-1] * n if ep is None else np.asarray(ep).tolist())




class JudgedDemocracy:
    """``sparse+quiesce``: the mean of :class:`QuiescenceEvaluator` over the networks of
    :data:`~knights.engine.spec.SPARSE_DEMOCRACY` (equal weights), pawns from White's side; a position of at
    most :data:`ENDING_MEN` men is judged by the members that learned from the endings data alone (``endings``;
    kept for its errors: the quiet-level errors on every independent set fell, most on ``endgames``, where the
    older members err most; in play it was not shown better or worse: 0.754 with the rule and 0.729 without over
    the same 400 openings against ``sf-elo:1350``, ``report/results/one_ply_endings.json``). ``net``: the
    search network's packed weights (:data:`~knights.engine.spec.SEARCH_NETWORK`: a member's own, or loaded
    beside them when it is none), what a search deeper than one ply asked for this evaluator plays with."""

    def __init__(self, members: Sequence[str] = SPARSE_DEMOCRACY, *, mate_pawns: float = MATE_SCORE,
                 check_plies: int = CHECK_PLIES, endings: bool = True, mirrors: bool = MIRRORS) -> None:
        if not members:
            raise ValueError(f"{SPARSE_NAME}{QUIESCE_SUFFIX} needs at least one network")
        self.members = [QuiescenceEvaluator(m, mate_pawns=mate_pawns, check_plies=check_plies) for m in members]
        self.mirrors = [QuiescenceEvaluator(files_mirrored(m.net), name=f"{m.name} mirrored", mate_pawns=mate_pawns,
                                            check_plies=check_plies) for m in self.members] if mirrors else []
        """Each member's :func:`~knights.engine.incremental.files_mirrored` twin (``mirrors``), voting beside it."""
        enders = [i for i, m in enumerate(members) if trained_on_endings(m)] if endings else []
        self.enders = enders if 0 < len(enders) < len(members) else []   # who judges an ending; [] all
        self.name = f"{SPARSE_NAME}{QUIESCE_SUFFIX}"
        by_name = {m.name: m for m in self.members}
        search = by_name.get(f"{SEARCH_NETWORK}{QUIESCE_SUFFIX}")
        self.net = search.net if search is not None else load_net(SEARCH_NETWORK)
        self.mate_pawns = float(mate_pawns)

    def vote(self, values: np.ndarray, mates: np.ndarray, used: np.ndarray | None = None) -> np.ndarray:
        """The mean for each position (a column of ``values``, a member a row) of the members ``used`` there (all
        by default); where one of them found a mate in its capture search (``mates``; the members' stand-pat
        cut-offs decide which lines each searches) and none found one for the other side, that mate, not a mean
        of it and ordinary values."""
        values, mates = np.asarray(values, dtype=np.float64), np.asarray(mates, dtype=bool)
        used = np.ones(values.shape, bool) if used is None else np.asarray(used, dtype=bool)
        mean = np.where(used, values, 0.0).sum(axis=0) / np.maximum(used.sum(axis=0), 1)
        return np.asarray(mate_rule(mean, np.sign(values) * (mates & used), self.mate_pawns), dtype=np.float32)

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        """Every member's value of each board; a board of at most :data:`ENDING_MEN` men is judged only by the
        members trained on the endings (:func:`trained_on_endings`), when some are and some are not."""
        return self.judge_states(*states_from_boards(boards))

    def evaluate(self, positions: Positions) -> np.ndarray:
        return self.judge_states(*position_states(positions))

    def judge_states(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        """:meth:`evaluate_boards` of compiled positions: each member judges the positions it is used on in one
        compiled call, then each mirrored twin those of them without castling rights (where a side may still
        castle, the mirror is another position: there the twin repeats its member's value)."""
        k = len(self.members)
        shape = (k + len(self.mirrors), len(boards))
        values, mates, used = np.zeros(shape), np.zeros(shape, bool), np.ones(shape, bool)
        if self.enders:
            ending = np.count_nonzero(boards, axis=1) <= ENDING_MEN
            others = np.setdiff1d(np.arange(k), self.enders)
            used[np.ix_(others, np.flatnonzero(ending))] = False
            used[k:] = used[:len(self.mirrors)]
        for i, member in enumerate(self.members):
            mine = np.flatnonzero(used[i])
            if len(mine):
                values[i, mine], mates[i, mine] = member.judge_states(boards[mine], states[mine])
        castling = np.asarray(states)[:, core.CASTLE] != 0
        for i, mirror in enumerate(self.mirrors):
            values[k + i], mates[k + i] = values[i], mates[i]
            mine = np.flatnonzero(used[i] & ~castling)
            if len(mine):
                values[k + i, mine], mates[k + i, mine] = mirror.judge_states(boards[mine], states[mine])
        return self.vote(values, mates, used)


# -- the democracy's judged members (knights.evaluate.ensemble) -------------------------------------------------------
_LAST = threading.local()
"""Per thread, the last positions turned into compiled boards and states, and those: the members of a democracy are
asked about the same positions one after another, and turn them into the compiled search's form once."""


class SharedQuiescence(QuiescenceEvaluator):
    """:class:`QuiescenceEvaluator` whose ``evaluate`` reuses the compiled boards and states of the positions the
    previous member of the same thread was asked about (the same object, unchanged)."""

    def evaluate(self, positions: Any) -> np.ndarray:
        key = [np.asarray(getattr(positions, f)) for f in ("squares", "white", "castling", "ep")
               if hasattr(positions, f)]
        last = getattr(_LAST, "value", None)
        if last is None or last[0] is not positions or not all(
                np.array_equal(a, b) for a, b in zip(last[1], key, strict=True)):
            last = _LAST.value = (positions, [k.copy() for k in key], position_states(positions))
        return self.judge_states(*last[2])[0].astype(np.float32)


def judge(version: str, weights: Path | None, mate_pawns: float, name: str) -> QuiescenceEvaluator:
    """A sparse network (a version of :data:`~knights.learn.registry.FAST_NETWORKS`, or a weights file) judged where
    the captures end: the builder :mod:`knights.evaluate.ensemble` (a layer below the compiled search) is given by
    :func:`install_judge`."""
    if weights is None:
        return SharedQuiescence(version, mate_pawns=mate_pawns)
    return SharedQuiescence(load_net(weights), name=name, mate_pawns=mate_pawns)


def install_judge() -> None:
    """Give :mod:`knights.evaluate.ensemble` :func:`judge`, so that its members can be judged where the captures end
    (called where a democracy is built, not at import: the bot need not load scikit-learn)."""
    from knights.evaluate import ensemble

    ensemble.set_judge(judge)


def load_democracy(path: str | Path, *, mate_pawns: float = MATE_SCORE) -> Democracy:
    """The democracy of the manifest ``path`` as the bot would play it (every member's files checked; a mate found
    in a member's capture search reads ``mate_pawns``)."""
    from knights.evaluate import ensemble

    install_judge()
    return ensemble.load_manifest(path, mate_pawns=mate_pawns)
