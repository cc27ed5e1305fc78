"""More generators (``STYLES``) and ``knights data grow``, with the real Stockfish."""

from __future__ import annotations

import csv
import itertools
import json
import re

import chess
import pytest

from knights.data import csslab
from knights.data.generate import ENDINGS_PLIES, STYLES, Recipe, choose_move, play_labelled_game
from knights.data.grow import EXCLUDE, GROWN, SEEDS, grow, targets
from knights.data.independent import fen_key
from knights.data.stockfish import Stockfish

pytestmark = pytest.mark.stockfish

SMALL = {"depth": 3, "max_plies": 80, "games_per_part": 2}


def read(path):
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_the_default_style_keeps_the_old_recipe_key():
    """Parts written before styles existed carry no style: they must still be reused."""
    key = Recipe().key("Stockfish 15.1")
    assert "style" not in key
    assert Recipe(style="odds").key("Stockfish 15.1")["style"] == "odds"
    with pytest.raises(ValueError, match="unknown style 'blitz'"):
        Recipe(style="blitz")


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_plays_legal_labelled_games_deterministically(stockfish, style):
    recipe = Recipe(seed=5, style=style, **SMALL)
    with Stockfish(stockfish) as sf:
        games = [play_labelled_game(sf, recipe, i) for i in range(3)]
        again = play_labelled_game(sf, recipe, 1)
    assert again == games[1]
    for i, rows in enumerate(games):
        assert {r["game_id"] for r in rows} == {f"{STYLES[style].game_prefix}{i:07d}"}
        board = chess.Board(rows[0]["board"])
        assert board.is_valid(), rows[0]["board"]
        men = len(board.piece_map())
        if style == "odds":   # fewer men than the start, none of them added
            assert 26 <= men <= 31
            assert board.board_fen() != chess.Board().board_fen()
        elif style == "endings":   # a few men, every one on a home square of its own kind
            start = chess.Board()
            assert 3 <= men <= 2 + 2 * (3 + 5)
            assert all(start.piece_at(sq) == piece for sq, piece in board.piece_map().items())
            assert len(rows) <= ENDINGS_PLIES
        else:
            assert rows[0]["board"] == chess.Board().fen()
        for r in rows:
            assert r["board"] == board.fen()
            move = chess.Move.from_uci(r["move"])
            assert move in board.legal_moves
            assert r["white_player"] and r["black_player"]
            board.push(move)


def test_styles_differ_in_their_games(stockfish):
    with Stockfish(stockfish) as sf:
        first = {s: play_labelled_game(sf, Recipe(seed=5, style=s, **SMALL), 0) for s in STYLES}
    moves = {s: tuple(r["move"] for r in rows) for s, rows in first.items()}
    # "again" is data/full's own style under its own name (its seed, not its games, differs)
    assert moves.pop("again") == moves["mixed"]
    # and "sound2" is the sound style under its own name: its games differ by their seed and numbers
    assert moves.pop("sound2") == moves["sound"]
    assert moves.pop("sound3") == moves["sound"]
    assert len(set(moves.values())) == len(STYLES) - 3
    strong = {r[k] for r in first["strong"] for k in ("white_player", "black_player")}
    assert strong <= {"stockfish-eps0.00", "stockfish-eps0.02", "stockfish-eps0.05"}


def test_targets_reach_the_shares_in_equal_rounds():
    steps = targets(10_000, 4)
    assert len(steps) == 4
    assert steps[-1] == {"openings": 3500, "strong": 3500, "odds": 3000}
    assert all(a[s] < b[s] for a, b in itertools.pairwise(steps) for s in a)
    with pytest.raises(ValueError, match="at least 1"):
        targets(0, 2)


