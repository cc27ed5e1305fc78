"""Dataset generation with the real Stockfish: format, labels, determinism, resume."""

from __future__ import annotations

import csv

import chess
import pytest

from knights.data import csslab
from knights.data.generate import Recipe, generate, play_labelled_game
from knights.data.stockfish import Stockfish, parse_search_output

pytestmark = pytest.mark.stockfish

RECIPE = Recipe(seed=11, depth=4, games_per_part=2, max_plies=60)


def read_rows(path):
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return header, [dict(zip(header, row, strict=False)) for row in reader]


def test_parse_search_output_prefers_last_exact_score():
    lines = [
        "info depth 1 seldepth 1 score cp 20 nodes 20 pv e2e4\n",
        "info depth 2 seldepth 2 score cp 35 nodes 80 pv d2d4\n",
        "info depth 3 seldepth 3 score cp 50 lowerbound nodes 200 pv d2d4\n",
        "bestmove d2d4 ponder d7d5\n",
    ]
    a = parse_search_output(lines)
    assert (a.cp, a.mate, a.bestmove, a.depth) == (35, None, "d2d4", 2)
    assert a.shallow == ("e2e4", "d2d4")   # each finished iteration's first move; the bound is no iteration
    gap = parse_search_output(["info depth 1 score cp 5 pv g1f3\n", "info depth 3 score cp 9 pv e2e4\n",
                               "bestmove e2e4\n"])
    assert gap.shallow == ("g1f3", "g1f3", "e2e4")   # a depth with no line keeps the move before
    mate = parse_search_output(["info depth 5 score mate -2 pv h7h8\n", "bestmove (none)\n"])
    assert (mate.cp, mate.mate, mate.bestmove) == (None, -2, None)


def test_stockfish_scores_from_side_to_move(stockfish):
    with Stockfish(stockfish) as sf:
        assert "Stockfish" in sf.name
        # White to move with an extra queen: clearly positive for the side to move.
        up = sf.analyse("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", depth=6)
        down = sf.analyse("4k3/8/8/8/8/8/8/3QK3 b - - 0 1", depth=6)
        assert (up.mate is not None and up.mate > 0) or up.cp > 500
        assert (down.mate is not None and down.mate < 0) or down.cp < -500
        mate_in_one = sf.analyse("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", depth=5)
        assert mate_in_one.mate == 1 and mate_in_one.bestmove == "a1a8"


def test_generated_rows_are_consistent(stockfish, tmp_path):
    out = tmp_path / "g.csv"
    report = generate(out, 150, RECIPE, workers=1, progress=False, stockfish_path=stockfish)
    header, rows = read_rows(out)
    assert tuple(header) == csslab.COLUMNS
    assert len(rows) == report.rows >= 150
    games: dict[str, list[dict]] = {}
    for r in rows:
        games.setdefault(r["game_id"], []).append(r)
    assert len(games) == report.games
    for _gid, grows in games.items():
        board = chess.Board()
        assert [int(r["move_ply"]) for r in grows] == list(range(len(grows)))
        assert all(int(r["num_ply"]) == len(grows) for r in grows)
        for r in grows:
            assert r["board"] == board.fen()
            move = chess.Move.from_uci(r["move"])
            assert move in board.legal_moves
            assert r["white_active"] == csslab.format_bool(board.turn == chess.WHITE)
            assert r["is_check"] == csslab.format_bool(board.is_check())
            assert r["is_capture"] == csslab.format_bool(board.is_capture(move))
            assert int(r["num_legal_moves"]) == board.legal_moves.count()
            assert int(r["active_pawn_count"]) == len(board.pieces(chess.PAWN, board.turn))
            # cp is White's view, cp_rel the mover's
            expected_rel = r["cp"] if board.turn == chess.WHITE else csslab.negate_eval(r["cp"])
            assert r["cp_rel"] == expected_rel
            assert float(r["cp_loss"]) >= 0
            assert r["is_blunder_cp"] == csslab.format_bool(float(r["cp_loss"]) >= csslab.BLUNDER_CP_PAWNS)
            assert 0.0 <= float(r["winrate"]) <= 1.0
            assert r["clock"] == "" and r["white_elo"] == ""
            board.push(move)
        result = grows[0]["result"]
        assert result in ("1-0", "0-1", "1/2-1/2")
        if board.is_checkmate():
            assert result == ("0-1" if board.turn == chess.WHITE else "1-0")


