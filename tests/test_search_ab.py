"""The search's self-play A/B (knights.lab.arena.search_ab): the starts, the pair statistics, resuming, and a real
match at a few hundred nodes a move."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

from knights.lab.arena import search_ab
from knights.lab.arena.openings import OPENINGS


def test_starts_are_the_book_then_random_plies_and_repeat_with_the_seed():
    a = search_ab.starts(25, 2, seed=7)
    assert [b.fen() for b in a] == [b.fen() for b in search_ab.starts(25, 2, seed=7)]
    assert [b.fen() for b in a] != [b.fen() for b in search_ab.starts(25, 2, seed=8)]
    for i, board in enumerate(a):
        book = OPENINGS[i % len(OPENINGS)].board()
        assert board.move_stack[:len(book.move_stack)] == book.move_stack
        assert len(board.move_stack) == len(book.move_stack) + 2
        assert not board.is_game_over()


def _row(pair: int, white: bool, score: float) -> dict:
    return {"pair": pair, "default_white": white, "score": score, "plies": 80,
            "nodes": {"default": 1000, "variant": 900}, "moves": {"default": 10, "variant": 10}}


def test_the_interval_comes_from_the_pairs():
    even = [_row(i, w, s) for i in range(10) for w, s in ((True, 1.0), (False, 0.0))]   # each start wins for White
    row = search_ab.summary(even)
    assert (row["wins"], row["draws"], row["losses"], row["score"], row["elo"]) == (10, 0, 10, 0.5, 0.0)
    assert row["interval"] == [0.0, 0.0]          # every pair scores 1/2: the colours' swing is not noise
    mixed = [_row(i, w, 1.0 if i % 2 else 0.5) for i in range(10) for w in (True, False)]
    row = search_ab.summary(mixed)
    assert row["score"] == 0.75 and row["elo"] > 150
    assert row["interval"][0] < row["elo"] < row["interval"][1]
    assert row["nodes_a_move"] == {"default": 100, "variant": 90}


def test_a_cut_last_line_is_dropped_and_a_bad_line_named(tmp_path: Path):
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps({"pair": 0}) + "\n" + '{"pair": 1, "sco')
    assert search_ab.read_games(path) == [{"pair": 0}]
    assert path.read_text() == json.dumps({"pair": 0}) + "\n"
    path.write_text("not json\n" + json.dumps({"pair": 0}) + "\n")
    with pytest.raises(ValueError, match=r"games.jsonl, line 1: not a game record"):
        search_ab.read_games(path)


def test_an_unknown_part_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="no such part of the search: wings"):
        search_ab.play_variant(["wings"], 2, 200, 2, 1, progress=False, games_dir=tmp_path)


@pytest.mark.slow
def test_a_short_match_is_played_legally_and_resumes(tmp_path: Path):
    out = tmp_path / "ab.json"
    doc = search_ab.run([["lmp"]], pairs=2, nodes=300, random_plies=2, seed=3, out=out, progress=False,
                        games_dir=tmp_path)
    row = doc["variants"]["lmp off"]
    assert row["games"] == 4 and row["wins"] + row["draws"] + row["losses"] == 4
    assert (row["nodes"], row["pairs"], row["seed"]) == (300, 2, 3) and "nodes" not in doc
    games = search_ab.read_games(tmp_path / "lmp_off.jsonl")
    assert {(g["pair"], g["default_white"]) for g in games} == {(0, True), (0, False), (1, True), (1, False)}
    starts = search_ab.starts(2, 2, seed=3)
    for g in games:
        assert g["start"] == starts[g["pair"]].fen() and g["plies"] > len(starts[g["pair"]].move_stack)
        assert 0 < g["nodes"]["default"] <= 300 * g["moves"]["default"] * 2
    again = search_ab.run([["lmp"]], pairs=2, nodes=300, random_plies=2, seed=3, out=out, progress=False,
                          games_dir=tmp_path)
    assert again["variants"]["lmp off"] == row      # nothing replayed
    assert len(search_ab.read_games(tmp_path / "lmp_off.jsonl")) == 4


def test_variants_played_at_other_settings_keep_their_own(tmp_path: Path, monkeypatch):
    out = tmp_path / "ab.json"
    earlier = {"pair": 0, "default_white": True, "score": 1.0, "result": "1-0", "termination": "checkmate",
               "plies": 40, "start": chess.STARTING_FEN, "nodes": {"default": 10, "variant": 10},
               "moves": {"default": 1, "variant": 1}, "nodes_limit": 500, "seed": 1, "random_plies": 2}
    out.write_text(json.dumps({"nodes": 30000, "pairs": 120, "random_plies": 2, "seed": 2024, "command": "old",
                               "variants": {"lmp off": {"games": 240}}}))
    (tmp_path / "lmr_off.jsonl").write_text("".join(json.dumps({**earlier, "pair": p, "default_white": w}) + "\n"
                                                    for p in range(2) for w in (True, False)))
    monkeypatch.setattr(search_ab, "starts", lambda *a: [chess.Board()] * 2)
    doc = search_ab.run([["lmr"]], pairs=2, nodes=500, random_plies=2, seed=1, out=out, progress=False,
                        games_dir=tmp_path)                # every game on disk: nothing played
    assert doc["variants"]["lmp off"] == {"games": 240, "nodes": 30000, "pairs": 120, "random_plies": 2,
                                          "seed": 2024, "command": "old"}
    assert doc["variants"]["lmr off"]["nodes"] == 500 and doc["variants"]["lmr off"]["score"] == 1.0
    assert not {"nodes", "pairs", "command"} & set(doc)
