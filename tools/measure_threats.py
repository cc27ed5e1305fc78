"""The figures in :mod:`knights.evaluate.threats`' docstring: how the vectorised threat
term agrees with its python-chess reference, what it costs per engine decision, and
how the bot plays with it against the term it replaced.

    .venv/bin/python tools/measure_threats.py [--games 20]

About a minute on one core. "old" is the term as the bot played it before:
python-chess legal captures, a capture "defended" when its square was attacked
*before* the capture (``threat_oracle.capture_threat(board, after_capture=False)``),
one ``Board`` per position.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import chess
import numpy as np

from knights.board.arrays import boards_from_arrays
from knights.board.children import expand
from knights.board.positions import Positions
from knights.data.chunks import Encoded, read_chunk
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.base import BoardsMixin, Evaluator
from knights.evaluate.load import load_evaluator
from knights.evaluate.threats import THREATS_SUFFIX, threat_term
from knights.features.attacks import capture_gains, legal_capture_gains
from knights.lab.arena.game import Settings, play_game
from knights.lab.arena.players import EnginePlayer, GreedyPlayer, RandomPlayer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))   # the python-chess reference the tests check the term against
from threat_oracle import capture_threat  # type: ignore[import-not-found]  # noqa: E402


def old_term(positions: Positions) -> np.ndarray:
    """The replaced term, White's side: a python-chess board and a capture loop per position."""
    boards = boards_from_arrays(positions.squares, positions.white)
    return np.array([capture_threat(b, after_capture=False) * (1 if b.turn else -1) for b in boards], np.float32)


class OldThreatEvaluator(BoardsMixin):
    """``base`` plus :func:`old_term`: the '+threats' evaluator as it was."""

    def __init__(self, base: Evaluator) -> None:
        self.base = base
        self.name = f"{base.name}{THREATS_SUFFIX} (old)"

    def evaluate(self, positions: Positions) -> np.ndarray:
        return np.asarray(self.base.evaluate(positions), np.float32) + old_term(positions)


def sample() -> Encoded:
    """Every row of data/sample's chunks."""
    return Encoded.concat([read_chunk(path)[0] for path in sorted((ROOT / "data" / "sample").glob("Sample_*"))])


def children(boards: list[chess.Board]) -> tuple[Positions, list[int]]:
    """The positions after every legal move of each board (the engine's batches) and each batch's size."""
    playable = [b for b in boards if b.is_valid() and any(b.generate_legal_moves())]
    batches = [expand(b) for b in playable]
    white = np.concatenate([np.full(len(c), not b.turn, np.int8) for b, c in zip(playable, batches, strict=True)])
    n = len(white)
    squares = np.concatenate([c.squares for c in batches])
    return Positions(squares, white, np.zeros(n, np.int8), np.zeros(n, np.int8)), [len(c) for c in batches]


def kind_of_difference(board: chess.Board) -> str:
    """Why the pseudo-legal gain may differ from the legal one, the first that applies
    (the boards carry no en-passant square)."""
    if board.is_check():
        return "check"
    if any(board.is_pinned(board.turn, m.from_square) for m in board.generate_pseudo_legal_captures()):
        return "pin"
    if capture_threat(board) != capture_threat(board, after_capture=False):
        return "x-ray"
    return "other"


def agreement(name: str, positions: Positions, ep: np.ndarray | None = None) -> None:
    boards = boards_from_arrays(positions.squares, positions.white)
    new = legal_capture_gains(positions.squares, positions.white)
    reference = np.array([capture_threat(b) for b in boards])
    old = np.array([capture_threat(b, after_capture=False) for b in boards])
    gains = capture_gains(positions.squares)
    pseudo = np.where(positions.white == 1, gains[:, 0], gains[:, 1])
    n = len(boards)
    print(f"{name}: {n} positions")
    print(f"  new == reference          {np.mean(new == reference):.4%}")
    print(f"  new == old                {np.mean(new == old):.4%}: {np.sum(new != old)} differ, all x-rays "
          f"(reference != its before-the-capture variant), new lower in {np.sum(new < old)}")
    kinds = Counter(kind_of_difference(boards[i]) for i in np.flatnonzero(pseudo != reference))
    print(f"  pseudo-legal == reference {np.mean(pseudo == reference):.4%}; the others: "
          + ", ".join(f"{k} {v} ({v / n:.2%})" for k, v in kinds.most_common()))
    if ep is not None:
        with_ep = boards_from_arrays(positions.squares, positions.white, None, ep)
        changed = sum(capture_threat(with_ep[i]) != new[i] for i in np.flatnonzero(ep >= 0))
        print(f"  with the en-passant square known, the reference changes on {changed} positions")