def test_labels_match_a_fresh_stockfish(stockfish, tmp_path):
    """The cp column is what Stockfish says at that depth (same hash history: new game)."""
    with Stockfish(stockfish) as sf:
        rows = play_labelled_game(sf, RECIPE, 3)
        sf.new_game()
        for r in rows[:12]:
            a = sf.analyse(r["board"], depth=RECIPE.depth).white_pov(r["white_active"] == "True")
            expected = csslab.format_eval(mate=a.mate) if a.mate else csslab.format_eval(cp=a.cp)
            assert r["cp"] == expected


def test_same_seed_same_bytes_any_workers_and_resume(stockfish, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    generate(a, 200, RECIPE, workers=1, progress=False, stockfish_path=stockfish)
    generate(b, 200, RECIPE, workers=2, progress=False, stockfish_path=stockfish)
    assert a.read_bytes() == b.read_bytes()
    # interrupted run: a part is missing, one is half written; the rerun restores the same file
    parts = sorted((tmp_path / "b.csv.parts").glob("part-*.csv"))
    parts[1].unlink()
    (tmp_path / "b.csv.parts" / "part-000001.csv.tmp").write_text("half a line")
    b.unlink()
    report = generate(b, 200, RECIPE, workers=2, progress=False, stockfish_path=stockfish)
    assert report.parts_reused == len(parts) - 1
    assert a.read_bytes() == b.read_bytes()
    other = tmp_path / "c.csv"
    generate(other, 200, Recipe(seed=12, depth=4, games_per_part=2, max_plies=60), workers=1,
             progress=False, stockfish_path=stockfish)
    assert other.read_bytes() != a.read_bytes()


def test_recipe_mismatch_is_refused(stockfish, tmp_path):
    out = tmp_path / "g.csv"
    generate(out, 50, RECIPE, workers=1, progress=False, stockfish_path=stockfish)
    with pytest.raises(RuntimeError, match="another recipe"):
        generate(out, 50, Recipe(seed=99, depth=4, games_per_part=2), workers=1, progress=False,
                 stockfish_path=stockfish)


def test_dedup_drops_repeated_positions(stockfish, tmp_path):
    out = tmp_path / "d.csv"
    report = generate(out, 300, RECIPE, workers=1, dedup=True, progress=False, stockfish_path=stockfish)
    _, rows = read_rows(out)
    keys = [r["board"].rsplit(" ", 2)[0] for r in rows]
    assert len(keys) == len(set(keys)) == report.rows
    # every game starts from the initial position, so repeats do occur
    assert report.duplicates_dropped > 0


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_a_stopped_run_ends_with_its_workers_and_keeps_its_parts(stockfish, tmp_path, how):
    """Ctrl-C signals every process of the group; ``kill`` and ``timeout`` send SIGTERM to the parent
    alone. Either way the run must end as interrupted, leave no worker or Stockfish behind, and keep
    every finished part whole, whatever moment the signal falls on."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "games.csv"
    parts = tmp_path / "games.csv.parts"
    # A job a non-interactive shell starts in the background (as `make test` may be) inherits SIGINT
    # ignored, and Python then never turns it into KeyboardInterrupt: the run gets Python's handler back.
    cli = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
           "from knights.cli import main; sys.exit(main(sys.argv[1:]))")
    cmd = [sys.executable, "-c", cli, "data", "generate", "--positions", "1000000", "--depth", "2",
           "--seed", "5", "--workers", "4", "--games-per-part", "1", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def group_alive() -> bool:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    try:
        deadline = time.monotonic() + 120
        while len(list(parts.glob("part-*.csv"))) < 6 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)   # the hang this guards against never returned
        deadline = time.monotonic() + 20
        while group_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not group_alive(), "a worker or its Stockfish outlived the run"
    finally:
        if group_alive():
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted; finished work is kept" in err
    assert "Traceback" not in err            # no worker died of the signal
    assert not out.exists()
    done = sorted(parts.glob("part-*.csv"))
    assert len(done) >= 6
    for part in done:                     # every finished part ends its last game with a whole row
        with open(part, newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows and all(len(r) == len(csslab.COLUMNS) for r in rows), part
