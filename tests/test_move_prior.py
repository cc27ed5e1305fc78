"""The move prior and the time-use summary: a move played more often than its legal share gets a
positive prior, a zero weight keeps the one-ply choice, and paired differences are paired."""

from __future__ import annotations

import chess
import pytest

from knights.lab.arena.time_use import summary
from knights.lab.results.move_prior import choices, fit_prior, move_key, quiet


def test_the_prior_favours_the_moves_played_and_mirrors_black():
    start = chess.Board()
    black = chess.Board()
    black.push_uci("e2e4")
    rows = [(start, chess.Move.from_uci("g1f3"))] * 30 + [(black, chess.Move.from_uci("g8f6"))] * 30
    prior, n = fit_prior(rows)
    assert n == 60
    knight = move_key(start, chess.Move.from_uci("g1f3"))
    assert knight == move_key(black, chess.Move.from_uci("g8f6"))      # the same move from the mover's side
    assert prior[knight] > 1.0
    assert prior[move_key(start, chess.Move.from_uci("a2a3"))] < 0      # legal, never played
    assert quiet(start, chess.Move.from_uci("g1f3"))
    assert not quiet(chess.Board("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1"), chess.Move.from_uci("e4d5"))


def test_a_zero_weight_keeps_the_values_choice_and_a_large_one_follows_the_prior():
    a, b = chess.Move.from_uci("a2a3"), chess.Move.from_uci("g1f3")
    cands = [[(a, 0.30, True, 1), (b, 0.25, True, 2)]]
    prior = [0.0, -1.0, 1.0]
    assert choices(cands, prior, 0.0) == [a]
    assert choices(cands, prior, 0.1) == [b]
    assert choices([[(a, 0.30, False, 1), (b, 0.25, True, 2)]], [0.0, 5.0, 0.0], 1.0) == [a]   # no prior off-quiet


def test_time_use_pairs_each_position_with_itself():
    base = [{"seconds": 0.6, "depth": 7, "cut": False, "changed": False, "best": False, "loss": 30, "move": "e2e4"},
            {"seconds": 0.7, "depth": 8, "cut": False, "changed": False, "best": True, "loss": 0, "move": "d2d4"}]
    more = [{**base[0], "seconds": 1.0, "cut": True, "changed": True, "loss": 10, "move": "g1f3"},
            {**base[1], "seconds": 1.0, "cut": True, "loss": 0}]
    row = summary(more, base)
    assert row["cp_loss_minus_first"] == -10.0
    assert row["cp_loss_minus_first_se"] == pytest.approx(10.0)
    assert row["same_move_as_first"] == 0.5 and row["cut_share"] == 1.0 and row["changed_by_cut_share"] == 0.5
    assert "cp_loss_minus_first" not in summary(base, None)
