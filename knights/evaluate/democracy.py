"""Democracy: a weighted average of evaluators' opinions, in pawns from White's side.

Members are anything behind the :class:`~knights.evaluate.base.Evaluator` interface:
EL networks (:class:`~knights.evaluate.base.NetworkEvaluator`) and classical learners
(:class:`~knights.evaluate.learner.LearnerEvaluator`)::

    pawns = predict_cp_democracy(positions, [net, forest, svr, linear], [0.9, 0.05, 0.025, 0.025])

Weights come three ways (:func:`equal_weights`, :func:`original_weights`,
:func:`fit_weights`). The shipped ensemble is a folder (``ensemble/models/``) with
``democracy.json`` (members, weights, checksums) and each learner's ``.npz`` +
``.json``; :func:`load_shipped` gives it as one evaluator named ``"democracy"``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from knights.board.placements import PAWN_COUNTS, PIECE_COUNTS
from knights.common import write_json
from knights.evaluate.learner import LearnerEvaluator
from knights.learn import registry, store
from knights.learn.learners import features, load_model
from knights.learn.targets import MAX_PAWNS, pawns_from_probability, win_probability

if TYPE_CHECKING:
    import chess

    from knights.board.positions import Positions
    from knights.evaluate.base import Evaluator

MODELS_DIR = registry.ENSEMBLE_MODELS
ENDINGS_DATA = "data/endings"
"""The endings' folder as a version's library names it."""
ENDING_MEN = 2 * (1 + (len(PIECE_COUNTS) - 1) + (len(PAWN_COUNTS) - 1))
"""The most men an ending of ``make endings-data`` starts with (kings, and at most 3 pieces and 5 pawns a side:
:func:`knights.board.placements.random_material`): where a democracy's networks that learned from those endings judge
alone (``sparse+quiesce``, :class:`knights.engine.judged.JudgedDemocracy`; the ``endings`` gate of
:class:`knights.evaluate.ensemble.Democracy`)."""
MANIFEST = "democracy.json"
MANIFEST_FORMAT = "knights-democracy"
MANIFEST_VERSION = 1

ORIGINAL_BLEND = {"network": 0.9, "random_forest": 0.1 * 0.5, "svr": 0.1 * 0.25, "linear": 0.1 * 0.25}
"""The original's shipped blend: 0.9 network + 0.1 x (0.5 RF + 0.25 SVR + 0.25 LR).
Its SVR was a LinearSVR, so ``svr`` here means our ``linear_svr`` member
(see :func:`original_weights`)."""


def trained_on_endings(version: str) -> bool:
    """Whether ``version`` learned from the endings data: ``data/endings`` among its library's ``MORE``, or
    among its parent's (a version that continues from a parent, ``PARENT``, starts from what the parent learned)."""
    lib = registry.get(version).library
    parent = getattr(lib, "PARENT", None)
    return ENDINGS_DATA in getattr(lib, "MORE", ()) or (parent is not None and trained_on_endings(parent))


def mate_rule(mean: np.ndarray, found: np.ndarray, mate_pawns: float) -> np.ndarray:
    """The vote's one rule about mates (``sparse+quiesce``'s and :class:`knights.evaluate.ensemble.Democracy`'s):
    where a voting member's capture search found a mate (``found``: members x positions, +1 for White, -1 for Black,
    0 none) and none found one for the other side, that mate (``mate_pawns``), not the ``mean``."""
    found = np.asarray(found)
    wins, losses = (found > 0).any(axis=0), (found < 0).any(axis=0)
    return np.asarray(np.where(wins & ~losses, mate_pawns, np.where(losses & ~wins, -mate_pawns, mean)),
                      dtype=np.float64)


# ---------------------------------------------------------------------------- the vote
def _check_weights(weights: npt.ArrayLike, n: int) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(w) != n:
        raise ValueError(f"{len(w)} weights for {n} members")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be finite, non-negative and not all zero: {w.tolist()}")
    normalised: np.ndarray = w / w.sum()
    return normalised


