"""Scores of a match: each player's record against each opponent, from game records.

The records are the dicts :func:`knights.lab.arena.matches.run_games` returns (or
:func:`~knights.lab.arena.matches.load_records` reads back); every game counts for both
sides::

    stats = pair_stats(records)
    stats[("greedy", "random")].score      # greedy's points per game against random
    print(format_scores(records))          # one line per pairing

Wins by checkmate are counted apart from the others, so "won outright" can be told
from "was ahead when the game was adjudicated".
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


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

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(points=self.points, score=self.score,
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


def format_scores(records: Sequence[dict]) -> str:
    """One line per pairing: score, W/D/L, wins by mate, mean plies, seconds a game."""
    lines = [f"{'player':<24} {'opponent':<16} {'games':>5} {'score':>6}  {'W-D-L':<11} {'mates':>5} "
             f"{'plies':>5} {'s/game':>7}"]
    stats = pair_stats(records)
    walls: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        walls[(r["a"], r["b"])].append(r.get("wall", 0.0))
    for (a, b), w in walls.items():
        st = stats[(a, b)]
        lines.append(f"{a:<24} {b:<16} {st.games:>5} {st.score:>6.3f}  "
                     f"{f'{st.wins}-{st.draws}-{st.losses}':<11} {st.wins_by_mate:>5} "
                     f"{st.plies / st.games:>5.0f} {sum(w) / len(w):>7.2f}")
    return "\n".join(lines)
