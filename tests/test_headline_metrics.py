"""The headline figures of ``knights results``: MAE on quiet positions within a pawn of level
(knights.lab.results.tables), the error in win probability (knights.learn.metrics), the one-ply
move quality against Stockfish (knights.lab.results.move_choice), and their place in the tables
(knights.lab.results.independent)."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from knights.board.positions import positions_from_boards
from knights.data import csslab
from knights.data.chunks import read_chunk
from knights.evaluate.base import MaterialEvaluator, NetworkEvaluator
from knights.features.sparse import SparseSpec
from knights.lab.results.independent import headline, markdown, set_table
from knights.lab.results.move_choice import AnalysisCache, judge, measure, one_ply_choices
from knights.lab.results.tables import evaluation_row, headline_metrics, quiet_rows
from knights.learn.metrics import win_probability_error
from knights.learn.nnue import SparseNet

QUIET_LEVEL = "4k3/pp6/8/8/8/8/PP6/4K3 w - - 0 1"             # nothing to take, level
HANGING_QUEEN = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"           # Rxd5 wins the queen for nothing
IN_CHECK = "4k3/8/8/8/8/8/3PPr2/4K3 w - - 0 1"                # Kxf2 (no capture that wins... but in check)
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"          # Ra8#


def _write_set(path: Path, rows: list[tuple[str, str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csslab.RowWriter(fh)
        for fen, cp in rows:
            w.write({"board": fen, "cp": cp})
    return path


def test_quiet_rows_follow_the_one_definition(tmp_path: Path):
    data, _ = read_chunk(_write_set(tmp_path / "s.csv", [(QUIET_LEVEL, "0.10"), (HANGING_QUEEN, "9.00"),
                                                         (IN_CHECK, "0.00")]))
    assert quiet_rows(data).tolist() == [True, False, False]


def test_quiet_mae_counts_only_quiet_rows_within_a_pawn_and_buckets_them():
    target = np.array([0.5, -1.0, 0.2, 2.0, 7.0, 10.0])
    pred = np.array([0.0, 0.0, 5.0, 1.0, 7.0, 10.0])
    calm = np.array([True, True, False, True, True, True])      # the 5-pawn miss at 0.2 is not quiet
    h = headline_metrics(pred, target, calm)
    assert h["quiet_level_rows"] == 2                           # |eval| <= 1 includes -1.0
    assert h["quiet_level_mae"] == pytest.approx(0.75)          # (0.5 + 1.0) / 2
    row = evaluation_row("x", "network", pred, target, calm)
    assert list(row)[:5] == ["name", "kind", "quiet_level_mae", "quiet_level_rows", "win_probability_error"]
    assert row["quiet_rows"] == 5
    quiet = {b["bucket"]: (b["rows"], b["mae"]) for b in row["quiet_buckets"]}
    assert quiet["< 1"] == (1, pytest.approx(0.5)) and quiet["1-3"] == (2, pytest.approx(1.0))
    assert quiet[">= 6"] == (1, 0.0) and quiet["mate"] == (1, 0.0) and quiet["3-6"] == (0, None)
    assert headline_metrics(pred, target, np.zeros(6, bool))["quiet_level_mae"] is None


def test_win_probability_error_weighs_a_pawn_at_level_far_more_than_at_eight():
    assert win_probability_error(np.array([1.0, -3.0]), np.array([1.0, -3.0])) == 0.0
    at_level = win_probability_error(np.array([0.0]), np.array([1.0]))
    assert at_level == pytest.approx(1 / (1 + np.exp(-0.368208)) - 0.5)      # 0.091: Lichess's scale
    assert win_probability_error(np.array([8.0]), np.array([9.0])) < at_level / 5
    assert win_probability_error(np.array([1.0]), np.array([0.0])) == pytest.approx(at_level)


def test_a_network_over_sparse_inputs_goes_through_network_evaluator():
    torch.manual_seed(0)
    ev = NetworkEvaluator(SparseNet(hidden=8, head=(4,)), SparseSpec(), "sparse")
    values = ev.evaluate(positions_from_boards([chess.Board(QUIET_LEVEL), chess.Board(HANGING_QUEEN)]))
    assert values.shape == (2,) and np.isfinite(values).all()


@pytest.mark.stockfish
def test_move_quality_on_a_mate_in_one_and_a_free_queen(tmp_path: Path, stockfish: str):
    cache_path = tmp_path / "cache.jsonl"
    data, _ = read_chunk(_write_set(tmp_path / "games.csv", [(MATE_IN_ONE, "#1"), (HANGING_QUEEN, "9.00")]))
    first = measure(data, [], every=1, depth=8, cache_path=cache_path, progress=False)
    rows = {r["name"]: r for r in first["rows"]}
    assert first["positions"] == 2 and set(rows) == {"material", "stockfish depth 1"}
    assert rows["material"]["best_move_share"] == 1.0 and rows["material"]["mean_cp_loss"] == 0.0
    assert rows["stockfish depth 1"]["best_move_share"] >= 0.5      # the mate in one (at depth 1 it checks with Re2+)
    assert first["stockfish_searches"] > 0
    # the mate in one is a quiet rook move that checks, the free queen a capture: each its own kind
    assert first["best_kinds"] == {"check": 1, "capture": 1}
    split = first["by_best_kind"]["material"]
    assert split["capture"] == {"positions": 1, "best_move_share": 1.0, "mean_cp_loss": 0.0, "no_loss_share": 1.0}
    assert rows["material"]["no_loss_share"] == 1.0
    # Stockfish's own choice at depths 1-6 judged the same way: depth 1 is the baseline row (Debian's Stockfish gives
    # check with Re2+ there instead of taking the queen); at depth 6 it finds both moves the judge plays
    by_depth = {d["depth"]: d for d in first["stockfish_by_depth"]}
    assert list(by_depth) == [1, 2, 3, 4, 5, 6]
    assert by_depth[1]["best_move_share"] == rows["stockfish depth 1"]["best_move_share"]
    assert by_depth[1]["by_best_kind"] == first["by_best_kind"]["stockfish depth 1"]
    assert by_depth[6]["best_move_share"] == 1.0 and by_depth[6]["mean_cp_loss"] == 0.0
    again = measure(data, [], every=1, depth=8, cache_path=cache_path, progress=False)
    assert again["stockfish_searches"] == 0 and again["rows"] == first["rows"]   # all from the cache
    assert again["stockfish_by_depth"] == first["stockfish_by_depth"]

    board = chess.Board(HANGING_QUEEN)
    with AnalysisCache(cache_path) as cache:
        assert judge(cache, board, chess.Move.from_uci("d2d5"), 8) == (True, 0)
        best, loss = judge(cache, board, chess.Move.from_uci("e1f1"), 8)        # leaves the queen be
        assert not best and loss >= 800                                         # about a queen
        mated = chess.Board(MATE_IN_ONE)
        best, loss = judge(cache, mated, chess.Move.from_uci("h2h3"), 8)
        assert not best and loss > 0


@pytest.mark.stockfish
def test_an_evaluator_that_loves_losing_material_scores_badly(tmp_path: Path, stockfish: str):
    class Backwards(MaterialEvaluator):
        name = "backwards"

        def evaluate(self, positions):
            return -super().evaluate(positions)

    boards = [chess.Board(HANGING_QUEEN)]
    assert one_ply_choices(Backwards(), boards, progress=False)[0].uci() != "d2d5"
    data, _ = read_chunk(_write_set(tmp_path / "games.csv", [(HANGING_QUEEN, "9.00")]))
    result = measure(data, [("network", Backwards())], every=1, depth=8, cache_path=tmp_path / "c.jsonl",
                     progress=False)
    row = next(r for r in result["rows"] if r["name"] == "backwards")
    assert row["best_move_share"] == 0.0 and row["mean_cp_loss"] >= 800
    shallow = measure(data, [], every=1, depth=3, cache_path=tmp_path / "c.jsonl", progress=False)
    assert [d["depth"] for d in shallow["stockfish_by_depth"]] == [1, 2]     # none as deep as the judge


def test_the_games_set_carries_move_quality_into_its_rows_and_the_headline(tmp_path: Path):
    path = _write_set(tmp_path / "games.csv", [(QUIET_LEVEL, "0.10"), (HANGING_QUEEN, "9.00"), (IN_CHECK, "0.00")])
    asked: list[int] = []

    def fake_quality(data, measured):
        asked.append(len(data))
        return {"positions": 3, "every": 1, "depth": 10, "method": "m", "stockfish_searches": 0, "cache": "c",
                "seconds": 0.0, "rows": [{"name": "material", "kind": "baseline", "positions": 3,
                                          "best_move_share": 2 / 3, "mean_cp_loss": 12.5}],
                "stockfish_by_depth": [{"depth": 1, "best_move_share": 1 / 3, "mean_cp_loss": 40.0},
                                       {"depth": 2, "best_move_share": 1.0, "mean_cp_loss": 0.0}]}

    table = set_table(path, [], None, with_stockfish=False, progress=False, move_quality=fake_quality)
    assert asked == [3] and table["quiet_rows"] == 1
    material = table["evaluation"][0]
    assert list(material)[:7] == ["name", "kind", "quiet_level_mae", "quiet_level_rows", "win_probability_error",
                                  "best_move_share", "mean_cp_loss"]
    assert material["quiet_level_rows"] == 1 and material["quiet_level_mae"] == pytest.approx(0.1)
    other = set_table(_write_set(tmp_path / "tactics.csv", [(QUIET_LEVEL, "0.10")]), [], None,
                      with_stockfish=False, progress=False, move_quality=fake_quality)
    assert asked == [3] and "move_quality" not in other                      # only on the games set
    head = headline(None, [table, other])
    assert head["quiet_level_mae"]["material"] == {"games": pytest.approx(0.1), "tactics": pytest.approx(0.1)}
    assert head["move_quality"]["rows"]["material"] == {"best_move_share": 2 / 3, "mean_cp_loss": 12.5}
    json.dumps(head)
    text = markdown(None, [table, other])
    assert text.index("## Headline: what play needs") < text.index("## Independent set `games`")
    assert "| material | 66.7% | 12.5 |" in text
    assert "Stockfish's own move, by its depth: depth 1 33.3%, 40 cp; depth 2 100.0%, 0 cp." in text
    assert table["move_quality"]["stockfish_by_depth"][1]["depth"] == 2          # kept in the table as measured


def test_the_readme_block_leads_with_what_play_needs(tmp_path: Path):
    import shutil
    import sys

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "report"))
    from reportgen import readme
    from reportgen.sources import Sources

    res = tmp_path / "results"
    res.mkdir()
    shutil.copy(root / "report" / "results" / "settings.json", res)

    def row(name: str, kind: str, quiet: float, share: float | None = None) -> dict:
        out = {"name": name, "kind": kind, "mae": 1.0, "median_ae": 0.5, "sign_agreement": 0.8, "rows": 10,
               "quiet_level_mae": quiet, "win_probability_error": quiet / 10}
        return out if share is None else {**out, "best_move_share": share, "mean_cp_loss": 100 * (1 - share)}

    games = {"set": "games", "move_quality": {"positions": 1000, "depth": 10, "stockfish_by_depth": [
                 {"depth": 1, "best_move_share": 0.6}, {"depth": 2, "best_move_share": 0.625}]},
             "evaluation": [row("material", "baseline", 0.7, 0.2), row("stockfish depth 1", "baseline", 0.5, 0.6),
                            row("EL/v1", "network", 0.9, 0.3), row("EL/v2", "network", 0.6, 0.4)]}
    tactics = {"set": "tactics", "evaluation": [row("material", "baseline", 0.8), row("stockfish depth 1", "baseline",
                                                0.4), row("EL/v1", "network", 0.9), row("EL/v2", "network", 0.7)]}
    (res / "independent.json").write_text(json.dumps({"sets": [games, tactics]}))
    rows = readme.headline_rows(Sources(root, results_dir=res, models={"EL": tmp_path, "SL": tmp_path}))
    assert rows[0] == ("MAE in pawns on quiet positions within a pawn of level (`games` / `tactics`): the best "
                       "network there, EL/v2", "0.60 / 0.70")
    assert rows[1][1] == "0.50 / 0.40" and rows[2][1] == "0.70 / 0.80"
    assert rows[4][1] == "EL/v2 40.0%, 60 cp; material 20.0%, 80 cp; stockfish depth 1 60.0%, 40 cp"
    assert rows[5] == ("the same share for Stockfish's own move at depth 1 to 2", "60.0% / 62.5%")


def test_level_reference_scores_the_always_level_guess_on_the_headline_rows():
    from knights.lab.results.tables import LEVEL_PAWNS, headline_metrics, level_note, level_reference

    target = np.array([0.8, -0.4, 0.0, 2.5, -1.0, 0.9])
    calm = np.array([True, True, True, True, True, False])
    ref = level_reference(target, calm)
    # the rows are exactly the headline's rows: quiet and within LEVEL_PAWNS
    assert ref["rows"] == headline_metrics(np.zeros(6), target, calm)["quiet_level_rows"] == 4
    assert ref["always_level_mae"] == pytest.approx((0.8 + 0.4 + 0.0 + 1.0) / 4)
    assert ref["always_level_mae"] == pytest.approx(headline_metrics(np.zeros(6), target, calm)["quiet_level_mae"])
    assert LEVEL_PAWNS == 1.0
    assert "0.550" in level_note(ref)[1] and "4 quiet" in level_note(ref)[1]
    assert level_note(level_reference(target, np.zeros(6, bool))) == []


def test_the_quiet_win_probability_error_is_chosen_by_the_position_not_its_label():
    from knights.lab.results.tables import headline_metrics
    from knights.learn.metrics import win_probability_error

    target = np.array([0.5, 4.0, -6.0, 0.2])
    pred = np.array([0.0, 0.0, 0.0, 3.0])
    calm = np.array([True, True, True, False])
    h = headline_metrics(pred, target, calm)
    # every quiet row counts, the lopsided ones too: always 0 is punished there
    assert h["quiet_win_probability_error"] == pytest.approx(win_probability_error(pred[:3], target[:3]))
    assert h["quiet_win_probability_error"] > 0.2     # (0.05 + 0.31 + 0.40) / 3
    assert headline_metrics(pred, target, np.zeros(4, bool))["quiet_win_probability_error"] is None


def test_the_headline_carries_the_always_level_yardstick_per_set(tmp_path: Path):
    path = _write_set(tmp_path / "games.csv", [(QUIET_LEVEL, "0.10"), (HANGING_QUEEN, "9.00")])
    table = set_table(path, [], None, with_stockfish=False, progress=False)
    assert table["quiet_level"] == {"rows": 1, "always_level_mae": pytest.approx(0.1)}
    head = headline(None, [table])
    assert head["always_level_mae"] == {"games": pytest.approx(0.1)}
    assert head["quiet_win_probability_error"]["material"]["games"] >= 0
    assert "| *yardstick: always 0 (level)* | 0.100 |" in markdown(None, [table])
