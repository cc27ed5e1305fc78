"""The democracy as one scikit-learn ensemble: members with one ``predict``, weights, one ``fit``.

Every learner the project has (a network judged statically or where the captures end, a classical learner, counting
material) is a :class:`Member`: a scikit-learn regressor whose ``predict(X)`` answers in pawns from White's side (or,
``space="win_probability"``, the win probability those pawns stand for). A member is trained elsewhere, so its
``fit`` only loads it, and the ensemble wraps it in :class:`sklearn.frozen.FrozenEstimator`, which nothing refits.

``X`` is the positions themselves, one row of :data:`POSITION_COLUMNS` small integers a position (:func:`encode`:
the 64 signed squares, a8 first, White positive, then the side to move, whether it is in check, the castling rights
K=1 Q=2 k=4 q=8 and the en-passant square, -1 for none; :func:`decode` gives the
:class:`~knights.data.chunks.Encoded` rows back). It is everything any member reads, and each member turns it into
its own inputs (a network's sparse features, the capture search's board, a tree's positional features), so one
array serves them all, and a cross-validation splits it by rows like any other.

:class:`Democracy` is the ensemble. What it averages, and how its weights come, are parameters:

* ``weighting="equal"``: :class:`sklearn.ensemble.VotingRegressor` over the frozen members, equal weights;
* ``weighting="fitted"``: :class:`sklearn.ensemble.StackingRegressor` whose meta-learner is :class:`SimplexWeights`,
  non-negative weights summing to one that minimise the absolute error in the averaging space (with
  ``space="win_probability"``: the win-probability error itself), found exactly by a linear programme; the
  fitted weights then vote in a :class:`~sklearn.ensemble.VotingRegressor`, members of weight 0 left out (they
  would cost their time for nothing);
* ``weighting="stacked"``: :class:`~sklearn.ensemble.StackingRegressor` with a free linear meta-learner
  (``meta``, by default :class:`~sklearn.linear_model.RidgeCV`: any weights, an intercept).

Members are frozen and never saw the rows the weights are fitted on, so the stacking uses their predictions on those
rows as they are (``cv="prefit"``); the ensemble's own figures on those rows come from a cross-validation of the
whole :class:`Democracy` (the study does it, :func:`sklearn.model_selection.cross_val_predict`).

``space``: ``"win_probability"`` averages each member's verdict as a win probability and turns the mean back into
pawns (a member's +9 and another's +6 agree that the game is won), ``"pawns"`` averages pawns; both through
:class:`sklearn.compose.TransformedTargetRegressor`, which fits the weights against the target in the same space.

Two rules of the democracies this one replaces are parameters too: ``gate="quiet"`` fits one set of weights for the
quiet positions and one for the rest (the old ``gated`` blend, :func:`knights.features.attacks.quiet`);
``gate="endings"`` lets only the members that learned from the endings data judge a position of at most
:data:`ENDING_MEN` men (``sparse+quiesce``'s rule). ``mate_rule``: where a member judged
where the captures end found a mate and none found one for the other side, that mate, not a mean (its rule too).

A democracy is an :class:`~knights.evaluate.base.Evaluator` (``evaluate(positions)`` -> pawns, ``name``), so the
one-ply bot plays it, and it is saved as a JSON manifest alone (:func:`save_manifest`: the members, each with the
SHA-256 of its files, the weights or the meta-learner's coefficients) and loaded back without fitting
(:func:`load_manifest`), every member's files checked; networks load with ``weights_only=True`` and learners as plain
arrays (:mod:`knights.learn.store`), so nothing loaded runs code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import StackingRegressor, VotingRegressor
from sklearn.frozen import FrozenEstimator

from knights.common import write_json
from knights.data.chunks import Encoded
from knights.data.csslab import MATE_PAWNS
from knights.evaluate.democracy import ENDING_MEN, mate_rule, simplex_weights
from knights.evaluate.democracy import SPACES as SPACES
from knights.evaluate.democracy import from_space as _from_space
from knights.evaluate.democracy import to_space as _to_space
from knights.evaluate.democracy import trained_on_endings as _endings_version
from knights.evaluate.names import QSEARCH_SUFFIX, QUIESCE_SUFFIX
from knights.learn import registry

POSITION_COLUMNS = 68
"""Columns of ``X``: 64 signed squares, white to move, in check, castling rights, en-passant square."""
WEIGHTINGS = ("equal", "fitted", "stacked")
GATES = (None, "quiet", "endings")
MANIFEST_FORMAT = "knights-democracy"
MANIFEST_VERSION = 2
"""Version 1 is the old manifest (``ensemble/models/democracy.json``, :mod:`knights.evaluate.democracy`)."""
QUIESCE = QUIESCE_SUFFIX
QSEARCH = QSEARCH_SUFFIX


# ---------------------------------------------------------------------------- positions as X
def encode(positions: Any) -> np.ndarray:
    """``(N, POSITION_COLUMNS)`` int16 rows of ``positions`` (any :class:`~knights.board.positions.Positions`; rows
    without castling rights or an en-passant square get 0 and -1)."""
    squares = np.asarray(positions.squares, dtype=np.int16).reshape(-1, 64)
    n = len(squares)
    castling = getattr(positions, "castling", None)
    ep = getattr(positions, "ep", None)
    cols = [np.asarray(positions.white, np.int16).reshape(n, 1), np.asarray(positions.check, np.int16).reshape(n, 1),
            (np.zeros(n, np.int16) if castling is None else np.asarray(castling, np.int16)).reshape(n, 1),
            (np.full(n, -1, np.int16) if ep is None else np.asarray(ep, np.int16)).reshape(n, 1)]
    return np.ascontiguousarray(np.concatenate([squares, *cols], axis=1))


def as_rows(X: Any) -> np.ndarray:
    """``X`` as the int16 rows :func:`encode` makes (refusing another width or values out of range)."""
    rows = np.asarray(X)
    if rows.ndim != 2 or rows.shape[1] != POSITION_COLUMNS:
        raise ValueError(f"X must be (N, {POSITION_COLUMNS}) position rows (knights.evaluate.ensemble.encode), "
                         f"not {rows.shape}")
    out = np.ascontiguousarray(rows, dtype=np.int16)
    if rows.dtype.kind == "f" and not np.array_equal(out, rows):
        raise ValueError("X holds non-integer values: position rows are small integers")
    if len(out) and (np.abs(out[:, :64]).max() > 6 or out[:, 64:66].min() < 0 or out[:, 64:66].max() > 1):
        raise ValueError("X holds values that are no position (piece codes -6..6, flags 0/1)")
    return out


def decode(X: Any) -> Encoded:
    """The :class:`~knights.data.chunks.Encoded` positions of rows ``X`` (no labels: target, move, capture 0)."""
    rows = as_rows(X)
    n = len(rows)
    return Encoded(rows[:, :64].astype(np.int8), rows[:, 64].astype(np.int8), rows[:, 65].astype(np.int8),
                   np.zeros(n, np.int8), np.zeros(n, np.float32), np.zeros(n, np.int16),
                   rows[:, 66].astype(np.int8), rows[:, 67].astype(np.int8))


def to_space(pawns: Any, space: str) -> np.ndarray:
    """Pawns as the values a democracy of ``space`` averages (:func:`knights.evaluate.democracy.to_space`)."""
    return np.asarray(_to_space(np.asarray(pawns, dtype=np.float64), space), dtype=np.float64)


def from_space(values: Any, space: str) -> np.ndarray:
    """The inverse of :func:`to_space`; a win probability's pawns are clipped to +-MAX_PAWNS (10)."""
    return np.asarray(_from_space(np.asarray(values, dtype=np.float64), space), dtype=np.float64)