def test_grow_keeps_only_new_positions_and_resumes(stockfish, tmp_path):
    work = tmp_path / "more"
    first = grow(300, rounds=2, work=work, exclude=(), root=tmp_path, stockfish_path=stockfish,
                 progress=False, games_per_part=1, depth=3)
    header, rows = read(first.out)
    assert tuple(header) == csslab.COLUMNS
    assert len(rows) == first.kept and first.kept + sum(first.dropped.values()) == first.played >= 300
    keys = [fen_key(r["board"]) for r in rows]
    assert len(keys) == len(set(keys))
    # the styles take turns, a game at a time
    assert [r["game_id"][:3] for r in rows[:1]] == ["opn"]
    order = [g[:3] for g in dict.fromkeys(r["game_id"] for r in rows)]
    assert order[:3] == ["opn", "str", "odd"]

    # positions already in a training source are not added again; nothing is played twice
    seen = tmp_path / "old.csv"
    with open(seen, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=csslab.COLUMNS)
        writer.writeheader()
        writer.writerows(rows[:10])
    again = grow(300, rounds=2, work=work, exclude=("old.csv", "not_here"), root=tmp_path,
                 stockfish_path=stockfish, progress=False, games_per_part=1, depth=3)
    assert again.played == first.played
    # nothing was played again, so the time over all runs is the first run's
    assert [s.seconds for s in again.styles] == [s.seconds for s in first.styles]
    assert again.rate == first.rate > 0
    assert again.excluded["absent"] == ["not_here"] and "old.csv" in again.excluded["present"]
    assert again.kept == first.kept - 10
    # (a later repeat of one of those ten, such as the start position, now counts as in old.csv)
    assert again.dropped["in old.csv"] + again.dropped["repeated"] == first.dropped["repeated"] + 10
    assert again.dropped["in old.csv"] >= 10
    report = json.loads(json.dumps(again.as_dict(Recipe(depth=3))))
    assert report["positions_kept"] == again.kept and set(report["styles"]) == {"openings", "strong", "odds"}

    # fewer positions from the same folder (as sound300k takes data/sound's first 300,000): nothing is played, the
    # first parts alone are put together, and each style is timed at its share of what the parts cost
    fewer = grow(60, rounds=1, work=work, exclude=(), root=tmp_path, stockfish_path=stockfish,
                 progress=False, games_per_part=1, depth=3)
    assert 60 <= fewer.played < first.played
    assert {fen_key(r["board"]) for r in read(fewer.out)[1]} <= set(keys)
    for few, all_ in zip(fewer.styles, first.styles, strict=True):
        assert few.rows <= all_.rows and few.seconds == pytest.approx(all_.seconds * few.rows / all_.rows)


def test_grow_endings_is_its_own_set(stockfish, tmp_path):
    """``--set endings``: one style, its own folder and combined file, data/more left out too."""
    assert GROWN["endings"].shares == {"endings": 1.0} and "data/more" in GROWN["endings"].exclude
    report = grow(60, rounds=1, work=tmp_path / "endings", exclude=(), root=tmp_path, stockfish_path=stockfish,
                  progress=False, games_per_part=1, depth=3, grown="endings")
    assert report.out == tmp_path / "endings" / "kept.csv"
    header, rows = read(report.out)
    assert tuple(header) == csslab.COLUMNS and len(rows) == report.kept > 0
    assert {r["game_id"][:3] for r in rows} == {"fin"}
    assert [s.style for s in report.styles] == ["endings"]


def test_a_shallow_player_plays_its_iterations_move():
    """``stockfish-depth<D>`` plays what the search chose after iteration D (the deepest it has
    when the search stopped earlier); a move that is not legal falls back on the best move."""
    import random

    board = chess.Board()
    shallow = ("e2e4", "d2d4", "g1f3")
    rng = random.Random(0)
    assert choose_move("stockfish-depth1", board, "c2c4", rng, shallow).uci() == "e2e4"
    assert choose_move("stockfish-depth2", board, "c2c4", rng, shallow).uci() == "d2d4"
    assert choose_move("stockfish-depth4", board, "c2c4", rng, shallow).uci() == "g1f3"
    assert choose_move("stockfish-depth1", board, "c2c4", rng, ("e7e5",)).uci() == "c2c4"
    assert choose_move("stockfish-depth2", board, "c2c4", rng, ()).uci() == "c2c4"
    assert GROWN["shallow"].shares == {"shallow": 1.0}
    assert {"data/more", "data/endings"} <= set(GROWN["shallow"].exclude)



def test_the_cold_style_plays_what_a_fresh_short_search_plays(stockfish):
    """``cold`` clears the hash before every search, so a ``stockfish-depth<D>`` move is what a
    Stockfish that never saw the game ranks first after iteration D of the same search; the
    ``shallow`` style keeps the game's hash, and its moves are not all reproduced that way."""
    def replayed(style):
        recipe = Recipe(seed=5, style=style, **{**SMALL, "depth": 6, "max_plies": 40})
        with Stockfish(stockfish) as sf:
            games = [play_labelled_game(sf, recipe, i) for i in range(4)]
        same = total = 0
        with Stockfish(stockfish) as fresh:
            for rows in games:
                for r in rows:
                    player = r["white_player"] if r["board"].split()[1] == "w" else r["black_player"]
                    if not player.startswith("stockfish-depth") or int(r["move_ply"]) <= 8:
                        continue
                    d = int(player.rsplit("depth", 1)[1])
                    fresh.new_game()
                    a = fresh.analyse(r["board"], depth=recipe.depth)
                    fresh.new_game()
                    short = fresh.analyse(r["board"], depth=d)        # a fresh ``go depth D``
                    total += 1
                    same += a.shallow[min(d, len(a.shallow)) - 1] == r["move"] == short.bestmove
        return same, total

    same, total = replayed("cold")
    assert total >= 20 and same == total
    same, total = replayed("shallow")
    assert total >= 20 and same < total
    assert GROWN["cold"].shares == {"cold": 1.0} and STYLES["cold"].cold and not STYLES["shallow"].cold


