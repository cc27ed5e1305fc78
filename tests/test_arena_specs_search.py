"""Search players in the arena: the ``search`` specs (knights.arena.specs)."""

from __future__ import annotations

import chess
import pytest

from knights.arena.specs import build_player, check_spec
from knights.play.game import Settings
from knights.play.search import SearchEngine


def test_search_specs_are_checked_and_built():
    assert check_spec(" search:material:stoch ") == "search:material"
    assert check_spec("search3:material:det") == "search3:material:det"
    assert check_spec("search:material@250") == "search:material@250"
    timed = build_player("search:material@250", seed=1)
    assert isinstance(timed.engine, SearchEngine) and timed.engine.movetime == 0.25
    fixed = build_player("search3:material:det")
    assert fixed.engine.depth == 3 and fixed.engine.movetime is None and fixed.engine.stochastic is False
    clocked = build_player("search:material", Settings(movetime_ms=400))
    assert clocked.engine.movetime == 0.4 and clocked.engine.depth == 64
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    assert fixed.choose_move(board) == chess.Move.from_uci("a1a8")


@pytest.mark.parametrize("spec", ["search:material@x", "search:material@0", "search99:material"])
def test_bad_search_specs_are_refused(spec):
    with pytest.raises(ValueError, match="search"):
        check_spec(spec)
