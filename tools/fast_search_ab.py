"""Self-play A/B of the compiled search's parts: is each one worth keeping?

A measurement, not a test. For each part named (knights.engine.compiled_search.FEATURES, and
``aspiration`` for the root's aspiration windows), the full search plays the same search
with that part switched off, from the arena's openings (each twice, colours swapped), a
fixed number of nodes a move (so that the machine's load does not decide: every part
trades nodes for depth or accuracy, which equal nodes measure), deterministic. Prints
the full search's score against each variant with a 95% interval and writes JSON::

    .venv/bin/python tools/fast_search_ab.py --games 24 --nodes 6000 --out runs/fast/ab.json

A part named ``net:EL/vN`` plays the full search over that network instead (the same shape
as EL/v13's, e.g. ``net:EL/v13``): which network the default search should use. The full
search plays :data:`knights.engine.spec.SEARCH_NETWORK` (EL/v25 since it beat EL/v24 at a
time control: search_strength.json's ``network_ab_v25``); each A/B that chose a default ran
against the default before it, so ``net:EL/v24`` now measures that choice again, the score
inverted.
The part ``judged_stage`` plays the search whose one-ply stage judges each move where the
captures end instead of reading the network on the position as it stands, as the shipped
search's stage does: the printed score is the shipped search's against it.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import chess

from knights.engine.compiled_search import FEATURES, FastSearchEngine, default_net_source, net_name
from knights.engine.incremental import load_net
from knights.engine.judged import QuiescenceEvaluator
from knights.engine.search import SearchLimits
from knights.lab.arena.game import Settings, play_game
from knights.lab.arena.openings import OPENINGS


class NodesPlayer:
    """A FastSearchEngine searching a fixed number of nodes a move, as an arena player."""

    def __init__(self, engine: FastSearchEngine, nodes: int, name: str, movetime: float | None = None) -> None:
        self.engine, self.nodes, self.name, self.movetime = engine, nodes, name, movetime

    def choose_move(self, board: chess.Board) -> chess.Move:
        limits = SearchLimits.movetime(self.movetime) if self.movetime else SearchLimits(nodes=self.nodes)
        return self.engine.choose(board, limits=limits).move

    def new_game(self) -> None:
        self.engine.new_game()

    def reseed(self, seed: int | None) -> None:
        pass

    def close(self) -> None:
        pass


def variant(off: str | None, nodes: int, movetime: float | None = None) -> NodesPlayer:
    """The full search (``off`` None), the search with one part off, or, for ``net:EL/vN``,
    the full search over another network of EL/v13's shape."""
    if off is not None and off.startswith("net:"):
        return NodesPlayer(FastSearchEngine(net=off[4:], stochastic=False), nodes, off, movetime)
    if off == "judged_stage":           # the one-ply stage judging each move where the captures end (not shipped)
        source = default_net_source()
        judged = QuiescenceEvaluator(load_net(source), name=net_name(source), check_plies=0)
        return NodesPlayer(FastSearchEngine(judged, stochastic=False), nodes, "judged_stage", movetime)
    features = {off: False} if off in FEATURES else None
    aspiration = 0 if off == "aspiration" else 40
    engine = FastSearchEngine(stochastic=False, features=features, aspiration=aspiration)
    return NodesPlayer(engine, nodes, "full" if off is None else f"no-{off}", movetime)


def interval(scores: list[float]) -> tuple[float, float, float]:
    n = len(scores)
    mean = sum(scores) / n
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / max(1, n - 1))
    half = 1.96 * sd / math.sqrt(n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--nodes", type=int, default=6000)
    parser.add_argument("--movetime", type=float, default=None,
                        help="seconds a move instead of a node count (the parts that trade nodes for depth)")
    parser.add_argument("--parts", nargs="*", default=[*FEATURES, "aspiration"])
    parser.add_argument("--out", default="runs/fast/ab.json")
    args = parser.parse_args()
    settings = Settings(max_plies=240)
    results = {}
    for part in args.parts:
        full, other = variant(None, args.nodes, args.movetime), variant(part, args.nodes, args.movetime)
        scores, started = [], time.time()
        wins = draws = losses = 0
        for g in range(args.games):
            opening = OPENINGS[(g // 2) % len(OPENINGS)]
            white, black = (full, other) if g % 2 == 0 else (other, full)
            record = play_game(white, black, opening, settings)
            s = {"1-0": 1.0, "0-1": 0.0}.get(record.result, 0.5)
            s = s if g % 2 == 0 else 1.0 - s
            scores.append(s)
            wins, draws, losses = wins + (s == 1.0), draws + (s == 0.5), losses + (s == 0.0)
        mean, low, high = interval(scores)
        results[part] = {"games": len(scores), "score_of_full": round(mean, 3), "ci95": [round(low, 3), round(high, 3)],
                         "w_d_l": [wins, draws, losses],
                         "per_move": f"{args.movetime} s" if args.movetime else f"{args.nodes} nodes",
                         "seconds": round(time.time() - started)}
        print(f"full vs no-{part}: {mean:.3f} [{low:.3f}, {high:.3f}] +{wins} ={draws} -{losses} "
              f"({time.time() - started:.0f} s)", flush=True)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
