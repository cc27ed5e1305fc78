"""Elo ratings by maximum likelihood over every game played, anchored on Stockfish.

Model
-----
Bradley-Terry on the Elo (logistic, base 10, 400-point) scale: a player rated
``r_i`` scores against ``r_j``, in expectation,

    p_ij = 1 / (1 + 10 ** ((r_j - r_i) / 400)).

Every game counts with its score (win 1, draw 1/2, loss 0), so a pairing that
played ``n_ij`` games and scored ``s_ij`` adds ``s_ij log p_ij + (n_ij - s_ij)
log(1 - p_ij)`` to the log-likelihood (draws count as half a win and half a loss).
The ratings of the **anchors** (Stockfish's ``UCI_Elo`` levels) are fixed; every
other rating is free and estimated jointly, so a weak rung that never met an
anchor is rated through the chain of games between neighbours. The maximum is
found by Newton's method (the log-likelihood is concave in the free ratings).

Perfect scores
--------------
A player who won (or lost) every game against everyone would have an infinite
maximum-likelihood rating. A weak prior avoids that: every pairing that played gets
``prior_draws`` virtual games scored as draws (default 1: one extra drawn game per
pairing, i.e. 0.5 points in ``n + 1`` games). It pulls a pairing's observed score
towards 1/2 by ``prior_draws / (n + prior_draws)`` of the gap: with 40 games a
score of 1.0 is treated as 0.988 (about +760 Elo rather than infinity), 0.75 as
0.744. ``prior_draws=0`` is the plain maximum-likelihood estimate.

Intervals
---------
95% intervals are ``r +- 1.96 * se`` with ``se`` from the inverse of the observed
Fisher information (minus the Hessian of the log-likelihood, prior included) with
respect to the free ratings at the maximum. They are conditional on the anchors
(the anchors are taken as exact), and treat a draw's variance like a binomial
game's (slightly conservative when there are many draws).

Players in a group of games with no anchor at all are rated relative to the
group's most active player, pinned at ``0`` (``Rating.relative`` is set).

>>> r = fit_ratings([("a", "sf", 1.0), ("a", "sf", 0.0), ("a", "sf", 1.0), ("a", "sf", 1.0)],
...                 {"sf": 1350}, prior_draws=0)
>>> round(r["a"].rating, 1)   # 1350 + 400 log10(0.75 / 0.25)
1540.8
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

K = math.log(10) / 400
"""Natural-log slope of the Elo curve: p = 1 / (1 + exp(-K (r_i - r_j)))."""
Z95 = 1.959963984540054


def expected_score(r_a: float, r_b: float) -> float:
    """Expected score of a player rated ``r_a`` against one rated ``r_b``."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))


def elo_difference(score: float) -> float:
    """The rating difference that gives expected ``score`` (0 < score < 1)."""
    if not 0.0 < score < 1.0:
        return math.copysign(math.inf, score - 0.5)
    return 400.0 * math.log10(score / (1.0 - score))


def anchors_of(specs: Iterable[str]) -> dict[str, float]:
    """The Stockfish ``UCI_Elo`` anchors among ``specs`` and their Elo, the ratings a fit holds fixed.

    >>> anchors_of(["sf-elo:2000", "sunfish", "search:EL/v25@1000"])
    {'sf-elo:2000': 2000.0}
    """
    return {s: float(s.split(":", 1)[1]) for s in specs if s.startswith("sf-elo:")}


@dataclass
class Rating:
    player: str
    rating: float
    se: float           # standard error (0 for an anchor)
    low: float          # 95% interval
    high: float
    games: float        # real games played (prior excluded)
    score: float        # points scored in them
    anchor: bool = False
    relative: bool = False

    @property
    def score_rate(self) -> float:
        return self.score / self.games if self.games else float("nan")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Table:
    """Games and points between every ordered pair of players."""

    players: list[str]
    games: np.ndarray   # (P, P) symmetric, games between i and j
    points: np.ndarray  # (P, P) points scored by i against j (points + points.T == games)

    @classmethod
    def from_games(cls, results: Iterable[tuple[str, str, float]], players: Sequence[str] = ()) -> Table:
        """``results``: (player_a, player_b, score of a) per game, score in [0, 1]."""
        results = list(results)
        names = list(dict.fromkeys(list(players) + [p for a, b, _ in results for p in (a, b)]))
        index = {p: i for i, p in enumerate(names)}
        games = np.zeros((len(names), len(names)))
        points = np.zeros_like(games)
        for a, b, s in results:
            if a == b:
                raise ValueError(f"{a} cannot play itself")
            if not 0.0 <= s <= 1.0:
                raise ValueError(f"score {s} of {a} vs {b} is not in [0, 1]")
            i, j = index[a], index[b]
            games[i, j] += 1
            games[j, i] += 1
            points[i, j] += s
            points[j, i] += 1.0 - s
        return cls(names, games, points)

    @classmethod
    def from_counts(cls, counts: Iterable[tuple[str, str, float, float]]) -> Table:
        """``counts``: (player_a, player_b, games, points of a) per pairing."""
        rows = list(counts)
        names = list(dict.fromkeys(p for a, b, _, _ in rows for p in (a, b)))
        index = {p: i for i, p in enumerate(names)}
        games = np.zeros((len(names), len(names)))
        points = np.zeros_like(games)
        for a, b, n, s in rows:
            i, j = index[a], index[b]
            games[i, j] += n
            games[j, i] += n
            points[i, j] += s
            points[j, i] += n - s
        return cls(names, games, points)