def predict_cp_democracy(inputs: Positions, models: Sequence[Evaluator],
                         weights: npt.ArrayLike | Mapping[str, float], space: str = "pawns",
                         quiet_weights: npt.ArrayLike | Mapping[str, float] | None = None) -> np.ndarray:
    """The members' weighted average evaluation of ``inputs`` (any Positions-like
    block: squares, white, check, capture), in pawns from White's side.

    ``space``: what is averaged. ``"pawns"`` (the original): the members' pawns.
    ``"win_probability"``: each member's verdict as a win probability
    (:mod:`knights.learn.targets`), averaged, and turned back into pawns, so a member
    that says +9 and one that says +6 agree that the game is won, and a member's
    wild number in a decided position cannot drag a level verdict away.

    ``weights``: one per model, or a mapping from model name to weight (missing
    names weigh 0). Weights are normalised to sum to one; members of weight 0 are
    not evaluated. Classical learners share one computation of the features.

    ``quiet_weights`` (same forms): a second set of weights for the quiet positions
    (:func:`knights.features.attacks.quiet`: not in check, no capture that wins
    material), ``weights`` then counting for the others only. Members learned on
    quiet positions judge those best, and the others are what the capture-aware
    members are for; every member is still evaluated once."""
    models = list(models)
    w = _weights_for(models, weights)
    wq = None if quiet_weights is None else _weights_for(models, quiet_weights)
    n = len(inputs.squares)
    used = [i for i in range(len(models)) if w[i] > 0 or (wq is not None and wq[i] > 0)]
    votes = np.zeros((len(models), n), dtype=np.float64)
    X = None
    for i in used:
        model = models[i]
        if isinstance(model, LearnerEvaluator):
            if X is None:
                X = features(inputs.squares)
            pred = model.predict_features(X)
        else:
            pred = model.evaluate(inputs)
        votes[i] = to_space(np.asarray(pred, dtype=np.float64).reshape(n), space)
    calm = None
    if wq is not None:
        from knights.features.attacks import quiet

        calm = quiet(np.asarray(inputs.squares), np.asarray(inputs.white), np.asarray(inputs.check))
    return blend_votes(votes, w, space, wq, calm).astype(np.float32)


def blend_votes(votes: np.ndarray, weights: np.ndarray, space: str, quiet_weights: np.ndarray | None = None,
                calm: np.ndarray | None = None) -> np.ndarray:
    """The members' ``votes`` (members, rows; already in ``space``) averaged with ``weights``
    (normalised), in pawns; with ``quiet_weights``, the rows where ``calm`` is true are
    averaged with those instead: the one rule of a gated democracy."""
    total = weights @ votes
    if quiet_weights is not None:
        total = np.where(np.asarray(calm, dtype=bool), quiet_weights @ votes, total)
    return from_space(total, space)


def _weights_for(models: Sequence[Evaluator], weights: npt.ArrayLike | Mapping[str, float]) -> np.ndarray:
    """``weights`` (one per model, or by name: missing names weigh 0), normalised."""
    if isinstance(weights, Mapping):
        unknown = set(weights) - {m.name for m in models}
        if unknown:
            raise ValueError(f"weights for unknown members {sorted(unknown)}")
        weights = [float(weights.get(m.name, 0.0)) for m in models]
    return _check_weights(weights, len(models))


SPACES = ("pawns", "win_probability")
"""What a democracy averages (``space`` in its manifest; older manifests: pawns)."""


def to_space(pawns: np.ndarray, space: str) -> np.ndarray:
    """Evaluations in pawns as the values a democracy of ``space`` averages (:mod:`knights.evaluate.ensemble`'s too)."""
    if space == "pawns":
        return pawns
    if space == "win_probability":
        return win_probability(pawns)
    raise ValueError(f"unknown democracy space {space!r}: use one of {SPACES}")


def from_space(values: np.ndarray, space: str) -> np.ndarray:
    """The inverse of :func:`to_space`: pawns (a win probability's clipped to +-10)."""
    if space == "pawns":
        return values
    pawns: np.ndarray = np.clip(pawns_from_probability(values), -MAX_PAWNS, MAX_PAWNS)
    return pawns


