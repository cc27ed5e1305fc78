"""Where the real-clock games were decided: real Stockfish judges a real lost game, and a run with a
missing PGN names the record."""

import json

import chess
import chess.pgn
import pytest

from knights.lab.arena.where_lost import run, summarise


def _write_run(folder, moves, *, ours_white=True, score=0.0, book=0, pgn=True):
    """A run folder as ``make clock-strength`` writes it: games.jsonl and one PGN."""
    game = chess.pgn.Game()
    node = game
    for uci in moves:
        node = node.add_variation(chess.Move.from_uci(uci))
    game.headers["OpeningPlies"] = str(book)
    games = folder / "bot__vs__sf"
    games.mkdir(parents=True)
    if pgn:
        (games / "g0001.pgn").write_text(str(game) + "\n")
    white, black = ("search:bot", "sf-elo:2200") if ours_white else ("sf-elo:2200", "search:bot")
    record = {"white": white, "black": black, "a": "search:bot", "b": "sf-elo:2200", "index": 0, "score_a": score,
              "plies": len(moves), "pgn_file": "bot__vs__sf/g0001.pgn"}
    (folder / "games.jsonl").write_text(json.dumps(record) + "\n")


def test_a_blunder_into_mate_is_where_the_game_was_decided(tmp_path):
    _write_run(tmp_path / "1000ms", ["f2f3", "e7e5", "g2g4", "d8h4"])      # the fool's mate, the bot White
    doc = run([tmp_path / "1000ms"], depth=6, out=tmp_path / "where.json", progress=False)
    r = doc["runs"]["1000ms"]
    assert json.loads((tmp_path / "where.json").read_text())["runs"]["1000ms"] == r
    assert r["player"] == "search:bot" and r["opponents"] == ["sf-elo:2200"]
    assert r["losses"]["games"] == 1 and r["losses"]["decided"] == 1
    assert r["losses"]["median_decided_ply"] == 3                 # 2. g4 lets the queen mate
    assert r["losses"]["decided_in"]["middlegame"] == 1
    assert r["losses"]["behind"] == 1 and r["losses"]["median_behind_ply"] <= 3
    mid = r["by_phase"]["middlegame"]
    assert mid["ours"]["moves"] == 2 and mid["opponents"]["moves"] == 2
    assert mid["ours"]["total"] > 0.4 > mid["opponents"]["total"]   # g4 gave the game away, the mate took nothing


def test_the_book_counts_for_neither_side(tmp_path):
    _write_run(tmp_path / "1000ms", ["f2f3", "e7e5", "g2g4", "d8h4"], book=2)
    r = run([tmp_path / "1000ms"], depth=6, out=tmp_path / "w.json", progress=False)["runs"]["1000ms"]
    mid = r["by_phase"]["middlegame"]
    assert mid["ours"]["moves"] == 1 and mid["opponents"]["moves"] == 1
    assert r["losses"]["median_decided_ply"] == 3


def test_a_won_game_is_never_decided_against_the_bot():
    plies = [{"ours": k % 2 == 0, "phase": 24, "given": 0.0 if k % 2 == 0 else 0.4, "win": 0.9} for k in range(4)]
    r = summarise([{"score": 1.0, "book": 0, "plies": plies}])
    assert r["losses"] == {"games": 0, "decided": 0, "behind": 0}
    assert r["by_phase"]["middlegame"]["ours"]["total"] == 0.0
    assert r["by_phase"]["middlegame"]["opponents"]["total"] == pytest.approx(0.8)


def test_a_record_without_its_pgn_is_named(tmp_path):
    _write_run(tmp_path / "1000ms", ["e2e4"], pgn=False)
    with pytest.raises(FileNotFoundError, match=r"games.jsonl, line 1: its PGN .*g0001.pgn is missing"):
        run([tmp_path / "1000ms"], depth=2, out=tmp_path / "w.json", progress=False)
    assert not (tmp_path / "w.json").exists()


def test_a_line_that_is_not_a_record_is_named(tmp_path):
    _write_run(tmp_path / "1000ms", ["e2e4"])
    with (tmp_path / "1000ms" / "games.jsonl").open("a") as fh:
        fh.write('{"white": "cut short\n')
    with pytest.raises(ValueError, match=r"games.jsonl, line 2: not a game record"):
        run([tmp_path / "1000ms"], depth=2, out=tmp_path / "w.json", progress=False)


def test_a_folder_holding_two_networks_games_judges_each_apart(tmp_path):
    # a run over a replaced network stays in its folder when the search's network changes: its games are its own
    from knights.engine.spec import SEARCH_NETWORK

    folder = tmp_path / "1000ms"
    _write_run(folder, ["f2f3", "e7e5", "g2g4", "d8h4"])                  # an old network's lost game
    old = json.loads((folder / "games.jsonl").read_text())
    old.update(a="search:EL/v1@1000", white="search:EL/v1@1000")
    new = dict(old, a=f"search:{SEARCH_NETWORK}@1000", white=f"search:{SEARCH_NETWORK}@1000", score_a=1.0)
    (folder / "games.jsonl").write_text(json.dumps(old) + "\n" + json.dumps(new) + "\n")
    runs = run([folder], depth=2, out=tmp_path / "w.json", progress=False)["runs"]
    assert set(runs) == {"1000ms", "1000ms, EL/v1"}
    assert runs["1000ms"]["player"] == f"search:{SEARCH_NETWORK}@1000" and runs["1000ms"]["games"] == 1
    assert runs["1000ms"]["losses"]["games"] == 0                          # its one game, won
    assert runs["1000ms, EL/v1"]["player"] == "search:EL/v1@1000" and runs["1000ms, EL/v1"]["games"] == 1
    assert runs["1000ms, EL/v1"]["losses"]["games"] == 1
    # two bots over the default network (its opening fixed beside it) would share a name: an error, not a merge
    other = dict(new, a=f"search:{SEARCH_NETWORK}:det@1000", white=f"search:{SEARCH_NETWORK}:det@1000")
    (folder / "games.jsonl").write_text(json.dumps(new) + "\n" + json.dumps(other) + "\n")
    with pytest.raises(ValueError, match="two bots' games would both be '1000ms'"):
        run([folder], depth=2, out=tmp_path / "w2.json", progress=False)
