"""The shipped bots pinned: their moves and scores on fixed positions, the shipped evaluators' values, the bytes of
every network in git.

``tests/data/golden_bot.json`` is written by :func:`record` (``python tests/test_golden.py``); rewrite it only when
a change of behaviour is intended, and say why in the commit. Everything here is deterministic: the bots play with
their stochastic opening off, each search starts from empty tables, and nothing depends on the clock (the search
stops at a fixed depth).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from knights.board.arrays import board_from_arrays
from knights.board.positions import positions_from_boards
from knights.data.chunks import read_chunk
from knights.engine.build import build, evaluator
from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK
from knights.learn import registry

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "golden_bot.json"
BOTS = {"one-ply bot": "ours:default:det", "search": "search4:default:det", "material search": "search3:material:det"}
"""The shipped bots (the one-ply bot and the search, each with its default evaluator) and the Python search."""
EVALUATORS = ("material", "material+qsearch", SEARCH_NETWORK, ONE_PLY_EVALUATOR, "democracy")
"""The shipped evaluators: the search's network, the one-ply bot's democracy, the classical democracy."""
POSITIONS = 24


def state_digest(state: dict) -> str:
    h = hashlib.sha256()
    for key in sorted(state):
        h.update(key.encode())
        h.update(state[key].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def sample_boards() -> list[chess.Board]:
    """Fixed positions of the committed sample, spread over its test chunk."""
    block, _ = read_chunk(ROOT / "data" / "sample" / "Sample_k")
    rows = np.linspace(0, len(block.white) - 1, POSITIONS).astype(int)
    return [board_from_arrays(block.squares[i], bool(block.white[i])) for i in rows]


def decisions(spec: str, boards: list[chess.Board]) -> list[list[object]]:
    """``[move, score]`` of the bot ``spec`` on each board, every search from empty tables."""
    engine = build(spec)
    out: list[list[object]] = []
    for board in boards:
        engine.new_game()
        decision = engine.choose(board)
        out.append([decision.move.uci(), round(float(decision.score), 4)])
    return out


def values(name: str, boards: list[chess.Board]) -> list[float]:
    return [round(float(v), 6) for v in evaluator(name).evaluate(positions_from_boards(boards))]


def record() -> dict:
    boards = sample_boards()
    return {"fens": [b.fen() for b in boards],
            "bots": {name: decisions(spec, boards) for name, spec in BOTS.items()},
            "evaluators": {name: values(name, boards) for name in EVALUATORS},
            "models": {name: state_digest(registry.get(name).load()[0].state_dict()) for name in registry.shipped()}}


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


def test_the_positions_are_the_recorded_ones(golden):
    assert [b.fen() for b in sample_boards()] == golden["fens"]


@pytest.mark.parametrize("name", BOTS)
def test_the_shipped_bots_choose_as_recorded(golden, name):
    boards = [chess.Board(fen) for fen in golden["fens"]]
    got, want = decisions(BOTS[name], boards), golden["bots"][name]
    assert [m for m, _ in got] == [m for m, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-3)


@pytest.mark.parametrize("name", EVALUATORS)
def test_the_shipped_evaluators_value_as_recorded(golden, name):
    boards = [chess.Board(fen) for fen in golden["fens"]]
    np.testing.assert_allclose(values(name, boards), golden["evaluators"][name], atol=2e-5)


def test_the_networks_in_git_load_bit_identically(golden):
    trained = {name: registry.get(name) for name in registry.shipped()}   # archived ones are not in git
    assert set(trained) == set(golden["models"])
    for name, version in trained.items():
        model, _ = version.load()
        assert state_digest(model.state_dict()) == golden["models"][name], name


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
