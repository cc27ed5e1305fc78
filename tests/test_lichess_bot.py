"""``lichess_bot/homemade.py`` loaded as lichess-bot loads it.

lichess-bot is not a package, so the test provides the one name of its interface the
file imports, ``lib.engine_wrapper.MinimalEngine`` (same constructor signature),
through ``sys.modules``; everything else (our engine, python-chess's ``PlayResult``
and ``Limit``) is real."""

from __future__ import annotations

import importlib.util
import random
import sys
import types
from pathlib import Path

import chess
import chess.engine
import pytest

HOMEMADE = Path(__file__).resolve().parent.parent / "lichess_bot" / "homemade.py"


class MinimalEngine:
    """lichess-bot's base class of homemade engines, reduced to its constructor."""

    def __init__(self, commands, options, stderr, draw_or_resign, game=None, name=None, **popen_args):
        self.engine_name = self.__class__.__name__ if name is None else name

    def search(self, board, time_limit, ponder, draw_offered, root_moves):
        raise NotImplementedError


@pytest.fixture
def homemade(monkeypatch):
    lib = types.ModuleType("lib")
    lib.__path__ = []  # a package
    wrapper = types.ModuleType("lib.engine_wrapper")
    wrapper.MinimalEngine = MinimalEngine
    lib.engine_wrapper = wrapper
    monkeypatch.setitem(sys.modules, "lib", lib)
    monkeypatch.setitem(sys.modules, "lib.engine_wrapper", wrapper)
    spec = importlib.util.spec_from_file_location("homemade_under_test", HOMEMADE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make(homemade, **options):
    options.setdefault("Evaluator", "material")
    return homemade.KnightsKernels(["knights"], options, None, None, None)


CLOCK = chess.engine.Limit(white_clock=60, black_clock=60, white_inc=0, black_inc=0)
NO_MOVE = chess.engine.PlayResult(None, None)   # what lichess-bot passes when no book/tablebase move


def test_search_plays_legal_moves_for_whole_games(homemade):
    bot = make(homemade, Seed=1)
    assert isinstance(bot, MinimalEngine) and bot.engine_name == "KnightsKernels"
    for seed in range(3):
        rng = random.Random(seed)
        board = chess.Board()
        while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 160:
            if board.turn == (seed % 2 == 0):
                result = bot.search(board.copy(), CLOCK, False, False, NO_MOVE)
                assert isinstance(result, chess.engine.PlayResult)
                assert result.move in board.legal_moves
                assert result.info["depth"] == 1 and isinstance(result.info["score"], chess.engine.PovScore)
                board.push(result.move)
            else:
                board.push(rng.choice(list(board.legal_moves)))


def test_root_moves_are_honoured(homemade):
    bot = make(homemade, Seed=2)
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    only = [chess.Move.from_uci("h2h3"), chess.Move.from_uci("g2g3")]
    for _ in range(10):
        assert bot.search(board, chess.engine.Limit(time=1), False, False, list(only)).move in only
    # no list (a PlayResult without a move, or an empty list): all moves; the mate is found
    assert bot.search(board, CLOCK, False, False, NO_MOVE).move == chess.Move.from_uci("a1a8")
    result = bot.search(board, CLOCK, False, False, [])
    assert result.move == chess.Move.from_uci("a1a8")
    assert result.info["score"] == chess.engine.PovScore(chess.engine.Mate(1), chess.WHITE)


def test_draw_offers_and_options(homemade):
    bot = make(homemade, stochastic="false", SEED=3, capturebonus=15)
    assert bot.knights.stochastic is False and bot.knights.capture_bonus == pytest.approx(0.15)
    losing = chess.Board("4k3/8/8/3q4/8/8/8/4K3 w - - 0 1")     # White to move, a queen down
    result = bot.search(losing, CLOCK, False, True, NO_MOVE)
    assert result.draw_offered is True and result.move in losing.legal_moves
    winning = chess.Board("4k3/8/8/3q4/8/8/8/4K3 b - - 0 1")    # Black to move, a queen up
    assert bot.search(winning, CLOCK, False, True, NO_MOVE).draw_offered is False
    assert bot.search(losing, CLOCK, False, False, NO_MOVE).draw_offered is False


def test_the_config_example_has_no_token():
    text = (HOMEMADE.parent / "config.yml").read_text()
    assert 'token: ""' in text and "LICHESS_BOT_TOKEN" in text
    assert 'name: "KnightsKernels"' in text and 'protocol: "homemade"' in text and 'protocol: "uci"' in text
    launcher = HOMEMADE.parent / "knights-uci"
    assert launcher.read_text().startswith("#!/bin/sh") and "knights.cli uci" in launcher.read_text()
