"""Behaviour pinned across refactors: the bot's moves on fixed seeds, every evaluator's
values on fixed positions, and the bytes of every shipped network.

``tests/data/golden_bot.json`` was written by :func:`record` on the code before the
one-way architecture change (run ``python tests/test_golden.py`` to rewrite it, only
when a change of behaviour is intended and explained in its commit). Each evaluator
plays three games from the start position: the engine (stochastic opening, fixed
seed) against a seeded random mover as White and as Black, and the engine against
itself.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from knights.board.arrays import board_from_arrays
from knights.board.positions import positions_from_boards
from knights.data.chunks import read_chunk
from knights.engine.one_ply import OnePlyEngine
from knights.evaluate.load import load_evaluator
from knights.learn import registry

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "golden_bot.json"
EVALUATORS = ["material", "material+threats", "EL/v1", "EL/v3", "EL/v5", "EL/v8", "EL/v9", "EL/v10",
              "EL/v10+threats", "democracy", "democracy+threats"]
SEED = 1234


def state_digest(state: dict) -> str:
    h = hashlib.sha256()
    for key in sorted(state):
        h.update(key.encode())
        h.update(state[key].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def games(evaluator, seed: int) -> list[list[str]]:
    out = []
    for g, colour in enumerate((chess.WHITE, chess.BLACK)):
        engine = OnePlyEngine(evaluator, stochastic=True, seed=seed + g)
        rnd = random.Random(seed * 31 + g)
        board, moves = chess.Board(), []
        while not board.is_game_over(claim_draw=True) and len(moves) < 80:
            if board.turn == colour:
                move = engine.choose(board).move
            else:
                move = rnd.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
            moves.append(move.uci())
            board.push(move)
        out.append(moves)
    engine = OnePlyEngine(evaluator, stochastic=True, seed=seed + 7)
    board, moves = chess.Board(), []
    while not board.is_game_over(claim_draw=True) and len(moves) < 60:
        move = engine.choose(board).move
        moves.append(move.uci())
        board.push(move)
    out.append(moves)
    return out


def sample_boards() -> list[chess.Board]:
    block, _ = read_chunk(ROOT / "data" / "sample" / "Sample_k")
    rows = np.linspace(0, len(block.white) - 1, 48).astype(int)
    return [board_from_arrays(block.squares[i], bool(block.white[i])) for i in rows]


def record() -> dict:
    boards = sample_boards()
    result: dict = {"fens": [b.fen() for b in boards], "evaluators": {}, "models": {}}
    for name in EVALUATORS:
        ev = load_evaluator(name)
        values = np.asarray(ev.evaluate(positions_from_boards(boards)), dtype=np.float64)
        result["evaluators"][name] = {"values": [round(float(v), 6) for v in values], "games": games(ev, SEED)}
    for name in registry.shipped():   # the weights in git (status shipped or kept in source_*/versions.toml)
        model, _ = registry.get(name).load()
        result["models"][name] = state_digest(model.state_dict())
    return result


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


def test_sample_positions_are_the_recorded_ones(golden):
    assert [b.fen() for b in sample_boards()] == golden["fens"]


@pytest.mark.parametrize("name", EVALUATORS)
def test_evaluator_values_and_games_are_unchanged(golden, name):
    ev = load_evaluator(name)
    boards = [chess.Board(fen) for fen in golden["fens"]]
    values = np.asarray(ev.evaluate(positions_from_boards(boards)), dtype=np.float64)
    np.testing.assert_allclose(values, golden["evaluators"][name]["values"], atol=2e-5)
    assert games(ev, SEED) == golden["evaluators"][name]["games"]


def test_shipped_networks_load_bit_identically(golden):
    trained = {name: registry.get(name) for name in registry.shipped()}   # archived ones are not in git
    assert set(trained) == set(golden["models"])
    for name, version in trained.items():
        model, _ = version.load()
        assert state_digest(model.state_dict()) == golden["models"][name], name


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
