"""Move quality: lichess's formulas, and games judged by the real Stockfish."""

from __future__ import annotations

import io
import json
import math

import chess.pgn
import pytest

from knights.cli import main as cli_main
from knights.lab.arena import quality

FOOLS_MATE = '[White "w"]\n[Black "b"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n'


def test_win_percent_matches_lichess():
    assert quality.win_percent(0) == pytest.approx(50.0)
    assert quality.win_percent(100) == pytest.approx(50 + 50 * (2 / (1 + math.exp(-0.368208)) - 1))
    assert quality.win_percent(300) + quality.win_percent(-300) == pytest.approx(100.0)
    assert quality.win_percent(5000) == quality.win_percent(1000)  # clamped to +-1000 cp
    assert 0 < quality.win_percent(-1000) < 3 and 97 < quality.win_percent(1000) < 100


def test_move_accuracy_and_classes():
    assert quality.move_accuracy(60, 60) == pytest.approx(103.1668 - 3.1669)
    assert quality.move_accuracy(40, 70) == 100.0          # improving moves are clamped
    assert quality.move_accuracy(100, 0) == 0.0            # and so are disasters
    assert quality.move_accuracy(50, 40) == pytest.approx(103.1668 * math.exp(-0.4354) - 3.1669)
    assert [quality.classify(d) for d in (5, 10, 19.9, 20, 29.9, 30, 80)] == [
        None, "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder", "blunder"]
    assert quality.score_cp(None, 3) == 1000 and quality.score_cp(None, -1) == -1000
    assert quality.score_cp(-2500, None) == -1000 and quality.score_cp(42, None) == 42


def test_fools_mate_is_judged(stockfish):
    game = chess.pgn.read_game(io.StringIO(FOOLS_MATE))
    result = quality.analyse_game(game, depth=8)
    moves = result["moves"]
    assert [m["san"] for m in moves] == ["f3", "e5", "g4", "Qh4#"]
    g4, mate = moves[2], moves[3]
    assert g4["class"] == "blunder" and g4["eval_after"] == -1000 and g4["accuracy"] < 20
    assert mate["eval_after"] == 1000 and mate["cp_loss"] == 0 and mate["accuracy"] == pytest.approx(100, abs=0.01)
    white, black = result["players"]["white"], result["players"]["black"]
    assert white["moves"] == 2 and black["moves"] == 2
    assert white["blunders"] == 1 and black["blunders"] == 0
    assert white["accuracy"] < black["accuracy"]
    assert white["acpl"] == pytest.approx((moves[0]["cp_loss"] + g4["cp_loss"]) / 2, abs=0.06)


def test_book_moves_are_skipped(stockfish):
    game = chess.pgn.read_game(io.StringIO(FOOLS_MATE.replace('[Result', '[OpeningPlies "2"]\n[Result')))
    result = quality.analyse_game(game, depth=6)
    assert [m["ply"] for m in result["moves"]] == [3, 4]


def test_cli_one_game_and_a_folder(stockfish, tmp_path, capsys):
    folder = tmp_path / "match"
    (folder / "pair").mkdir(parents=True)
    (folder / "pair" / "g0001.pgn").write_text(FOOLS_MATE)
    (folder / "g0002.pgn").write_text(FOOLS_MATE.replace('"w"', '"x"'))
    assert cli_main(["quality", str(folder / "g0002.pgn"), "--depth", "6"]) == 0
    out = capsys.readouterr().out
    assert "Qh4#" in out and "blunder" in out
    target = tmp_path / "quality.json"
    assert cli_main(["quality", str(folder), "--depth", "6", "--workers", "1", "--quiet",
                     "--out", str(target)]) == 0
    summary = json.loads(target.read_text())
    assert summary["games"] == 2 and summary["depth"] == 6
    assert set(summary["players"]) == {"w", "x", "b"}
    assert summary["players"]["b"]["games"] == 2 and summary["players"]["b"]["moves"] == 4
    assert summary["players"]["w"]["blunders"] == 1
    pairs = {(p["player"], p["opponent"]) for p in summary["pairings"]}
    assert pairs == {("w", "b"), ("b", "w"), ("x", "b"), ("b", "x")}
    assert cli_main(["quality", str(tmp_path / "missing.pgn")]) == 2
