"""Matches, opponents, PGNs and the quick strength ladder (real Stockfish)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import statistics
from pathlib import Path

import chess
import chess.pgn
import pytest

from knights.cli import main as cli_main
from knights.engine.search import SearchEngine
from knights.lab.arena.game import FORFEIT_ERROR, MATERIAL, MAX_PLIES, Settings, play_game
from knights.lab.arena.ladder import strength_plan
from knights.lab.arena.matches import finished, load_records, numbered_records, run_games, schedule
from knights.lab.arena.openings import OPENINGS
from knights.lab.arena.players import (
    GreedyPlayer,
    RandomPlayer,
    StockfishPlayer,
    UciPlayer,
    material_cp,
)
from knights.lab.arena.scores import PairStats, pair_stats
from knights.lab.arena.specs import build_player, check_spec


def replay(pgn_text: str) -> tuple[chess.pgn.Game, chess.Board]:
    """Replay a PGN move by move, asserting every move is legal."""
    game = chess.pgn.read_game(io.StringIO(pgn_text))
    assert game is not None and not game.errors, game.errors if game else "no game"
    board = game.board()
    for move in game.mainline_moves():
        assert board.is_legal(move), (move, board.fen())
        board.push(move)
    return game, board


# -- openings and schedule ----------------------------------------------------------------
def test_openings_are_legal_distinct_and_level():
    assert len(OPENINGS) == 20
    seen = set()
    for o in OPENINGS:
        board = o.board()  # raises on an illegal SAN move
        assert 4 <= len(o.moves) <= 8
        assert abs(material_cp(board, chess.WHITE)) <= 100, o.name
        seen.add(board.epd())
    assert len(seen) == 20 and len({o.name for o in OPENINGS}) == 20


def test_openings_are_balanced_for_stockfish(stockfish):
    from knights.data.stockfish import Stockfish

    with Stockfish(stockfish) as sf:
        for o in OPENINGS:
            board = o.board()
            a = sf.analyse(board.fen(), depth=8).white_pov(board.turn == chess.WHITE)
            assert a.mate is None and abs(a.cp) < 120, (o.name, a)


def test_schedule_alternates_colours_over_openings():
    tasks = schedule([("ours:material", "random", 6), ("greedy", "ab2", 3)], Settings(seed=1))
    first = tasks[:6]
    assert [t.opening for t in first] == [0, 0, 1, 1, 2, 2]
    assert [t.a_white for t in first] == [True, False] * 3
    assert [t.white for t in first[:2]] == ["ours:material", "random"]
    assert len({t.seed for t in tasks}) == len(tasks)
    assert schedule([("ours:material", "random", 6)], Settings(seed=1))[3].seed == first[3].seed


def test_specs():
    assert check_spec("ours:material:det") == "ours:material:det"
    assert check_spec("ours:material:stoch") == "ours:material"
    assert check_spec(" ab3 ") == "ab3"
    for good in ("random", "greedy", "sf-nodes:10", "sf-elo:1350", "sf-depth:5", "uci:stockfish"):
        assert check_spec(good) == good
    for bad in ("abc", "sf-elo:", "uci:", "stockfish", "ab0"):
        with pytest.raises(ValueError):
            check_spec(bad)


# -- opponents --------------------------------------------------------------------------------
def test_opponents_take_mates_and_material():
    mate_in_one = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    for p in (GreedyPlayer(0), build_player("ab2", seed=0), build_player("ab3", seed=0)):
        assert p.choose_move(mate_in_one) == chess.Move.from_uci("a1a8"), p.name
    hanging = chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1")
    for p in (GreedyPlayer(0), build_player("ab2", seed=0)):
        assert p.choose_move(hanging) == chess.Move.from_uci("d2d5")


def test_capture_search_sees_the_recapture():
    # Qxd5 wins a pawn and loses the queen to ...exd5: greedy takes it, ab2 does not
    board = chess.Board("4k3/8/4p3/3p4/8/8/8/3QK3 w - - 0 1")
    poisoned = chess.Move.from_uci("d1d5")
    assert GreedyPlayer(0).choose_move(board) == poisoned
    assert build_player("ab2", seed=0).choose_move(board) != poisoned


def test_random_player_is_seeded_and_legal():
    board = chess.Board()
    a = [RandomPlayer(3).choose_move(board) for _ in range(3)]
    assert len(set(a)) == 1 and a[0] in board.legal_moves


# -- games ----------------------------------------------------------------------------------------
class Illegal:
    name = "illegal"

    def choose_move(self, board):
        return chess.Move.from_uci("a1a8")

    def new_game(self):
        pass

    def close(self):
        pass


def test_play_game_ends_by_rules_or_adjudication():
    rec = play_game(RandomPlayer(1), RandomPlayer(2), OPENINGS[0], Settings(max_plies=20))
    assert rec.result == "1/2-1/2" and rec.termination == MAX_PLIES and rec.book == 6
    game, board = replay(rec.to_dict()["pgn"])
    assert board.ply() == 20 and game.headers["OpeningPlies"] == "6" and game.headers["Opening"] == "Ruy Lopez"
    assert game.headers["Termination"] == rec.termination and game.headers["PlyCount"] == "20"

    rec = play_game(build_player("ab2", seed=1), RandomPlayer(2), OPENINGS[1],
                    Settings(adjudicate_cp=300, adjudicate_plies=6))
    assert rec.result == "1-0" and rec.termination in ("checkmate", "adjudication: material")
    _, board = replay(rec.to_dict()["pgn"])
    if rec.termination.startswith("adjudication"):
        assert material_cp(board, chess.WHITE) >= 300

    rec = play_game(RandomPlayer(1), Illegal(), OPENINGS[2])
    assert rec.result == "1-0" and rec.termination == "forfeit: illegal move" and rec.illegal == 1
    assert "illegal" in rec.error and "Error" in rec.to_pgn().headers


def test_game_record_as_the_arena_saves_it():
    rec = play_game(GreedyPlayer(1), RandomPlayer(2), OPENINGS[4], Settings(max_plies=30))
    row = rec.to_dict({"White": "greedy-spec", "Round": 3})
    assert list(row) == ["white", "black", "result", "termination", "plies", "opening", "time_white",
                         "time_black", "error", "pgn"]
    assert (row["white"], row["black"], row["plies"], row["opening"]) == ("greedy-spec", "random", 30, "Italian Game")
    game, board = replay(row["pgn"])
    assert game.headers["Round"] == "3" and game.headers["White"] == "greedy-spec"
    assert board.move_stack == rec.board.move_stack
    node = game
    for _ in range(6):
        node = node.next()
    assert node.comment == "end of book"


def test_adjudication_is_optional_and_a_board_can_start_the_game():
    start = chess.Board("4k3/8/8/8/8/8/8/QQQQK3 w - - 0 1")   # White is four queens ahead
    judged = play_game(RandomPlayer(1), RandomPlayer(2), start, Settings(adjudicate_plies=2))
    assert (judged.result, judged.termination, judged.plies) == ("1-0", MATERIAL, 2)
    free = play_game(RandomPlayer(1), RandomPlayer(2), start,
                     Settings(max_plies=12, adjudicate_cp=None, adjudicate_plies=2))
    assert free.termination != MATERIAL and free.plies > 2 and free.book == 0 and not start.move_stack


def test_a_player_that_changes_its_board_forfeits():
    class Pusher(RandomPlayer):
        def choose_move(self, board):
            move = super().choose_move(board)
            board.push(move)
            return move

    rec = play_game(RandomPlayer(1), Pusher(2, name="pusher"))
    assert rec.result == "1-0" and rec.termination == FORFEIT_ERROR and rec.plies == 1
    assert "pusher changed the board" in rec.error


def test_a_player_that_unmakes_the_game_forfeits_and_the_game_is_kept():
    """Players get the game's own board (no copy per move): one that pops a move, or
    edits a square and raises, forfeits, and the record holds the game as played."""
    class Popper(RandomPlayer):
        def choose_move(self, board):
            if len(board.move_stack) >= 6:
                board.pop()
            return super().choose_move(board)

    class Vandal(RandomPlayer):
        def choose_move(self, board):
            if len(board.move_stack) >= 5:
                board.remove_piece_at(chess.E1 if board.turn else chess.E8)
                raise RuntimeError("oops")
            return super().choose_move(board)

    popped = play_game(RandomPlayer(1), Popper(2, name="popper"))
    assert popped.termination == FORFEIT_ERROR and popped.plies == 7 and popped.result == "1-0"
    assert "popper changed the board" in popped.error
    vandal = play_game(Vandal(3, name="vandal"), RandomPlayer(4))
    assert vandal.termination == FORFEIT_ERROR and vandal.result == "0-1" and "RuntimeError" in vandal.error
    replay = chess.Board()
    for move in vandal.board.move_stack:
        assert replay.is_legal(move)
        replay.push(move)
    assert vandal.board.king(chess.WHITE) is not None and vandal.board.fen() == replay.fen()


def test_a_resumed_match_keeps_only_games_played_under_the_same_rules(tmp_path):
    """finished(): the games already in a folder count for a resumed match only when they were
    played under the same Settings (draw rule, limits); a record of another rule, or of a log
    written before records held their settings, is played again."""
    tasks = schedule([("greedy", "random", 3)], Settings(max_plies=40, seed=3))
    run_games(tasks[:2], tmp_path, progress=False)
    assert sorted(r["index"] for r in finished(tmp_path, tasks)) == [0, 1]
    claiming = schedule([("greedy", "random", 3)], Settings(max_plies=40, seed=3, claim_next_move=True))
    assert finished(tmp_path, claiming) == []
    log = tmp_path / "games.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    del rows[0]["settings"]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [r["index"] for r in finished(tmp_path, tasks)] == [rows[1]["index"]]
    assert finished(tmp_path / "nothing", tasks) == []


def test_a_line_that_is_not_a_game_record_is_named_with_its_file_and_line(tmp_path):
    """A resumed match reads its log back. A last line cut short (a run killed while writing it) is dropped from the
    file and its game played again, after whole lines; any other line that is not a game record (not JSON, without
    its players, an index that is not a number) is an error naming ``games.jsonl`` and the line. Blank lines are
    skipped."""
    tasks = schedule([("greedy", "random", 3)], Settings(max_plies=20, seed=3))
    run_games(tasks[:2], tmp_path, progress=False)
    log = tmp_path / "games.jsonl"
    good = log.read_text()
    assert [n for n, _ in numbered_records(tmp_path)] == [1, 2]
    log.write_text(good + good.splitlines()[0][:40])                    # killed mid-write
    assert [r["index"] for r in finished(tmp_path, tasks)] == [0, 1] and log.read_text() == good
    run_games(tasks[2:], tmp_path, progress=False)                       # resumed: appends after whole lines
    assert [r["index"] for r in load_records(tmp_path)] == [0, 1, 2]
    log.write_text(good + "\n" + good.splitlines()[0][:40] + "\n")
    with pytest.raises(ValueError, match=r"games.jsonl, line 4: not a game record"):
        load_records(tmp_path)
    log.write_text(good + json.dumps({"a": "greedy", "b": "random"}) + "\n")
    with pytest.raises(ValueError, match=r"games.jsonl, line 3: not a game record \('index'\)"):
        finished(tmp_path, tasks)
    log.write_text(good + json.dumps({"a": "greedy", "b": "random", "index": "2"}) + "\n")
    with pytest.raises(ValueError, match=r"games.jsonl, line 3: not a game record \(players or index"):
        load_records(tmp_path)


def test_run_games_in_two_workers_writes_legal_pgns(tmp_path):
    tasks = schedule([("greedy", "random", 4)], Settings(max_plies=120, seed=3))
    records = run_games(tasks, tmp_path, workers=2, progress=False)
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    log = load_records(tmp_path)
    assert len(log) == 4
    for r in records:
        game, board = replay((tmp_path / r["pgn_file"]).read_text())
        assert game.headers["Result"] == r["result"] and board.ply() == r["plies"]
        assert game.headers["White"] == r["white"] and {r["white"], r["black"]} == {"greedy", "random"}
        assert 0.0 <= r["score_a"] <= 1.0
    stats = pair_stats(records)[("greedy", "random")]
    assert stats.games == 4 and stats.wins + stats.draws + stats.losses == 4
    assert stats.points + pair_stats(records)[("random", "greedy")].points == 4


def test_stockfish_and_uci_players_move_legally(stockfish):
    board = OPENINGS[3].board()
    with StockfishPlayer(nodes=1, skill=0) as sf1, StockfishPlayer(elo=1350, nodes=2000) as sf1350, \
            UciPlayer(stockfish, nodes=500) as uci:
        for p in (sf1, sf1350, uci):
            p.new_game()
            assert p.choose_move(board) in board.legal_moves, p.name
    assert (sf1.name, sf1350.name) == ("sf-nodes:1", "sf-elo:1350")


# -- the quick ladder ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick_run(tmp_path_factory, request):
    request.getfixturevalue("stockfish")
    pytest.importorskip("knights.engine.one_ply")
    root = tmp_path_factory.mktemp("strength")
    code = cli_main(["strength", "--quick", "--workers", "1", "--quiet",  # parallel: see run_games test
                     "--results-dir", str(root / "results"), "--figures-dir", str(root / "figures"),
                     "--pgn-dir", str(root / "pgn")])
    assert code == 0
    return root


def test_quick_strength_writes_everything(quick_run):
    results = quick_run / "results"
    for name in ("elo.json", "elo.csv", "elo.md", "quality.json"):
        assert (results / name).stat().st_size > 0, name
    assert (quick_run / "figures" / "elo.png").read_bytes()[:4] == b"\x89PNG"
    md = (results / "elo.md").read_text()
    assert "Targets for the shipped bot" in md and "vs greedy" in md


def test_quick_strength_results_are_consistent(quick_run):
    plan = strength_plan(quick=True)
    report = json.loads((quick_run / "results" / "elo.json").read_text())
    records = load_records(quick_run / "pgn")
    assert report["games"] == len(records) == sum(n for _, _, n in plan.pairings)
    players = {p["player"]: p for p in report["players"]}
    assert players["sf-elo:1350"]["rating"] == 1350 and players["sf-elo:1350"]["kind"] == "anchor"
    assert players["ours:material"]["shipped"] and players["ours:material"]["kind"] == "ours"
    # every game is counted once per side
    assert sum(p["games"] for p in players.values()) == 2 * len(records)
    for p in players.values():
        assert 0.0 <= p["score"] <= p["games"]
        assert p["low"] <= p["rating"] <= p["high"]
        for opp, v in p["vs"].items():
            back = players[opp]["vs"][p["player"]]
            assert v["games"] == back["games"] and v["points"] + back["points"] == v["games"]
            assert 0.0 <= v["score"] <= 1.0 and v["wins"] + v["draws"] + v["losses"] == v["games"]
    with (quick_run / "results" / "elo.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["player"] for r in rows} == set(players)
    # every PGN replays legally and agrees with its record
    for r in records:
        game, board = replay((quick_run / "pgn" / r["pgn_file"]).read_text())
        assert game.headers["Result"] == r["result"] and board.ply() == r["plies"]
        assert game.headers["Opening"] == r["opening"] and game.headers["Termination"] == r["termination"]
        if r["termination"] == "checkmate":
            assert board.is_checkmate()
    quality = json.loads((quick_run / "results" / "quality.json").read_text())
    assert quality["games"] >= 1 and "ours:material" in quality["players"]
    for t in quality["players"].values():
        assert t["accuracy"] is None or 0 <= t["accuracy"] <= 100


def test_match_command(tmp_path, capsys):
    out = tmp_path / "m"
    assert cli_main(["match", "greedy", "random", "ab2", "--games", "2", "--workers", "1", "--quiet",
                     "--max-plies", "60", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "greedy" in text and "4 games" in text
    assert len(list(Path(out).rglob("*.pgn"))) == 4
    assert cli_main(["match", "greedy", "nonsense", "--out", str(out)]) == 2

    # knights scores pools match folders and sees them from one side
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(out / "games.jsonl", again / "games.jsonl")
    summary = tmp_path / "scores.json"
    assert cli_main(["scores", str(out), str(again), "--player", "random", "--out", str(summary)]) == 0
    rows = {(r["player"], r["opponent"]): r for r in json.loads(summary.read_text())["pairings"]}
    assert set(rows) == {("random", "greedy"), ("greedy", "ab2")}      # the other pairing as played
    greedy = pair_stats(load_records(out))[("greedy", "random")]
    row = rows[("random", "greedy")]
    assert row["games"] == 4 and row["score"] == pytest.approx(1 - greedy.score)
    assert row["ci95"][0] <= row["score"] <= row["ci95"][1]
    assert cli_main(["scores", str(tmp_path)]) == 2                          # no games.jsonl
    assert cli_main(["scores", str(out), "--player", "sunfish"]) == 2        # played none of them


def _log(folder: Path, games: list[tuple[str, str, float]]) -> Path:
    """A match folder whose games.jsonl holds ``games`` (a, b, a's score), one second each."""
    folder.mkdir()
    lines = [json.dumps({"a": a, "b": b, "index": i, "score_a": score, "plies": 80, "termination": "checkmate",
                         "wall": 1.0}) for i, (a, b, score) in enumerate(games)]
    (folder / "games.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def test_scores_pool_matches_that_name_the_sides_either_way(tmp_path, capsys):
    one = _log(tmp_path / "one", [("A", "B", 1.0), ("A", "B", 0.5), ("A", "B", 1.0)])
    two = _log(tmp_path / "two", [("B", "A", 1.0), ("B", "A", 0.0)])
    out = tmp_path / "s.json"
    assert cli_main(["scores", str(one), str(two), "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["pairings"]
    assert (row["player"], row["opponent"], row["games"], row["game_seconds"]) == ("A", "B", 5, 5)
    assert (row["wins"], row["draws"], row["losses"]) == (3, 1, 1) and row["score"] == pytest.approx(0.7)
    games = [1.0, 0.5, 1.0, 0.0, 1.0]
    half = 1.959963984540054 * statistics.stdev(games) / len(games) ** 0.5
    assert row["ci95"] == pytest.approx([0.7 - half, min(1.0, 0.7 + half)])
    assert "[0.3" in capsys.readouterr().out                         # the interval is printed too
    assert cli_main(["scores", str(two), "--player", "A", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["pairings"]
    assert (row["player"], row["score"]) == ("A", 0.5)


def test_scores_refuse_what_is_not_a_match_and_change_no_log(tmp_path, capsys):
    good = _log(tmp_path / "good", [("A", "B", 1.0)])
    with open(good / "games.jsonl", "a") as fh:
        fh.write('{"a": "A", "b": "B", "ind')                          # a match still writing its next line
    before = (good / "games.jsonl").read_bytes()
    assert cli_main(["scores", str(good)]) == 0
    assert (good / "games.jsonl").read_bytes() == before               # read only: nothing cut from the log
    assert cli_main(["scores", str(good), str(tmp_path / "good")]) == 2
    assert "named twice" in capsys.readouterr().err
    bad = _log(tmp_path / "bad", [("A", "B", 1.0), ("A", "B", 0.7)])
    assert cli_main(["scores", str(bad)]) == 2
    assert "games.jsonl, line 2: not a game record (score_a 0.7" in capsys.readouterr().err
    (bad / "games.jsonl").write_text(json.dumps({"a": "A", "b": "B", "index": 0}) + "\n")
    assert cli_main(["scores", str(bad)]) == 2
    assert "games.jsonl, line 1: not a game record" in capsys.readouterr().err
    (bad / "games.jsonl").write_bytes(b"\xff\xfe\n")
    assert cli_main(["scores", str(bad)]) == 2
    assert "games.jsonl: not a text log" in capsys.readouterr().err


def test_a_score_interval_is_the_spread_of_the_games_own_scores():
    games = [1.0] * 24 + [0.5] * 19 + [0.0] * 37
    half = 1.959963984540054 * statistics.stdev(games) / len(games) ** 0.5
    stats = PairStats("a", "b", games=80, wins=24, draws=19, losses=37)
    assert stats.interval() == pytest.approx((statistics.mean(games) - half, statistics.mean(games) + half))
    assert PairStats("a", "b", games=10, wins=10).interval() == (1.0, 1.0)
    assert PairStats("a", "b", games=1, draws=1).interval() == (0.5, 0.5)
    assert PairStats("a", "b", games=10, wins=9, draws=1).interval()[1] == 1.0       # clipped


def test_a_difference_of_two_arms_has_the_games_own_spread():
    """pool's standard error of a difference: each arm's from its games' own scores, so draws narrow it (a binomial
    p(1-p)/n would call 40 draws as uncertain as 20 wins and 20 losses)."""
    from knights.lab.arena.pool import difference_error

    drawn = {"games": 40, "wins": 0, "draws": 40, "losses": 0}
    split = {"games": 40, "wins": 20, "draws": 0, "losses": 20}
    assert difference_error(drawn, drawn) == 0.0
    games = [1.0] * 20 + [0.0] * 20
    assert difference_error(split, drawn) == pytest.approx(statistics.stdev(games) / 40 ** 0.5)
    assert difference_error(split, split) == pytest.approx(2 ** 0.5 * statistics.stdev(games) / 40 ** 0.5)


# -- search players: the ``search`` specs ------------------------------------------------------
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


def test_pool_compares_two_arms_and_reads_an_avoidable_mate(tmp_path, capsys):
    """python -m knights.lab.arena.pool: each arm's runs pooled, the second arm's score less the first's with its
    standard error, and the games where the player under test walked into a mate in one it could have avoided."""
    from knights.lab.arena.pool import main as pool_main

    pgns = {"fool": ("0-1", "1. f3 e5 2. g4 Qh4# 0-1"),          # A's 2. g4 allowed the mate, 2. e3 would not have
            "quiet": ("1-0", "1. e4 e5 2. Nf3 Nc6 1-0")}         # nothing allowed (A won on time, say)

    def folder(name: str, games: list[tuple[str, float]]) -> Path:
        f = tmp_path / name
        f.mkdir()
        for pgn, (result, moves) in pgns.items():
            (f / f"{pgn}.pgn").write_text(f'[White "A"]\n[Black "B"]\n[Result "{result}"]\n\n{moves}\n')
        lines = [json.dumps({"a": "A", "b": "B", "index": i, "score_a": s, "plies": 4, "termination": "checkmate",
                             "wall": 1.0, "white": "A", "black": "B", "pgn_file": f"{pgn}.pgn"})
                 for i, (pgn, s) in enumerate(games)]
        (f / "games.jsonl").write_text("".join(line + "\n" for line in lines))
        return f

    first = folder("first", [("fool", 0.0), ("fool", 0.0)])
    second = folder("second", [("quiet", 1.0), ("quiet", 1.0), ("fool", 0.0)])
    out = tmp_path / "pool.json"
    assert pool_main(["--arm", "old", str(first), "--arm", "new", str(second), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    old, new = doc["arms"]["old"], doc["arms"]["new"]
    assert old["pooled"]["score"] == 0.0 and new["pooled"]["score"] == pytest.approx(2 / 3, abs=1e-4)
    assert doc["difference"]["value"] == pytest.approx(2 / 3, abs=1e-4) and doc["difference"]["standard_error"] > 0
    assert old["games_read"]["avoidable_mate_in_one"] == {"games": 2, "score": 0.0}
    assert new["games_read"]["avoidable_mate_in_one"] == {"games": 1, "score": 0.0}     # the quiet games not counted
    assert doc["command"] == f"python -m knights.lab.arena.pool --arm old {first} --arm new {second} --out {out}"
    assert "new - old: +0.667" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="not a match folder"):
        pool_main(["--arm", "x", str(tmp_path / "none"), "--out", str(out)])