class Democracy:
    """Members and weights as one :class:`~knights.evaluate.base.Evaluator` (``"democracy"``)."""

    def __init__(self, members: Sequence[Evaluator], weights: npt.ArrayLike, name: str = "democracy",
                 info: dict[str, Any] | None = None, space: str = "pawns",
                 quiet_weights: npt.ArrayLike | None = None) -> None:
        to_space(np.zeros(1), space)   # refuse an unknown space at once
        self.space = space
        w = _check_weights(weights, len(members))
        wq = None if quiet_weights is None else _check_weights(quiet_weights, len(members))
        keep = (w > 0) | (wq > 0) if wq is not None else w > 0
        self.members = [m for m, k in zip(members, keep, strict=True) if k]
        self.weights = w[keep] / w[keep].sum()
        self.quiet_weights = None if wq is None else wq[keep] / wq[keep].sum()
        """The weights of the quiet positions (``weights`` then count for the others), or ``None``:
        one set of weights for every position (:func:`predict_cp_democracy`)."""
        self.name = name
        self.info = info or {}

    def evaluate(self, positions: Positions) -> np.ndarray:
        return predict_cp_democracy(positions, self.members, self.weights, self.space, self.quiet_weights)

    def evaluate_boards(self, boards: Sequence[chess.Board]) -> np.ndarray:
        from knights.board.positions import positions_from_boards

        return self.evaluate(positions_from_boards(boards))

    def __repr__(self) -> str:
        parts = ", ".join(f"{m.name}={w:.3f}" for m, w in zip(self.members, self.weights, strict=True))
        if self.quiet_weights is None:
            return f"Democracy({parts})"
        calm = ", ".join(f"{m.name}={w:.3f}" for m, w in zip(self.members, self.quiet_weights, strict=True))
        return f"Democracy(quiet: {calm}; others: {parts})"


# ---------------------------------------------------------------------------- weights
def equal_weights(names: Sequence[str]) -> dict[str, float]:
    return {n: 1.0 / len(names) for n in names}


def original_weights(names: Sequence[str], networks: Sequence[str] = (), svr: str = "linear_svr") -> dict[str, float]:
    """The original's blend over ``names``: 0.9 shared by the networks, 0.1 x (0.5 RF
    + 0.25 SVR + 0.25 LR) for the classical part (``svr``: which member plays the
    SVR; the original shipped a LinearSVR). Without a network the classical part
    alone, renormalised; other members weigh 0."""
    networks = [n for n in networks if n in names]
    classical = {"random_forest": 0.5, svr: 0.25, "linear": 0.25}
    missing = [k for k in classical if k not in names]
    if missing:
        raise ValueError(f"the original blend needs members {missing}")
    w = {n: 0.0 for n in names}
    share = 0.1 if networks else 1.0
    for n in networks:
        w[n] = 0.9 / len(networks)
    for k, v in classical.items():
        w[k] += share * v
    return w


def fit_weights(predictions: np.ndarray, target: np.ndarray, loss: str = "mae", min_weight: float = 0.0) -> np.ndarray:
    """Non-negative weights summing to one that minimise the blend's validation loss (``predictions``: members, N;
    ``loss``: ``"mae"`` or ``"mse"``): :func:`simplex_weights`, the one fit of the democracy's weights (the
    ensemble's :class:`~knights.evaluate.ensemble.SimplexWeights` too)."""
    P = np.asarray(predictions, dtype=np.float64)
    y = np.asarray(target, dtype=np.float64).reshape(-1)
    if P.ndim != 2 or P.shape[1] != len(y):
        raise ValueError(f"{P.shape[-1]} predictions per member for {len(y)} targets")
    if loss not in _LOSSES:
        raise ValueError(f"loss must be 'mae' or 'mse', not {loss!r}")
    return simplex_weights(P.T, y, _LOSSES[loss], min_weight)


_LOSSES = {"mae": "absolute", "mse": "squared"}