def timing(batches: list[Positions], calls: dict[str, Callable[[Positions], object]], rounds: int = 5) -> None:
    """Milliseconds per batch of each call, the best of ``rounds`` taken in turns (the
    machine is shared: turns spread any load over all of them alike)."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for batch in batches:
                call(batch)
            best[name] = min(best[name], time.perf_counter() - start)
    for name, seconds in best.items():
        print(f"  {name:24s} {1000 * seconds / len(batches):.3f} ms per decision")


def match(evaluator: Evaluator, opponent: str, games: int) -> tuple[float, Counter, list[list[chess.Move]]]:
    """The bot's score (1, 1/2, 0 per game) against ``opponent``, colours alternating,
    fixed seeds; how the games ended; their moves."""
    score, endings, moves = 0.0, Counter[str](), []
    for g in range(games):
        bot = EnginePlayer(OnePlyEngine(evaluator, stochastic=True, seed=1000 + g))
        other = GreedyPlayer(seed=2000 + g) if opponent == "greedy" else RandomPlayer(seed=2000 + g)
        white, black = (bot, other) if g % 2 == 0 else (other, bot)
        record = play_game(white, black, settings=Settings(max_plies=300))
        points = {"1-0": 1.0, "0-1": 0.0}.get(record.result, 0.5)
        score += points if g % 2 == 0 else 1.0 - points
        endings[record.termination] += 1
        moves.append(record.board.move_stack)
    return score, endings, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    data = sample()
    agreement("sample", data, data.ep)
    parents = boards_from_arrays(data.squares[::10], data.white[::10], data.castling[::10])
    kids, sizes = children(parents)
    agreement("children of every 10th", kids)

    starts = np.cumsum([0, *sizes])
    batches = [Positions(*(a[s:e] for a in (kids.squares, kids.white, kids.check, kids.capture)))
               for s, e in itertools.pairwise(starts) if 30 <= e - s <= 40][:300]
    print(f"timing: {len(batches)} decisions of 30-40 children (mean {np.mean([len(b) for b in batches]):.1f})")
    calls: dict[str, Callable[[Positions], object]] = {"old term alone": old_term, "new term alone": threat_term}
    for base in ("material", "democracy"):
        calls[f"{base}+threats old"] = OldThreatEvaluator(load_evaluator(base)).evaluate
        calls[f"{base}+threats new"] = load_evaluator(base + THREATS_SUFFIX).evaluate
    timing(batches, calls)

    print(f"games: {args.games} per pairing, the bot White in the even ones; 'none': no threat term")
    for base in ("material", "democracy"):
        for opponent in ("greedy", "random"):
            played = {}
            for label, evaluator in (("none", load_evaluator(base)), ("old", OldThreatEvaluator(load_evaluator(base))),
                                     ("new", load_evaluator(base + THREATS_SUFFIX))):
                score, endings, played[label] = match(evaluator, opponent, args.games)
                plies = np.mean([len(m) for m in played[label]])
                print(f"  {base:9s} {label:4s} vs {opponent}: {score:g}/{args.games},"
                      f" {plies:.0f} plies a game, {dict(endings)}")
            same = sum(a == b for a, b in zip(played["old"], played["new"], strict=True))
            print(f"  {base:9s} old and new played {same} of {args.games} games move for move alike", flush=True)


if __name__ == "__main__":
    main()