def _components(games: np.ndarray) -> list[list[int]]:
    n = len(games)
    seen = [False] * n
    out = []
    for start in range(n):
        if seen[start]:
            continue
        stack, comp = [start], []
        seen[start] = True
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in np.flatnonzero(games[i] > 0):
                if not seen[j]:
                    seen[j] = True
                    stack.append(int(j))
        out.append(sorted(comp))
    return out


def _loglik(r: np.ndarray, s: np.ndarray) -> float:
    d = K * (r[:, None] - r[None, :])
    # s_ij log p_ij with log p = -log(1 + exp(-d)); each pair counted from both sides
    return float(-(s * np.logaddexp(0.0, -d)).sum())


def _expected_and_hessian(r: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected score p_ij of i against j, and the log-likelihood's Hessian in the
    ratings (off-diagonal +K^2 n p q, diagonal minus the row sum); its negative is the
    observed Fisher information."""
    p = 1.0 / (1.0 + np.exp(-K * (r[:, None] - r[None, :])))
    hess = K * K * n * p * (1.0 - p)
    np.fill_diagonal(hess, 0.0)
    np.fill_diagonal(hess, -hess.sum(axis=1))
    return p, hess


def fit_ratings(results: Iterable[tuple[str, str, float]] | Table, anchors: Mapping[str, float],
                *, prior_draws: float = 1.0, max_iter: int = 200, tol: float = 1e-9) -> dict[str, Rating]:
    """Maximum-likelihood Elo of every player in ``results`` with ``anchors`` fixed.

    ``results`` is a :class:`Table` or (player_a, player_b, score of a) per game.
    Returns ``{player: Rating}``; anchors that played no game are included as is.
    Raises ``ValueError`` when ``prior_draws`` is 0 and a rating is unbounded
    (a perfect score).
    """
    table = results if isinstance(results, Table) else Table.from_games(results, list(anchors))
    players = table.players
    index = {p: i for i, p in enumerate(players)}
    real_n, real_s = table.games, table.points
    played = real_n > 0
    n = real_n + prior_draws * played
    s = real_s + 0.5 * prior_draws * played

    fixed = np.zeros(len(players), dtype=bool)
    r = np.zeros(len(players))
    for player, value in anchors.items():
        if player in index:
            fixed[index[player]] = True
            r[index[player]] = float(value)
    relative = np.zeros(len(players), dtype=bool)
    for comp in _components(real_n):
        if not fixed[comp].any():  # no anchor: pin the most active player at 0
            pin = max(comp, key=lambda i: real_n[i].sum())
            fixed[pin] = True
            r[pin] = 0.0
            relative[comp] = True
        start = r[comp][fixed[comp]].mean()
        for i in comp:
            if not fixed[i]:
                r[i] = start

    free = np.flatnonzero(~fixed)
    if prior_draws <= 0:
        totals, scored = real_n.sum(axis=1), real_s.sum(axis=1)
        perfect = [players[i] for i in free if scored[i] <= 0 or scored[i] >= totals[i]]
        if perfect:
            raise ValueError(f"rating of {', '.join(perfect)} is unbounded (a perfect score): "
                             "use prior_draws > 0")
    cov = np.zeros((0, 0))
    if len(free):
        ll = _loglik(r, s)
        for _ in range(max_iter):
            p, hess = _expected_and_hessian(r, n)
            grad = K * (s - n * p).sum(axis=1)
            g, h = grad[free], hess[np.ix_(free, free)]
            try:
                step = np.linalg.solve(h, -g)
            except np.linalg.LinAlgError:
                step = g / max(1e-12, np.abs(np.diag(h)).max())
            step = np.clip(step, -400.0, 400.0)
            t = 1.0
            while True:
                trial = r.copy()
                trial[free] += t * step
                new_ll = _loglik(trial, s)
                if new_ll >= ll - 1e-12 or t < 1e-6:
                    break
                t /= 2
            r, ll = trial, new_ll
            if np.abs(t * step).max() < 1e-7 or np.abs(g).max() < tol:
                break
        if np.abs(r[free]).max() > 1e5:
            raise ValueError("a rating is unbounded (perfectly separated results): use prior_draws > 0")
        info = -_expected_and_hessian(r, n)[1]   # observed Fisher information
        cov = np.linalg.pinv(info[np.ix_(free, free)])

    se = np.zeros(len(players))
    se[free] = np.sqrt(np.maximum(np.diag(cov), 0.0)) if len(free) else 0.0
    out: dict[str, Rating] = {}
    for player, i in index.items():
        is_anchor = player in anchors
        out[player] = Rating(player=player, rating=float(r[i]), se=float(se[i]),
                             low=float(r[i] - Z95 * se[i]), high=float(r[i] + Z95 * se[i]),
                             games=float(real_n[i].sum()), score=float(real_s[i].sum()),
                             anchor=is_anchor, relative=bool(relative[i]) and not is_anchor)
    for player, value in anchors.items():
        out.setdefault(player, Rating(player, float(value), 0.0, float(value), float(value), 0.0, 0.0, anchor=True))
    return out


def simulate_games(ratings: Mapping[str, float], pairings: Sequence[tuple[str, str, int]], *,
                   seed: int = 0, draw_rate: float = 0.2) -> list[tuple[str, str, float]]:
    """Games drawn from the model (for tests): each pairing's ``n`` games score
    win/draw/loss with expected score exactly ``expected_score``; about
    ``draw_rate`` of them are draws (fewer where one side is much stronger)."""
    rng = np.random.default_rng(seed)
    out = []
    for a, b, count in pairings:
        p = expected_score(ratings[a], ratings[b])
        d = min(draw_rate, 2 * p, 2 * (1 - p))
        probs = [p - d / 2, d, 1 - p - d / 2]
        for outcome in rng.choice(3, size=count, p=probs):
            out.append((a, b, (1.0, 0.5, 0.0)[outcome]))
    return out