def simplex_weights(P: np.ndarray, y: np.ndarray, loss: str = "absolute", min_weight: float = 0.0) -> np.ndarray:
    """Non-negative weights summing to one that minimise the blend ``P @ w``'s loss against ``y`` (``P``: rows,
    members): ``"absolute"`` through the exact linear programme (HiGHS), ``"squared"`` the small quadratic programme
    on the members' Gram matrix (SLSQP); either optimum is at least as good as any other point of the simplex, equal
    weights included. ``min_weight``: members weighing less are dropped and the rest refitted."""
    from scipy import optimize

    n, m = P.shape
    if m == 1:
        return np.ones(1)
    if loss == "absolute":
        # min_w sum_r |P_r w - y_r| over the simplex is a linear programme; its dual is small and fast:
        # max_{u, t} y'u + t subject to P'u + t <= 0 (one row a member) and -1 <= u_r <= 1. The weights are that
        # dual's multipliers of the member rows (HiGHS; the primal's optimum, to its tolerance).
        res = optimize.linprog(np.concatenate([-y, [-1.0]]), A_ub=np.hstack([P.T, np.ones((m, 1))]),
                               b_ub=np.zeros(m), bounds=[(-1.0, 1.0)] * n + [(None, None)], method="highs")
        if not res.success:
            raise RuntimeError(f"fitting the weights failed: {res.message}")
        w = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    elif loss == "squared":
        G, b = P.T @ P / n, P.T @ y / n
        res = optimize.minimize(lambda w: (w @ G @ w - 2 * b @ w, 2 * G @ w - 2 * b), np.full(m, 1.0 / m), jac=True,
                                method="SLSQP", bounds=[(0, 1)] * m,
                                constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": np.ones_like}],
                                options={"ftol": 1e-12, "maxiter": 500})
        w = np.asarray(res.x, dtype=np.float64)
    else:
        raise ValueError(f"loss must be 'absolute' or 'squared', not {loss!r}")
    w = np.clip(w, 0.0, None)
    w[w < 1e-9] = 0.0
    w = w / w.sum()
    if min_weight > 0 and ((w > 0) & (w < min_weight)).any():
        keep = np.flatnonzero(w >= min_weight)
        out = np.zeros(m)
        out[keep] = simplex_weights(P[:, keep], y, loss, min_weight)
        return out
    return np.asarray(w, dtype=np.float64)


