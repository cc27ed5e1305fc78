"""``knights strength --search`` (knights.lab.arena.search_strength): its arguments checked, and
a small real run (the compiled search against sunfish and Stockfish at 50 ms a move) fitted
and merged into the results file with the previous runs kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knights.cli import build_parser
from knights.engine.spec import SEARCH_NETWORK
from knights.lab.arena import search_strength as ss


def _run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


def test_keys_and_game_counts():
    assert ss.run_key(100) == "0.1s" and ss.run_key(1000) == "1s" and ss.run_key(2500) == "2.5s"
    # --deterministic: the same bot with its stochastic opening off, in runs and folders of its own
    assert ss.run_key(1000, deterministic=True) == "1s det"
    assert ss.player_at(1000) == f"search:{SEARCH_NETWORK}@1000"
    assert ss.player_at(1000, deterministic=True) == f"search:{SEARCH_NETWORK}:det@1000"
    assert ss.network_of(ss.player_at(1000, deterministic=True)) == ss.network_of(ss.player_at(1000)) == SEARCH_NETWORK
    assert ss.games_folder(Path("p"), 1000).name == "1000ms"
    assert ss.games_folder(Path("p"), 1000, deterministic=True).name == "det1000ms"
    assert ss.opponents_for(100, [1350, 2000]) == ["sunfish@100", "sf-elo:1350", "sf-elo:2000"]
    assert ss.opponents_for(100, [1350], sunfish=False) == ["sf-elo:1350"]
    assert ss.games_against("sunfish@1000", 20, 40) == 40
    assert ss.games_against("sf-elo:2000", 20, 40) == 20
    assert ss.games_against("sunfish@1000", 20, None) == 20


def test_bad_arguments_are_refused(tmp_path):
    where = ["--results-dir", str(tmp_path), "--pgn-dir", str(tmp_path / "pgn")]
    with pytest.raises(ValueError, match="too short"):
        _run(["strength", "--search", "--times", "5", *where])
    with pytest.raises(ValueError, match="UCI_Elo"):
        _run(["strength", "--search", "--anchors", "100", *where])
    with pytest.raises(ValueError, match="at least 1"):
        _run(["strength", "--search", "--games", "0", *where])
    with pytest.raises(ValueError, match="--quick"):
        _run(["strength", "--search", "--quick", *where])
    assert not (tmp_path / "search_strength.json").exists()


@pytest.mark.slow
def test_a_small_run_is_played_fitted_and_merged(tmp_path):
    results = tmp_path / "search_strength.json"
    old = {"note": "the old search", "runs": {"1s": {"player": "search:EL/v10@1000", "rating": 1660,
                                                   "interval": [1545, 1775], "games": 40, "vs": {}}},
           "seconds_by_run": {"1s": 999.0}}
    results.write_text(json.dumps(old))
    doc = ss.run_search_strength([50], [1350], 2, results=results, pgn_dir=tmp_path / "pgn", workers=1,
                                 progress=False, command="test")
    run = doc["runs"]["0.05s"]
    assert run["player"] == f"search:{SEARCH_NETWORK}@50" and run["games"] == 4
    assert set(run["vs"]) == {"sunfish@50", "sf-elo:1350"}
    for st in run["vs"].values():
        assert st["games"] == 2 and st["wins"] + st["draws"] + st["losses"] == 2
    low, high = run["interval"]
    assert low <= run["rating"] <= high and run["seconds_per_game"] > 0 and run["seconds"] > 0
    # the runs of another network are kept apart, named by their network, their time with them
    assert doc["previous"]["1s, EL/v10"]["player"] == "search:EL/v10@1000"
    assert list(doc["seconds_by_run"]) == ["0.05s"] and round(doc["seconds_by_run"]["0.05s"], 1) == run["seconds"]
    assert doc["previous_note"] == "the old search"
    assert list(doc["runs"]) == ["0.05s"] and json.loads(results.read_text())["runs"]["0.05s"] == run
    # a second sitting plays nothing new: every game is in the folder already
    again = ss.run_search_strength([50], [1350], 2, results=results, pgn_dir=tmp_path / "pgn", workers=1,
                                   progress=False, command="test")
    assert again["runs"]["0.05s"]["games"] == 4 and again["runs"]["0.05s"]["vs"] == run["vs"]
    # after a change to the search: the run and its games are put aside, and it is played afresh
    fresh = ss.run_search_strength([50], [1350], 2, results=results, pgn_dir=tmp_path / "pgn", workers=1,
                                   progress=False, command="test", retire="before the change")
    assert fresh["previous"]["0.05s, before the change"] == again["runs"]["0.05s"]
    assert fresh["runs"]["0.05s"]["games"] == 4 and fresh["runs"]["0.05s"]["seconds"] < 2 * run["seconds"] + 60
    assert (tmp_path / "pgn" / "50ms, before the change" / "games.jsonl").is_file()
    assert len((tmp_path / "pgn" / "50ms" / "games.jsonl").read_text().splitlines()) == 4
    # the bot with its stochastic opening off: a run and a folder of its own, beside the default's
    det = ss.run_search_strength([50], [1350], 1, results=results, pgn_dir=tmp_path / "pgn", workers=1,
                                 progress=False, command="test", sunfish=False, deterministic=True)
    assert list(det["runs"]) == ["0.05s", "0.05s det"] and det["runs"]["0.05s"] == fresh["runs"]["0.05s"]
    assert det["runs"]["0.05s det"]["player"] == f"search:{SEARCH_NETWORK}:det@50"
    assert det["runs"]["0.05s det"]["games"] == 1
    assert len((tmp_path / "pgn" / "det50ms" / "games.jsonl").read_text().splitlines()) == 1


def test_a_retirement_is_on_disk_before_the_first_game(tmp_path, monkeypatch):
    results = tmp_path / "clock_strength.json"
    results.write_text(json.dumps({"runs": {"1s": {"player": f"search:{SEARCH_NETWORK}@1000", "rating": 2061,
                                                   "vs": {"sf-elo:2000": {"games": 20}}}}}))

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt          # the sitting is stopped during its first game

    monkeypatch.setattr(ss, "play_run", stopped)
    with pytest.raises(KeyboardInterrupt):
        ss.run_search_strength([1000], [2200], 40, results=results, pgn_dir=tmp_path / "pgn", progress=False,
                               retire="before the change")
    doc = json.loads(results.read_text())   # resuming without --retire finds no old run to count as kept
    assert doc["runs"] == {} and doc["previous"]["1s, before the change"]["rating"] == 2061


def test_retiring_moves_every_run_once_and_wants_a_label(tmp_path):
    for name in ("100ms", "1000ms"):
        (tmp_path / name).mkdir()
    doc = {"runs": {"0.1s": {"rating": 1}, "1s": {"rating": 2}}, "previous": {"1s, v1": {"rating": 0}},
           "seconds_by_run": {"0.1s": 5.0, "1s": 6.0}}
    ss._retire(doc, "old search", tmp_path)
    assert doc["runs"] == {} and doc["seconds_by_run"] == {}
    assert doc["previous"] == {"1s, old search": {"rating": 2}, "0.1s, old search": {"rating": 1},
                               "1s, v1": {"rating": 0}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1000ms, old search", "100ms, old search"]
    doc["runs"] = {"1s": {"rating": 3}}
    with pytest.raises(ValueError, match="already retired"):
        ss._retire(doc, "old search", tmp_path)
    for bad in ("", "  ", "a/b"):
        with pytest.raises(ValueError, match="not a label"):
            ss._retire(doc, bad, tmp_path)
    assert doc["runs"] == {"1s": {"rating": 3}}
    for name in ("1000ms", "1000ms, again"):    # games put aside under a label the results file no longer names
        (tmp_path / name).mkdir()
    with pytest.raises(ValueError, match="exists"):
        ss._retire(doc, "again", tmp_path)
    assert doc["runs"] == {"1s": {"rating": 3}} and (tmp_path / "1000ms").is_dir()


def test_clock_without_search_is_refused(capsys):
    from knights.cli import main

    assert main(["strength", "--clock", "--dry-run"]) != 0
    assert "--clock" in capsys.readouterr().err


def test_seconds_a_move_leave_the_book_out(tmp_path):
    from knights.lab.arena.search_strength import seconds_a_move

    (tmp_path / "g.pgn").write_text('[White "us"]\n[Black "them"]\n[OpeningPlies "3"]\n\n1. e4 e5 2. Nf3 *\n')
    # 3 book plies, 7 played: black moves first, 4 black moves and 3 white ones
    records = [{"pgn_file": "g.pgn", "plies": 10, "white": "us", "black": "them", "time_white": 3.0, "time_black": 8.0}]
    assert seconds_a_move(records, "us", tmp_path) == {"ours": 1.0, "opponents": 2.0}
    swapped = [{**records[0], "white": "them", "black": "us"}]
    assert seconds_a_move(swapped, "us", tmp_path) == {"ours": 2.0, "opponents": 1.0}
    assert seconds_a_move(records, "us", None) is None


def test_a_later_sitting_keeps_the_opponents_it_does_not_play(tmp_path):
    """Games against sf-elo:2200 played on another machine (only their results are here) and games against
    sf-elo:2000 on disk: one rating over both, each opponent's score from its own sitting."""
    player = f"search:{SEARCH_NETWORK}@1000"

    def record(i: int, opponent: str, score: float) -> dict:
        white, black = (player, opponent) if i % 2 == 0 else (opponent, player)
        return {"a": player, "b": opponent, "score_a": score, "index": i, "white": white, "black": black,
                "plies": 80, "termination": "checkmate" if score != 0.5 else "stalemate", "wall": 50.0,
                "time_white": 30.0, "time_black": 30.0}

    earlier = {"command": "knights strength --search --clock --anchors 2200", "player": player, "games": 4,
               "seconds_per_game": 100.0, "seconds_a_move": {"ours": 0.7, "opponents": 0.9},
               "vs": {"sf-elo:2200": {"games": 4, "wins": 1, "draws": 0, "losses": 3, "plies": 400}}}
    records = [record(i, "sf-elo:2000", s) for i, s in enumerate([1.0, 1.0, 0.5, 0.0])]
    alone = ss.summarise(records, player, {"sf-elo:2000": 2000.0}, "now", 10.0, 1)
    both = ss.summarise(records, player, {"sf-elo:2000": 2000.0}, "now", 10.0, 1, earlier=earlier)
    assert list(both["vs"]) == ["sf-elo:2200", "sf-elo:2000"] and both["games"] == 8
    assert both["vs"]["sf-elo:2200"] == earlier["vs"]["sf-elo:2200"]
    assert both["vs"]["sf-elo:2000"] == alone["vs"]["sf-elo:2000"]
    assert both["kept"] == {"sf-elo:2200": earlier["command"]}
    assert both["rating"] < alone["rating"]          # 1 of 4 against 2200 pulls the fit down
    assert both["interval"][1] - both["interval"][0] < alone["interval"][1] - alone["interval"][0]
    assert both["seconds_per_game"] == 75.0          # four games of 50 s, four of the earlier 100 s
    # an opponent with games on disk is counted from them alone; a third sitting keeps the first's command
    again = ss.summarise(records, player, {"sf-elo:2000": 2000.0}, "later", 10.0, 1, earlier=both)
    assert again["kept"] == {"sf-elo:2200": earlier["command"]} and again["vs"] == both["vs"]
    replayed = ss.summarise(records, player, {"sf-elo:2000": 2000.0}, "now", 10.0, 1,
                            earlier={**earlier, "vs": {"sf-elo:2000": earlier["vs"]["sf-elo:2200"]}})
    assert replayed["vs"] == alone["vs"] and "kept" not in replayed


def test_kept_times_weigh_by_plies():
    records = [{"plies": 80}] * 4
    kept = {"sf-elo:2200": {"plies": 400}}
    mixed = ss._with_kept_times({"ours": 0.5, "opponents": 0.6}, records, kept,
                                {"seconds_a_move": {"ours": 0.7, "opponents": 0.9}})
    assert mixed == {"ours": round((320 * 0.5 + 400 * 0.7) / 720, 3),     # 320 plies now, 400 kept
                     "opponents": round((320 * 0.6 + 400 * 0.9) / 720, 3)}
    assert ss._with_kept_times({"ours": 0.5, "opponents": 0.6}, records, kept, {}) == {"ours": 0.5, "opponents": 0.6}
