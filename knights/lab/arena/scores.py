"""Scores of a match: each player's record against each opponent, from game records.

The records are the dicts :func:`knights.lab.arena.matches.run_games` returns (or
:func:`~knights.lab.arena.matches.load_records` reads back); every game counts for both
sides::

    stats = pair_stats(records)
    stats[("greedy", "random")].score      # greedy's points per game against random
    stats[("greedy", "random")].interval() # its 95% interval, from the games' spread
    print(format_scores(records))          # one line per pairing

Wins by checkmate are counted apart from the others, so "won outright" can be told
from "was ahead when the game was adjudicated".
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knights.lab.arena.elo import Z95


@dataclass
class PairStats:
    """``player``'s games against ``opponent``."""

    player: str
    opponent: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    wins_by_mate: int = 0
    losses_by_mate: int = 0
    adjudicated: int = 0
    plies: int = 0

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Points per game (NaN before the first game)."""
        return self.points / self.games if self.games else float("nan")

    def interval(self) -> tuple[float, float]:
        """The score's 95% interval, ``score +- 1.96 sd / sqrt(games)`` with ``sd`` the spread of the games' own
        scores (1, 1/2, 0), clipped to [0, 1]; ``(score, score)`` for a single game, NaNs before the first.

        >>> low, high = PairStats("a", "b", games=80, wins=24, draws=19, losses=37).interval()
        >>> round(low, 3), round(high, 3)
        (0.324, 0.513)
        """
        if self.games < 2:
            return self.score, self.score
        half = Z95 * self.standard_error()
        return max(0.0, self.score - half), min(1.0, self.score + half)

    def standard_error(self) -> float:
        """The score's standard error, ``sd / sqrt(games)`` with ``sd`` the spread of the games' own scores (a draw
        is half a point, so draws narrow it: not the binomial ``sqrt(p (1 - p) / games)``); NaN below two games.

        >>> round(PairStats("a", "b", games=4, wins=1, draws=2, losses=1).standard_error(), 4)
        0.2041
        """
        if self.games < 2:
            return float("nan")
        mean = self.score
        square_sum = (self.wins * (1 - mean) ** 2 + self.draws * (0.5 - mean) ** 2 + self.losses * mean ** 2)
        return math.sqrt(square_sum / (self.games - 1) / self.games)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(points=self.points, score=self.score, ci95=list(self.interval()),
                 mean_plies=self.plies / self.games if self.games else None)
        return d


def pair_stats(records: Iterable[dict]) -> dict[tuple[str, str], PairStats]:
    """Results from both sides' point of view: ``stats[(x, y)]`` is x's record against y."""
    stats: dict[tuple[str, str], PairStats] = {}
    for r in records:
        for me, other, s in ((r["a"], r["b"], r["score_a"]), (r["b"], r["a"], 1.0 - r["score_a"])):
            st = stats.setdefault((me, other), PairStats(me, other))
            st.games += 1
            st.plies += r["plies"]
            mate = r["termination"] == "checkmate"
            st.adjudicated += r["termination"].startswith("adjudication")
            if s == 1.0:
                st.wins += 1
                st.wins_by_mate += mate
            elif s == 0.0:
                st.losses += 1
                st.losses_by_mate += mate
            else:
                st.draws += 1
    return stats


def pairings(records: Sequence[dict], player: str | None = None) -> dict[tuple[str, str], list[float]]:
    """Each pairing once, in the order first played, as ``(player, opponent)``, with the seconds its games took: seen
    from ``player``'s side when it played it, else as its first game named the sides (games that name them the other
    way round, from another match, pool into it)."""
    walls: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        a, b = r["a"], r["b"]
        flip = b == player if player in (a, b) else (b, a) in walls
        walls[(b, a) if flip else (a, b)].append(r.get("wall", 0.0))
    return walls


def format_scores(records: Sequence[dict], player: str | None = None) -> str:
    """One line per pairing (:func:`pairings`): score and its 95% interval, W/D/L, wins by mate, mean plies,
    seconds a game."""
    lines = [f"{'player':<24} {'opponent':<16} {'games':>5} {'score':>6} {'95% interval':<14}  {'W-D-L':<11} "
             f"{'mates':>5} {'plies':>5} {'s/game':>7}"]
    stats = pair_stats(records)
    for (a, b), w in pairings(records, player).items():
        st = stats[(a, b)]
        low, high = st.interval()
        lines.append(f"{a:<24} {b:<16} {st.games:>5} {st.score:>6.3f} {f'[{low:.3f}, {high:.3f}]':<14}  "
                     f"{f'{st.wins}-{st.draws}-{st.losses}':<11} {st.wins_by_mate:>5} "
                     f"{st.plies / st.games:>5.0f} {sum(w) / len(w):>7.2f}")
    return "\n".join(lines)