# ---------------------------------------------------------------------------- shipping
def write_manifest(folder: str | Path, members: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> Path:
    """``democracy.json``: the shipped members (name, kind, weight, and the learner's
    sidecar file or the network's version and weights checksum)."""
    folder = Path(folder)
    doc = {"format": MANIFEST_FORMAT, "format_version": MANIFEST_VERSION, "name": "democracy", "members": members,
           **(extra or {})}
    path = folder / MANIFEST
    write_json(path, doc)
    return path


def read_manifest(folder: str | Path | None = None) -> dict[str, Any]:
    path = Path(folder or MODELS_DIR) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no shipped ensemble: {path} not found (train one: knights ensemble)")
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise store.ModelFileError(f"{path}: not valid JSON ({exc})") from None
    store.expect(isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT, path,
                 f"not a {MANIFEST_FORMAT} manifest")
    store.expect(doc.get("format_version") == MANIFEST_VERSION, path,
                 f"unknown format_version {doc.get('format_version')!r} (this code reads {MANIFEST_VERSION})")
    members = doc.get("members")
    if not isinstance(members, list) or not members:
        raise store.ModelFileError(f"{path}: no members")
    for m in members:
        store.expect(isinstance(m, dict) and isinstance(m.get("name"), str) and m.get("kind") in ("network", "learner"),
                     path, f"bad member entry {m!r}")
        for key in ("weight", "quiet_weight") if "quiet_weight" in m else ("weight",):
            w = m.get(key)
            store.expect(isinstance(w, (int, float)) and not isinstance(w, bool) and np.isfinite(w) and w >= 0,
                         path, f"member {m.get('name')!r} has a bad {key.replace('_', ' ')} {w!r}")
        if m["kind"] == "learner":
            f = m.get("file")
            store.expect(isinstance(f, str) and Path(f).name == f and f.endswith(".json"), path,
                         f"member {m['name']!r}: file must be a bare .json name beside the manifest")
    store.expect(sum(m["weight"] for m in members) > 0, path, "all weights are zero")
    gated = ["quiet_weight" in m for m in members]
    if any(gated):
        store.expect(all(gated), path, "some members have a quiet weight and some have none")
        store.expect(sum(m["quiet_weight"] for m in members) > 0, path, "all quiet weights are zero")
    return doc


def _network_models_dir(member: dict[str, Any]) -> str | None:
    return member.get("models_dir") or None


def is_shipped(folder: str | Path | None = None) -> bool:
    """Whether a shipped ensemble is there with every member's files on disk."""
    folder = Path(folder or MODELS_DIR)
    try:
        doc = read_manifest(folder)
    except (FileNotFoundError, ValueError):
        return False
    for m in doc["members"]:
        if m["kind"] == "learner":
            if not (folder / m["file"]).is_file():
                return False
        else:
            try:
                if not registry.get(m["version"]).is_trained(_network_models_dir(m)):
                    return False
            except (KeyError, ValueError):
                return False
    return True


def is_damaged(folder: str | Path | None = None) -> bool:
    """Whether a manifest is there but cannot be used (bad JSON, a bad weight or member entry, an
    unknown format or member version): the ensemble is then *broken*, not "not trained", and
    loading it (:func:`load_shipped`) raises the real reason instead of the bot quietly
    playing another evaluator."""
    folder = Path(folder or MODELS_DIR)
    if not (folder / MANIFEST).is_file():
        return False
    try:
        doc = read_manifest(folder)
        for m in doc["members"]:
            if m["kind"] == "network":
                registry.get(m["version"])
    except (KeyError, ValueError):
        return True
    return False


def counts(member: dict[str, Any]) -> bool:
    """Whether a manifest's member takes part: a weight, or a quiet weight, above zero."""
    return bool(member["weight"] > 0 or member.get("quiet_weight", 0) > 0)


def load_members(folder: str | Path | None = None) -> tuple[list[Evaluator], list[float], dict[str, Any]]:
    """The shipped members that count (:func:`counts`) as evaluators, their weights, and the
    manifest (a gated manifest's quiet weights: :func:`quiet_weights_of`)."""
    from knights.evaluate.base import NetworkEvaluator

    folder = Path(folder or MODELS_DIR)
    doc = read_manifest(folder)
    members: list[Evaluator] = []
    weights: list[float] = []
    for m in doc["members"]:
        if not counts(m):
            continue
        if m["kind"] == "learner":
            members.append(LearnerEvaluator(m["name"], load_model(folder / m["file"])))
        else:
            try:
                version = registry.get(str(m.get("version")))
            except ValueError as exc:
                raise store.ModelFileError(f"{folder / MANIFEST}: member {m['name']!r}: {exc}") from None
            models_dir = _network_models_dir(m)
            weights_file = version.weights(models_dir)
            want = m.get("weights_sha256")
            if want and store.sha256_file(weights_file) != want:
                raise store.ModelFileError(
                    f"{weights_file}: not the {m['version']} weights this ensemble was fitted with (SHA-256 "
                    f"differs from {folder / MANIFEST}); refit the ensemble: knights ensemble")
            model, _ = version.load(models_dir)
            members.append(NetworkEvaluator(model, version.library.INPUTS, m["name"]))
        weights.append(float(m["weight"]))
    return members, weights, doc


def quiet_weights_of(doc: dict[str, Any]) -> list[float] | None:
    """The quiet weights of the members that count, in :func:`load_members`' order; ``None``
    when the manifest has one set of weights for every position."""
    if "quiet_weight" not in doc["members"][0]:
        return None
    return [float(m["quiet_weight"]) for m in doc["members"] if counts(m)]


def load_shipped(folder: str | Path | None = None) -> Democracy:
    """The shipped ensemble (``ensemble/models/``) as one evaluator named ``"democracy"``."""
    members, weights, doc = load_members(folder)
    quiet_weights = quiet_weights_of(doc)
    space = doc.get("space", "pawns")
    if space not in SPACES:
        raise store.ModelFileError(f"{Path(folder or MODELS_DIR) / MANIFEST}: unknown space {space!r} "
                                   f"(expected one of {SPACES})")
    return Democracy(members, weights, info={k: v for k, v in doc.items() if k != "members"}, space=space,
                     quiet_weights=quiet_weights)