def _wp(y: np.ndarray) -> np.ndarray:
    return to_space(y, "win_probability")


def _wp_inverse(v: np.ndarray) -> np.ndarray:
    return from_space(v, "win_probability")


def _same(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


# ---------------------------------------------------------------------------- members
def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_EVALUATORS: dict[tuple[str, bool, float], Any] = {}
"""Evaluators already built, shared by every member of the same source (a compiled network packs once)."""
_HASH = np.random.default_rng(20261201).integers(1, 2**63, size=POSITION_COLUMNS, dtype=np.uint64) | np.uint64(1)


class RowMemory:
    """A member's values of the rows it has judged, looked up a whole array at a time: each row hashed to 64 bits
    (odd multipliers per column, summed with wrap-around), found through a :class:`pandas.Index`, and checked
    against the row itself, so a collision only costs a recomputation."""

    def __init__(self) -> None:
        self.rows = np.zeros((0, POSITION_COLUMNS), np.int16)
        self.values = np.zeros(0)
        self._index: Any = None

    @staticmethod
    def hashes(rows: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            mixed = (rows.astype(np.int64) + 8).astype(np.uint64) * _HASH[None, :]
            return np.asarray(mixed.sum(axis=1, dtype=np.uint64))

    def find(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The remembered value of each row (NaN where none) and which rows were found."""
        if self._index is None or not len(rows):
            return np.full(len(rows), np.nan), np.zeros(len(rows), bool)
        at = self._index.get_indexer(self.hashes(rows))
        found = at >= 0
        found[found] = (self.rows[at[found]] == rows[found]).all(axis=1)
        return np.where(found, self.values[np.where(found, at, 0)], np.nan), found

    def add(self, rows: np.ndarray, values: np.ndarray) -> None:
        import pandas as pd

        keys = self.hashes(rows)
        _, first = np.unique(keys, return_index=True)
        known = np.zeros(len(keys), bool) if self._index is None else self._index.get_indexer(keys) >= 0
        new = np.zeros(len(keys), bool)
        new[first] = True
        new &= ~known                                  # a colliding or repeated row is not stored twice
        if not new.any():
            return
        self.rows = np.concatenate([self.rows, rows[new]])
        self.values = np.concatenate([self.values, np.asarray(values, dtype=np.float64)[new]])
        self._index = pd.Index(self.hashes(self.rows))


_MEMORY: dict[str, RowMemory] = {}
"""Each member's remembered values (:class:`Member`'s ``memory``)."""


def _source_kind(source: str) -> str:
    if source == "material":
        return "material"
    if source.startswith(("EL/", "el/")):
        return "network"
    if source.endswith(".pt"):
        return "network file"
    if source.endswith(".json"):
        return "learner"
    raise ValueError(f"unknown member source {source!r}: an EL version (EL/v24), 'material', a sparse network's "
                     "weights file (.pt) or a learner's sidecar (.json)")


def _is_sparse(source: str) -> bool:
    kind = _source_kind(source)
    return kind == "network file" or (kind == "network" and registry.get(source).name in registry.FAST_NETWORKS)


def member_files(source: str) -> list[Path]:
    """The files a member's values come from (their checksums go into a manifest)."""
    kind = _source_kind(source)
    if kind == "material":
        return []
    if kind == "network":
        return [registry.get(source).weights()]
    path = registry.repo_path(source)
    if kind == "network file":
        return [path]
    from knights.learn import store

    doc = store.read_sidecar(path)
    files = [path, path.with_name(doc["file"])]
    base = (doc.get("meta") or {}).get("residual_of")
    return files + (member_files(base) if base else [])


class BoostedEvaluator:
    """A boosted-trees learner (:mod:`knights.learn.learners.boosted`) on the positional features
    (:mod:`knights.features.positional`) behind the evaluator interface. Its sidecar's meta says what it learned:
    ``target`` ``"win_probability"`` (answered through :func:`from_space`) or ``"pawns"``, and ``residual_of``: a
    network whose static value it corrects (its win probability plus the trees' answer)."""

    def __init__(self, path: str | Path, name: str) -> None:
        from knights.learn.learners.boosted import load_boosted

        self.model, self.meta = load_boosted(path)
        self.name = name
        base = self.meta.get("residual_of")
        self.base = _static_evaluator(str(base)) if base else None

    def evaluate(self, positions: Any) -> np.ndarray:
        from knights.features.positional import positional_features

        X = positional_features(positions.squares, positions.white, positions.check,
                                getattr(positions, "castling", np.zeros(len(positions.white), np.int8)))
        target = self.meta.get("target", "win_probability")
        if self.base is None:
            return from_space(self.model.predict(X), target).astype(np.float32)
        base = to_space(np.asarray(self.base.evaluate(positions), dtype=np.float64), target)
        X = np.concatenate([X, base[:, None].astype(np.float32)], axis=1)    # the trees also read the base's value
        return from_space(base + self.model.predict(X), target).astype(np.float32)


def _static_evaluator(source: str) -> Any:
    kind = _source_kind(source)
    if kind == "material":
        from knights.evaluate.base import MaterialEvaluator

        return MaterialEvaluator()
    if kind == "network":
        from knights.evaluate.base import network_evaluator

        return network_evaluator(registry.get(source).name)
    path = registry.repo_path(source)
    if kind == "network file":
        from knights.evaluate.base import NetworkEvaluator
        from knights.learn import modelfile

        design = registry.get(FILE_DESIGN)
        model = modelfile.load_into(design.build(), path).eval()    # checksum and shapes checked, no code run
        return NetworkEvaluator(model, design.library.INPUTS, source)
    from knights.learn import store

    doc = store.read_sidecar(path)
    if doc["kind"] == "boosted_trees":
        return BoostedEvaluator(path, source)
    from knights.evaluate.learner import LearnerEvaluator
    from knights.learn.learners import load_model

    return LearnerEvaluator(source, load_model(path))


FILE_DESIGN = "EL/v24"
"""The version whose network a member's weights file (``.pt``) is built as (the study's bag: EL/v24's design)."""
Judge = Callable[[str, Path | None, float, str], Any]
"""Builds a sparse network judged where the captures end: (version name or "", weights file or None,
mate_pawns, name) -> evaluator."""
_JUDGE: list[Judge] = []


def set_judge(judge: Judge) -> None:
    """Install what builds a sparse network judged where the captures end. The compiled capture search lives in the
    play layer, after this one: :mod:`knights.engine.judged` installs it (importing it is enough)."""
    _JUDGE[:] = [judge]


def build_evaluator(source: str, judged: bool, mate_pawns: float = MATE_PAWNS) -> Any:
    """The evaluator a member asks: ``source`` statically, or (``judged``) where the captures end: a sparse network
    by the compiled capture search with the network at every leaf (the play layer's
    ``QuiescenceEvaluator``, installed by :func:`set_judge`; a mate found there reads ``mate_pawns``), any other
    by its value plus the captures' material (:class:`~knights.evaluate.qsearch.CaptureSearchEvaluator`). Built
    once per process and source."""
    where = source if _source_kind(source) in ("material", "network") else str(registry.repo_path(source).resolve())
    key = (where, bool(judged), float(mate_pawns))
    if key not in _EVALUATORS:
        if not judged:
            ev = _static_evaluator(source)
        elif _is_sparse(source):
            if not _JUDGE:
                raise RuntimeError(f"{source}{QUIESCE}: a sparse network judged where the captures end is built by "
                                   "the compiled search; call knights.engine.judged.install_judge() first")
            network = _source_kind(source) == "network"
            ev = _JUDGE[0](registry.get(source).name if network else "", None if network else
                           registry.repo_path(source), float(mate_pawns), member_name(source, True))
        else:
            from knights.evaluate.qsearch import CaptureSearchEvaluator

            ev = CaptureSearchEvaluator(_static_evaluator(source))
        _EVALUATORS[key] = ev
    return _EVALUATORS[key]


def member_name(source: str, judged: bool, name: str | None = None) -> str:
    """``EL/v24``, ``EL/v24+quiesce`` (a sparse network judged), ``EL/v10+qsearch`` (any other judged); ``name``
    (or a file's path) in place of the version."""
    base = name or (registry.get(source).name if _source_kind(source) == "network" else source)
    if not judged:
        return base
    return str(base) + (QUIESCE if _is_sparse(source) else QSEARCH)


def trained_on_endings(source: str) -> bool:
    """Whether the member learned from the endings data (the ``endings`` gate's judges): an EL version that did
    (:func:`knights.evaluate.democracy.trained_on_endings`); nothing else here did."""
    return _source_kind(source) == "network" and _endings_version(registry.get(source).name)


class Member(RegressorMixin, BaseEstimator):  # type: ignore[misc]  # scikit-learn has no type stubs
    """A pre-trained evaluator as a scikit-learn regressor.

    ``source``: an EL version (``"EL/v24"``), ``"material"``, a sparse network's weights file or a learner's sidecar
    (repository-relative paths); ``judged``: asked where the captures end (:func:`build_evaluator`); ``space``: what
    ``predict`` answers in (:data:`SPACES`); ``mate_pawns``: what a mate found in the capture search reads (the
    labels' 10 when measured against them, :data:`~knights.engine.constants.MATE_SCORE` in play); ``memory``: a key
    under
    which the member remembers the value of every row it judged (the study asks each member about the same rows
    under many ensembles; ``None``: nothing kept beyond one ensemble's call); ``name``: how tables name it.

    ``fit`` only loads the evaluator (``X`` and ``y`` are ignored): wrap the fitted member in
    :class:`~sklearn.frozen.FrozenEstimator` so that no ensemble refits it."""

    def __init__(self, source: str = "EL/v24", judged: bool = False, space: str = "pawns",
                 mate_pawns: float = MATE_PAWNS, memory: str | None = None, name: str | None = None) -> None:
        self.source = source
        self.judged = judged
        self.space = space
        self.mate_pawns = mate_pawns
        self.memory = memory
        self.name = name

    def fit(self, X: Any = None, y: Any = None) -> Member:
        to_space(np.zeros(1), self.space)
        self.evaluator_ = build_evaluator(self.source, self.judged, self.mate_pawns)
        self.name_ = member_name(self.source, self.judged, self.name)
        self.finds_mates_ = bool(self.judged and _is_sparse(self.source))
        self.endings_ = trained_on_endings(self.source)
        self._call_memo: RowMemory | None = None
        return self

    def _memo(self) -> RowMemory | None:
        if self.memory is not None:
            return _MEMORY.setdefault(f"{self.memory}|{self.source}|{self.judged}|{self.mate_pawns}", RowMemory())
        return getattr(self, "_call_memo", None)

    class _Handing:
        def __init__(self, members: Sequence[Member], rows: np.ndarray, values: Sequence[np.ndarray]) -> None:
            self.pairs = list(zip(members, values, strict=True))
            self.rows = rows

        def __enter__(self) -> None:
            for m, v in self.pairs:
                m._handed = (self.rows, v)

        def __exit__(self, *exc: object) -> None:
            for m, _ in self.pairs:
                m._handed = None

    @staticmethod
    def handing(members: Sequence[Member], rows: np.ndarray, values: Sequence[np.ndarray]) -> Member._Handing:
        """Inside the block each of ``members``, asked about exactly the array ``rows`` (the same object, as the
        ensemble's regressors pass it on), answers the ``values`` it already gave for them, without judging again."""
        return Member._Handing(members, rows, values)

    def predict_pawns(self, X: Any, positions: Any = None) -> np.ndarray:
        """The member's value of every row, pawns from White's side (remembered rows are not asked again);
        ``positions``: the same rows already decoded (one decoding shared by every member of an ensemble)."""
        handed = getattr(self, "_handed", None)
        if handed is not None and X is handed[0]:
            return np.asarray(handed[1])
        rows = as_rows(X)
        memo = self._memo()
        if memo is None:
            asked = decode(rows) if positions is None else positions
            return np.asarray(self.evaluator_.evaluate(asked), dtype=np.float64).reshape(-1)
        values, found = memo.find(rows)
        if not found.all():
            missing = np.flatnonzero(~found)
            values[missing] = np.asarray(self.evaluator_.evaluate(decode(rows[missing])), dtype=np.float64).reshape(-1)
            memo.add(rows[missing], values[missing])
        return values

    def predict(self, X: Any) -> np.ndarray:
        return to_space(self.predict_pawns(X), self.space)

    def mates(self, values: np.ndarray) -> np.ndarray:
        """Where ``values`` (this member's pawns) are a mate its capture search found: +1, -1, else 0."""
        if not self.finds_mates_:
            return np.zeros(len(values), np.int8)
        v = np.asarray(values)
        return np.asarray(np.sign(v) * (np.abs(v) == self.mate_pawns), dtype=np.int8)

    def describe(self) -> dict[str, Any]:
        """The member's manifest entry: name, source, judged, kind, and every file with its SHA-256."""
        return {"name": self.name_, "label": self.name, "source": self.source, "judged": bool(self.judged),
                "kind": _source_kind(self.source), "trained_on_endings": bool(self.endings_),
                "files": {registry.repo_relative(p): sha256_of(p) for p in member_files(self.source)}}


def remember(memory: str, member: Member, X: np.ndarray, pawns: np.ndarray) -> None:
    """Seed ``memory`` with ``member``'s values of rows ``X`` (measured earlier, e.g. read back from a file)."""
    memo = _MEMORY.setdefault(f"{memory}|{member.source}|{member.judged}|{member.mate_pawns}", RowMemory())
    memo.add(as_rows(X), np.asarray(pawns, dtype=np.float64))


# ---------------------------------------------------------------------------- meta-learners
class SimplexWeights(RegressorMixin, BaseEstimator):  # type: ignore[misc]  # scikit-learn has no type stubs
    """Non-negative weights summing to one over the columns of ``P`` (the members' predictions) that minimise the
    mean absolute (``loss="absolute"``) or squared (``"squared"``) error against ``y``: a stacking meta-learner
    whose blend is still a weighted mean. The absolute loss is solved exactly as a linear programme (HiGHS); the
    squared one by SLSQP. ``min_weight``: columns weighing less are dropped and the rest refitted."""

    def __init__(self, loss: str = "absolute", min_weight: float = 0.0) -> None:
        self.loss = loss
        self.min_weight = min_weight

    def fit(self, P: Any, y: Any) -> SimplexWeights:
        P = np.asarray(P, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        self.coef_ = simplex_weights(P, y, self.loss, self.min_weight)
        self.intercept_ = 0.0
        self.n_features_in_ = P.shape[1]
        return self

    def predict(self, P: Any) -> np.ndarray:
        return np.asarray(np.asarray(P, dtype=np.float64) @ self.coef_)




class LinearMeta(RegressorMixin, BaseEstimator):  # type: ignore[misc]  # scikit-learn has no type stubs
    """A fitted linear meta-learner read back from a manifest: ``P @ coef + intercept`` (fit does nothing)."""

    def __init__(self, coef: Sequence[float] = (), intercept: float = 0.0) -> None:
        self.coef = coef
        self.intercept = intercept

    def fit(self, P: Any = None, y: Any = None) -> LinearMeta:
        self.coef_ = np.asarray(self.coef, dtype=np.float64)
        self.intercept_ = float(self.intercept)
        return self

    def predict(self, P: Any) -> np.ndarray:
        return np.asarray(P, dtype=np.float64) @ self.coef_ + self.intercept_


def default_meta() -> Any:
    from sklearn.linear_model import RidgeCV

    return RidgeCV(alphas=np.logspace(-6, 1, 15))


# ---------------------------------------------------------------------------- the democracy
def gate_groups(gate: str | None, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The rows each group of ``gate`` holds (bool masks): ``all``; ``quiet`` / ``other``; ``ending`` / ``other``."""
    n = len(rows)
    if gate is None:
        return {"all": np.ones(n, bool)}
    if gate == "quiet":
        from knights.features.attacks import quiet

        calm = quiet(rows[:, :64].astype(np.int8), rows[:, 64].astype(np.int8), rows[:, 65].astype(np.int8))
        return {"quiet": calm, "other": ~calm}
    if gate == "endings":
        ending = np.count_nonzero(rows[:, :64], axis=1) <= ENDING_MEN
        return {"ending": ending, "other": ~ending}
    raise ValueError(f"unknown gate {gate!r}: one of {GATES}")


class Democracy(RegressorMixin, BaseEstimator):  # type: ignore[misc]  # scikit-learn has no type stubs
    """Members voting as one evaluator (see the module docstring). ``members``: :class:`Member` estimators (fitted
    or not); ``weighting``: :data:`WEIGHTINGS`; ``space``: :data:`SPACES`; ``meta``: the stacking's meta-learner
    (``None``: RidgeCV); ``gate``: :data:`GATES`; ``mate_rule``: a mate a member's capture search found outvotes
    the mean; ``name``: the evaluator's name.

    After ``fit``: ``members_`` (fitted, in ``space``), ``models_`` (per gate group, the fitted
    :class:`~sklearn.compose.TransformedTargetRegressor` around the voting or stacking regressor), ``used_`` (per
    group, which members vote there) and :meth:`coefficients` (per group, the weights or meta coefficients)."""

    def __init__(self, members: Sequence[Member] = (), weighting: str = "equal", space: str = "win_probability",
                 meta: Any = None, gate: str | None = None, mate_rule: bool = True, name: str = "democracy") -> None:
        self.members = members
        self.weighting = weighting
        self.space = space
        self.meta = meta
        self.gate = gate
        self.mate_rule = mate_rule
        self.name = name

    # -- fitting
    def _prepare(self) -> None:
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"unknown weighting {self.weighting!r}: one of {WEIGHTINGS}")
        to_space(np.zeros(1), self.space)
        if self.gate not in GATES:
            raise ValueError(f"unknown gate {self.gate!r}: one of {GATES}")
        if not self.members:
            raise ValueError("a democracy needs at least one member")
        self.members_ = [clone(m).set_params(space=self.space).fit() for m in self.members]
        names = [m.name_ for m in self.members_]
        if len(set(names)) != len(names):
            raise ValueError(f"two members share a name: {names}")

    def _voters(self, group: str) -> list[int]:
        everyone = list(range(len(self.members_)))
        if group != "ending":
            return everyone
        enders = [i for i, m in enumerate(self.members_) if m.endings_]
        return enders if 0 < len(enders) < len(everyone) else everyone

    def _inner(self, voters: list[int], meta: Any = None) -> Any:
        frozen = [(self.members_[i].name_, FrozenEstimator(self.members_[i])) for i in voters]
        if meta is None and self.weighting == "equal":
            return VotingRegressor(frozen)
        if meta is None:
            meta = SimplexWeights() if self.weighting == "fitted" else clone(self.meta if self.meta is not None
                                                                             else default_meta())
        return StackingRegressor(frozen, final_estimator=meta, cv="prefit")

    def _voting(self, voters: list[int], weights: Any = None) -> VotingRegressor:
        frozen = [(self.members_[i].name_, FrozenEstimator(self.members_[i])) for i in voters]
        return VotingRegressor(frozen, weights=None if weights is None else [float(w) for w in weights])

    def _wrapped(self, inner: Any) -> TransformedTargetRegressor:
        func, inverse = (_wp, _wp_inverse) if self.space == "win_probability" else (_same, _same)
        return TransformedTargetRegressor(regressor=inner, func=func, inverse_func=inverse, check_inverse=False)

    def fit(self, X: Any, y: Any) -> Democracy:
        """Load the members, then fit the weights (or the meta-learner) on ``X``, ``y`` (pawns), per gate group."""
        rows = as_rows(X)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        self._prepare()
        self.models_: dict[str, TransformedTargetRegressor] = {}
        self.used_: dict[str, list[int]] = {}
        self.linear_: dict[str, tuple[list[int], np.ndarray, float]] | None = None
        with self._call_memos():
            for group, mask in gate_groups(self.gate, rows).items():
                voters = self._voters(group)
                fit_rows = mask if mask.any() else np.ones(len(rows), bool)   # a group absent here: all rows
                model = self._wrapped(self._inner(voters)).fit(rows[fit_rows], y[fit_rows])
                if self.weighting == "fitted":   # the fitted weights' blend is a weighted mean: vote with them
                    w = model.regressor_.final_estimator_.coef_
                    voters = [v for v, wi in zip(voters, w, strict=True) if wi > 0]
                    model = self._wrapped(self._voting(voters, w[w > 0])).fit(rows[fit_rows], y[fit_rows])
                self.models_[group] = model
                self.used_[group] = voters
        return self

    def coefficients(self) -> dict[str, dict[str, Any]]:
        """Per gate group: the members that vote there, their weights (equal, fitted) or the meta-learner's
        coefficients and intercept (stacked, linear), in the averaging space."""
        out: dict[str, dict[str, Any]] = {}
        for group, model in self.models_.items():
            names = [self.members_[i].name_ for i in self.used_[group]]
            inner = model.regressor_
            if isinstance(inner, VotingRegressor):
                coef, intercept = np.full(len(names), 1.0 / len(names)), 0.0
                if inner.weights is not None:
                    w = np.asarray(inner.weights, dtype=np.float64)
                    coef = w / w.sum()
            else:
                final = inner.final_estimator_
                if not hasattr(final, "coef_"):
                    raise TypeError(f"the meta-learner {type(final).__name__} is not linear: no coefficients")
                coef = np.asarray(final.coef_, dtype=np.float64).reshape(-1)
                intercept = float(np.asarray(getattr(final, "intercept_", 0.0)).reshape(-1)[0])
            out[group] = {"members": names, "coef": coef.tolist(), "intercept": intercept}
        return out

    # -- predicting
    class _Memos:
        def __init__(self, members: list[Member]) -> None:
            self.members = [m for m in members if m.memory is None]

        def __enter__(self) -> None:
            for m in self.members:
                m._call_memo = RowMemory()

        def __exit__(self, *exc: object) -> None:
            for m in self.members:
                m._call_memo = None

    def _call_memos(self) -> Democracy._Memos:
        """Within one call, each member judges each row once (the sklearn regressors and the mate rule ask it)."""
        return Democracy._Memos(self.members_)

    def _judge_all(self, rows: np.ndarray, positions: Any) -> tuple[dict[str, np.ndarray], dict[int, np.ndarray]]:
        """The gate groups present in ``rows`` and, for every member that votes in one of them, its pawns on the rows
        of those groups (NaN elsewhere): each member judges each row it votes on once, the rows decoded once per
        set of rows (``positions``: all of them, decoded)."""
        n = len(rows)
        groups = {g: mask for g, mask in gate_groups(self.gate, rows).items() if mask.any()}
        need: dict[int, np.ndarray] = {}
        for group, mask in groups.items():
            for i in self.used_[group]:
                need[i] = need[i] | mask if i in need else mask
        decoded: dict[bytes, tuple[np.ndarray, Any]] = {}
        values: dict[int, np.ndarray] = {}
        for i, mask in sorted(need.items()):
            if mask.all():
                part, pos = rows, positions
            else:
                key = mask.tobytes()
                if key not in decoded:
                    decoded[key] = (rows[mask], decode(rows[mask]))
                part, pos = decoded[key]
            v = np.full(n, np.nan)
            v[mask] = self.members_[i].predict_pawns(part, pos)
            values[i] = v
        return groups, values

    def _mate_rule(self, groups: dict[str, np.ndarray], values: dict[int, np.ndarray], out: np.ndarray) -> np.ndarray:
        """Where a member that votes on a row and finds mates found one there, and none found one for the other side:
        that mate (``mate_pawns``), as ``sparse+quiesce``'s vote does."""
        finders = [i for i in values if self.members_[i].finds_mates_]
        if not self.mate_rule or not finders:
            return out
        found = [np.where(mask, self.members_[i].mates(np.where(mask, values[i], 0.0)), 0)
                 for group, mask in groups.items() for i in self.used_[group] if i in finders]
        mate = max(self.members_[i].mate_pawns for i in finders)
        return mate_rule(out, np.array(found).reshape(len(found), len(out)), mate)

    def predict(self, X: Any) -> np.ndarray:
        """Pawns from White's side: each gate group's fitted scikit-learn ensemble (the voting or stacking regressor
        in its :class:`~sklearn.compose.TransformedTargetRegressor`), then the mate rule. Each member judges each
        row once, first (:meth:`_judge_all`); the regressors are handed those values (:meth:`Member.handing`)."""
        rows = as_rows(X)
        out = np.zeros(len(rows))
        if not len(rows):
            return out
        groups, values = self._judge_all(rows, decode(rows))
        for group, mask in groups.items():
            part = rows if mask.all() else rows[mask]
            used = self.used_[group]
            with Member.handing([self.members_[i] for i in used], part, [values[i][mask] for i in used]):
                out[mask] = self.models_[group].predict(part)
        return self._mate_rule(groups, values, out)

    def _linear(self) -> dict[str, tuple[list[int], np.ndarray, float]] | None:
        """Per gate group, its voters and the fitted blend's coefficients and intercept in the averaging space, once
        (``None`` for a meta-learner that is not linear)."""
        if getattr(self, "linear_", None) is None:
            try:
                coefs = self.coefficients()
            except TypeError:
                return None
            self.linear_ = {g: (self.used_[g], np.asarray(c["coef"], dtype=np.float64), float(c["intercept"]))
                            for g, c in coefs.items()}
        return self.linear_

    def evaluate(self, positions: Any) -> np.ndarray:
        """Pawns from White's side of ``positions`` (:class:`~knights.evaluate.base.Evaluator`: what the one-ply bot
        asks). The same values as :meth:`predict` (a test checks it), the fitted blend applied directly, without the
        scikit-learn regressors' checks at every call: a bot asks this ~35 positions at a time, every move."""
        rows = encode(positions)
        linear = self._linear()
        if linear is None or not len(rows):
            return self.predict(rows).astype(np.float32)
        out = np.zeros(len(rows))
        groups, values = self._judge_all(rows, positions)
        for group, mask in groups.items():
            voters, coef, intercept = linear[group]
            blend = intercept + sum(c * to_space(values[i][mask], self.space) for i, c in zip(voters, coef,
                                                                                           strict=True))
            out[mask] = from_space(blend, self.space)
        return self._mate_rule(groups, values, out).astype(np.float32)

    def member_predictions(self, X: Any) -> np.ndarray:
        """(members, N): every member's value of each row in the averaging space."""
        rows = as_rows(X)
        with self._call_memos():
            return np.stack([m.predict(rows) for m in self.members_])

    # -- the evaluator interface
    def evaluate_boards(self, boards: Sequence[Any]) -> np.ndarray:
        from knights.board.positions import positions_from_boards

        return self.evaluate(positions_from_boards(boards))


# ---------------------------------------------------------------------------- saving and loading
class ManifestError(ValueError):
    """A democracy manifest that cannot be used: bad JSON or format, a member whose files changed."""


def manifest(dem: Democracy, **extra: Any) -> dict[str, Any]:
    """The fitted democracy as a JSON document (members with their files' checksums, and per gate group the voters
    and their weights or the linear meta-learner's coefficients), plus ``extra`` fields."""
    return {"format": MANIFEST_FORMAT, "format_version": MANIFEST_VERSION, "name": dem.name,
            "space": dem.space, "weighting": dem.weighting, "gate": dem.gate, "mate_rule": bool(dem.mate_rule),
            "meta": None if dem.weighting != "stacked" else type(dem.meta or default_meta()).__name__,
            "members": [m.describe() for m in dem.members_], "groups": dem.coefficients(), **extra}


def save_manifest(dem: Democracy, path: str | Path, **extra: Any) -> Path:
    """Write :func:`manifest` to ``path`` (JSON); returns it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, manifest(dem, **extra))
    return path


def _expect(cond: bool, path: Path, what: str) -> None:
    if not cond:
        raise ManifestError(f"{path}: {what}")


def load_manifest(path: str | Path, *, mate_pawns: float = MATE_PAWNS, memory: str | None = None) -> Democracy:
    """The democracy a manifest describes, every member's files checked against their recorded SHA-256 and loaded
    without running code; fitted as recorded (nothing is refitted: the ensemble's regressors are built around the
    recorded weights or coefficients). ``mate_pawns``: what a mate found in a capture search reads (in play,
    :data:`~knights.engine.constants.MATE_SCORE`)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ManifestError(f"{path}: no democracy manifest here") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: not valid JSON ({exc})") from None
    _expect(isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT, path, f"not a {MANIFEST_FORMAT} manifest")
    _expect(doc.get("format_version") == MANIFEST_VERSION, path,
            f"format_version {doc.get('format_version')!r}; this code reads {MANIFEST_VERSION}")
    _expect(doc.get("space") in SPACES and doc.get("weighting") in WEIGHTINGS and doc.get("gate") in GATES, path,
            "bad space, weighting or gate")
    entries = doc.get("members")
    _expect(isinstance(entries, list) and len(entries) > 0, path, "no members")
    members = []
    for e in entries:
        _expect(isinstance(e, dict) and isinstance(e.get("source"), str) and isinstance(e.get("judged"), bool)
                and isinstance(e.get("files"), dict), path, f"bad member entry {e!r}")
        try:
            files = member_files(e["source"])
        except (ValueError, OSError) as exc:
            raise ManifestError(f"{path}: member {e.get('name')!r}: {exc}") from None
        recorded = e["files"]
        _expect(sorted(recorded) == sorted(registry.repo_relative(p) for p in files), path,
                f"member {e.get('name')!r}: recorded files {sorted(recorded)} are not the files its source reads")
        for p in files:
            _expect(p.is_file(), path, f"member {e.get('name')!r}: {registry.repo_relative(p)} is missing")
            digest = sha256_of(p)
            _expect(digest == recorded[registry.repo_relative(p)], path,
                    f"member {e.get('name')!r}: {registry.repo_relative(p)} changed since the democracy was fitted "
                    f"(SHA-256 {digest[:12]}..., recorded {str(recorded[registry.repo_relative(p)])[:12]}...)")
        label = e.get("label")
        _expect(label is None or isinstance(label, str), path, f"member {e.get('name')!r}: bad label {label!r}")
        members.append(Member(e["source"], e["judged"], mate_pawns=mate_pawns, memory=memory, name=label))
    dem = Democracy(members, weighting=doc["weighting"], space=doc["space"], gate=doc["gate"],
                    mate_rule=bool(doc.get("mate_rule", True)), name=str(doc.get("name") or "democracy"))
    dem._prepare()
    groups = doc.get("groups")
    _expect(isinstance(groups, dict) and bool(groups), path, "no groups")
    probe = _probe_rows()
    dem.models_, dem.used_, dem.linear_ = {}, {}, None
    names = [m.name_ for m in dem.members_]
    with dem._call_memos():
        for group, g in groups.items():
            _expect(isinstance(g, dict) and isinstance(g.get("members"), list) and isinstance(g.get("coef"), list)
                    and len(g["coef"]) == len(g["members"]) and all(n in names for n in g["members"]), path,
                    f"group {group!r}: members and coefficients do not match")
            coef = np.asarray(g["coef"], dtype=np.float64)
            _expect(bool(np.isfinite(coef).all()) and np.isfinite(float(g.get("intercept", 0.0))), path,
                    f"group {group!r}: non-finite coefficients")
            voters = [names.index(n) for n in g["members"]]
            if dem.weighting == "stacked":
                inner = dem._inner(voters, FrozenEstimator(LinearMeta(coef.tolist(), float(g.get("intercept", 0.0)))
                                                           .fit()))
            else:
                _expect(bool((coef >= 0).all()) and coef.sum() > 0, path, f"group {group!r}: weights must be "
                        "non-negative and not all zero")
                inner = dem._voting(voters, None if dem.weighting == "equal" else coef)
            y = np.zeros(len(probe))
            dem.models_[group] = dem._wrapped(inner).fit(probe, y)   # frozen members and meta: nothing is learned
            dem.used_[group] = voters
    return dem


def _probe_rows() -> np.ndarray:
    import chess

    from knights.board.positions import positions_from_boards
    from knights.evaluate.base import PROBE_FENS

    return encode(positions_from_boards([chess.Board(f) for f in PROBE_FENS]))