def test_every_grown_set_names_a_make_command_that_exists():
    """The hint a missing folder gets (knights ablation, training) is a real Makefile target."""
    from pathlib import Path

    from knights.data.grow import grow_command

    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    for name, grown in GROWN.items():
        command = grow_command(grown.folder)
        target = command.split()[1]
        assert f"\n{target}:" in makefile, (name, command)
        if "SET=" in command:
            style = command.split("SET=")[1]
            assert f"STYLE_PREFIX_{style} :=" in makefile
            # the Makefile splits the set's combined file into its folder: the same paths as the grow plan's
            kept = re.search(rf"^STYLE_KEPT_{style} := (\S+)$", makefile, re.M)
            split = f"data/generated/{kept.group(1) if kept else f'{style}/kept.csv'}"
            assert split == f"{grown.work}/{grown.combined}", name
            assert grown.folder == f"data/{style}", name
    assert grow_command("data/cold") == "make style-data SET=cold"
    assert grow_command("data/nowhere") == "make more-data"


def test_knights_data_grow_accepts_every_grown_set():
    """``make style-data SET=sound`` failed in argparse: the command's --set choices had missed a set."""
    from knights.cli import build_parser

    for name in GROWN:
        assert build_parser().parse_args(["data", "grow", "--set", name]).set == name
    with pytest.raises(SystemExit):
        build_parser().parse_args(["data", "grow", "--set", "nowhere"])


def test_a_sound_player_draws_an_iteration_in_its_opening_then_plays_the_best_move(tmp_path):
    """``stockfish-sound`` plays one of the iterations' moves for its first SOUND_PLIES plies (each drawn
    over the game's random stream), then the search's best move (rarely a random one)."""
    import random

    from knights.data.generate import SOUND_EPSILON, SOUND_PLIES

    board = chess.Board()
    shallow = ("e2e4", "d2d4", "g1f3", "c2c4")
    rng = random.Random(0)
    opening = {choose_move("stockfish-sound", board, "c2c4", rng, shallow).uci() for _ in range(200)}
    assert opening == set(shallow)
    assert choose_move("stockfish-sound", board, "c2c4", rng, ("a7a5",)).uci() == "c2c4"   # not legal: the best
    late = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    for _ in range(SOUND_PLIES):
        late.push(next(m for m in late.legal_moves if late.piece_at(m.from_square).piece_type == chess.KNIGHT))
    assert late.ply() >= SOUND_PLIES
    best = next(iter(late.legal_moves)).uci()
    picks = [choose_move("stockfish-sound", late, best, rng, shallow).uci() for _ in range(1000)]
    assert 0.9 < picks.count(best) / len(picks) < 1.0 and SOUND_EPSILON < 0.1
    assert GROWN["sound"].folder == "data/sound" and "data/more" in GROWN["sound"].exclude
    assert set(GROWN["sound"].needs) == {"data/more", "data/endings", "data/shallow"}
    # EL/v23's data: data/sound's first positions, from the same folder's parts into a file and folder of their own
    first = GROWN["sound300k"]
    assert (first.shares, first.work, first.exclude) == (GROWN["sound"].shares, GROWN["sound"].work,
                                                         GROWN["sound"].exclude)
    assert first.combined != GROWN["sound"].combined and first.folder == "data/sound300k"
    # the style experiment's other sets were grown where data/more, endings and shallow were absent: leaving out
    # only what they left out then makes them the same file on any machine
    assert all(GROWN[name].exclude == EXCLUDE and not GROWN[name].needs for name in ("cold", "chaos", "again"))
    # sound2: the same players from a second seed, leaving out only what every grown set must (so that it is the
    # same file on any machine with data/full), under game numbers of its own
    assert STYLES["sound2"].players is STYLES["sound"].players and list(SEEDS.values()).count(SEEDS["sound2"]) == 1
    assert GROWN["sound2"].exclude == EXCLUDE and STYLES["sound2"].game_prefix != STYLES["sound"].game_prefix
    # sound3: a third seed that leaves out data/sound2's positions too (EL/v25, whose recipe goes on, learned them)
    assert STYLES["sound3"].players is STYLES["sound"].players and list(SEEDS.values()).count(SEEDS["sound3"]) == 1
    assert GROWN["sound3"].exclude == (*EXCLUDE, "data/sound2") and GROWN["sound3"].folder == "data/sound3"
    assert len({STYLES[s].game_prefix for s in ("sound", "sound2", "sound3")}) == 3
    # and it refuses to play without data/sound2 (it would write another file), naming the command that makes it
    with pytest.raises(FileNotFoundError, match=r"data/sound2.*make style-data SET=sound2"):
        grow(10, grown="sound3", root=tmp_path, progress=False)
    assert not (tmp_path / "data/generated/sound3").exists()
