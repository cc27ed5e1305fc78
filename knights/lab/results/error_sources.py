"""Where the evaluators err on real games: ``knights error-sources``.

The headline figure of ``knights results`` is one number a set: the MAE on quiet positions
within a pawn of level. This module splits it on the independent ``games`` set (games between
players of kinds the training generator never uses, :mod:`knights.lab.arena.testsets`) by what the
positions are, so that a gap to Stockfish at depth 1 can be traced to a kind of position:

* ``players``: who played the game: Stockfish on both sides (``sf-soft``: plausible moves),
  material searchers on both sides (``ab1``-``ab3``, ``oneply-material``: material first, no
  positional sense), or one of each;
* ``material``: how far counting material is from level (|material| in pawns: equal, one pawn,
  two or more): on level positions a material imbalance is compensated by something
  the evaluator has to see;
* ``men``: men on the board (an endgame has 10 or fewer).

The same split by material and men is made on the test letters ``j`` (positions of the training
generator's own games, never trained on) when ``data/full`` is here: there the networks beat
Stockfish at depth 1 overall, and the split shows on which positions.

For each group and evaluator (counting material, Stockfish at depth 1 (searching the level rows one after
another, so its figures differ a little from the headline's, which searches the whole set), the newest trained EL
network and, when shipped, the democracy), over the same rows: their number, the MAE, the mean
|value| the evaluator gives and the mean |label|.

A mean |value| above the labels' on these rows does not by itself make an evaluator overconfident:
the rows are chosen by their label (within a pawn), so any evaluator that errs at all reads farther
from level there than the labels do. ``calibration`` asks the other way round, on every quiet row of
every set, for the newest network: among the quiet rows where it says within
:data:`~knights.lab.results.tables.CALIBRATION_PAWNS`, how large are the labels for a value it gives
(the least-squares slope of label on value through 0: 1 is calibrated, above 1 the network
understates advantages), and what
the headline MAE and the MAE over all quiet rows read with its values scaled by each of
:data:`SCALES`. A scale below 1 lowers the headline (rows chosen by label reward a timid
evaluator) and raises the error over the quiet rows chosen by the position alone; this is why the
headline is never read alone. The file (``report/results/error_sources.json``)::

    {"generated", "seconds", "evaluators": [names],
     "sets": {"games": {"file", "rows", "level_rows",
                        "groups": {"all": {"all": {"rows", "mean_abs_label",
                                                   "by_evaluator": {name: {"mae", "mean_abs_value"}}}},
                                   "players": {"stockfish both sides": {...}, ...},
                                   "material": {...}, "men": {...}}},
              "j": {... the same without "players"; absent when data/full is not here}},
     "calibration": {"network", "sets": {name: {"rows", "quiet_rows", "slope",
                                                "by_scale": {"1.0": {"level_mae", "quiet_mae"}}}}}}
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from knights.board.arrays import material_balance
from knights.common import module_main, write_json
from knights.data import csslab
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import Encoded, select_chunks
from knights.evaluate import democracy
from knights.evaluate.base import Evaluator, network_evaluator
from knights.lab.results.independent import INDEPENDENT_DIR, evaluate_in_blocks, load_set
from knights.lab.results.tables import (
    CALIBRATION_PAWNS,
    RESULTS_DIR,
    STOCKFISH_DEPTH1,
    calibration_slope,
    headline_metrics,
    level_rows,
    quiet_rows,
    stockfish_depth1,
)
from knights.learn import registry
from knights.learn.experiment import FULL_DATA, TEST_LETTERS
from knights.learn.training import check_folder, check_output

ERROR_SOURCES_JSON = RESULTS_DIR / "error_sources.json"
GAMES_SET = "games"
MATERIAL_SEARCHERS = ("ab1", "ab2", "ab3", "oneply-material")
"""The independent games' players that search material alone."""
SCALES = (1.0, 0.8, 0.6)
"""The factors the calibration scales the network's values by."""
STOCKFISH_PLAYERS = "sf-soft:"
"""The prefix of the independent games' Stockfish players (:class:`knights.lab.arena.testsets.SoftmaxStockfish`)."""


def player_group(white: str, black: str) -> str:
    """Which kind of game a row comes from, by its two players.

    >>> player_group("sf-soft:n50:t1.5", "sf-soft:n200:t1.0"), player_group("ab2", "oneply-material")
    ('stockfish both sides', 'material searchers both sides')
    >>> player_group("ab3", "sf-soft:n1000:t0.5")
    'one of each'
    >>> player_group("ab3", "sunfish")
    Traceback (most recent call last):
    ValueError: unknown player 'sunfish': neither Stockfish (sf-soft:...) nor a material searcher (ab1, ...)
    """
    for player in (white, black):
        if player not in MATERIAL_SEARCHERS and not player.startswith(STOCKFISH_PLAYERS):
            raise ValueError(f"unknown player {player!r}: neither Stockfish ({STOCKFISH_PLAYERS}...) nor a "
                             f"material searcher ({MATERIAL_SEARCHERS[0]}, ...)")
    searchers = sum(p in MATERIAL_SEARCHERS for p in (white, black))
    return ("stockfish both sides", "one of each", "material searchers both sides")[searchers]


def material_group(material: float) -> str:
    """|material| in pawns (P=1, N=B=3, R=5, Q=9, so whole pawns), in three bands.

    >>> material_group(0), material_group(-1), material_group(2), material_group(9)
    ('equal', 'one pawn', 'two pawns or more', 'two pawns or more')
    """
    size = abs(material)
    return "equal" if size < 0.5 else "one pawn" if size < 1.5 else "two pawns or more"


def men_group(men: int) -> str:
    """Men on the board: an endgame (10 or fewer), a middlegame (11-24), an opening (25+)."""
    return "10 or fewer" if men <= 10 else "11-24" if men <= 24 else "25 or more"


def read_players(path: Path) -> list[tuple[str, str]]:
    """Every row's (White's player, Black's player), in file order."""
    with path.open(newline="") as f:
        return [(row["white_player"], row["black_player"]) for row in csv.DictReader(f)]


def measured() -> list[tuple[str, Evaluator]]:
    """The newest trained EL network and, when shipped, the democracy."""
    out: list[tuple[str, Evaluator]] = []
    versions = [v for v in registry.all_versions("EL") if v.is_trained()]
    if versions:
        out.append((versions[-1].name, network_evaluator(versions[-1].name)))
    if democracy.is_shipped():
        dem = democracy.load_shipped()
        out.append((dem.name, dem))
    return out


GROUP_ORDER = ("all", "stockfish both sides", "one of each", "material searchers both sides", "equal",
               "one pawn", "two pawns or more", "25 or more", "11-24", "10 or fewer")
"""The groups in the order the file lists them (openings to endings, level to unbalanced)."""


def group_table(labels: np.ndarray, values: dict[str, np.ndarray], groups: np.ndarray) -> dict[str, Any]:
    """Per group present (in :data:`GROUP_ORDER`): rows, mean |label|, and per evaluator the MAE and mean |value|."""
    out: dict[str, Any] = {}
    for name in sorted(set(groups.tolist()), key=GROUP_ORDER.index):
        rows = groups == name
        out[name] = {"rows": int(rows.sum()), "mean_abs_label": float(np.abs(labels[rows]).mean()),
                     "by_evaluator": {ev: {"mae": float(np.abs(v[rows] - labels[rows]).mean()),
                                           "mean_abs_value": float(np.abs(v[rows]).mean())}
                                      for ev, v in values.items()}}
    return out


def split(data: Encoded, players: list[tuple[str, str]] | None, evaluators: list[tuple[str, Evaluator]],
          progress: bool = True) -> dict[str, Any]:
    """One set's level quiet rows by group (``players``: each row's, or None to leave that split out)."""
    level = level_rows(data.target, quiet_rows(data))
    where = np.flatnonzero(level)
    data = data.take(where)
    labels = np.asarray(data.target, dtype=np.float64)
    material = np.clip(material_balance(data.squares), -csslab.CLIP_PAWNS, csslab.CLIP_PAWNS)
    values = {"material": material, STOCKFISH_DEPTH1: stockfish_depth1(data, progress=progress)}
    values.update({name: evaluate_in_blocks(ev, data) for name, ev in evaluators})
    values = {name: np.asarray(v, dtype=np.float64) for name, v in values.items()}
    men = (np.asarray(data.squares) != 0).sum(axis=1)
    groups = {"all": np.array(["all"] * len(where))}
    if players is not None:
        groups["players"] = np.array([player_group(*players[i]) for i in where])
    groups["material"] = np.array([material_group(m) for m in material])
    groups["men"] = np.array([men_group(int(n)) for n in men])
    return {"level_rows": len(where), "groups": {kind: group_table(labels, values, g) for kind, g in groups.items()}}


def calibration(values: np.ndarray, labels: np.ndarray, calm: np.ndarray) -> dict[str, Any]:
    """How one evaluator's values relate to the labels on one set's quiet rows (``calm``): the
    slope of label on value (:func:`~knights.lab.results.tables.calibration_slope`, over ``rows``
    rows), and for each of :data:`SCALES` the headline MAE (quiet rows within a pawn by their
    label) and the MAE over every quiet row, with the values scaled.

    >>> c = calibration(np.array([1.0, -1.0, 2.0, 1.5]), np.array([0.5, -2.0, 4.0, 3.0]), np.array([True] * 4))
    >>> c["rows"], round(c["slope"], 3)          # the labels are larger than what it says
    (4, 1.818)
    >>> [(round(c["by_scale"][k]["level_mae"], 2), round(c["by_scale"][k]["quiet_mae"], 2)) for k in ("1.0", "0.6")]
    [(0.5, 1.25), (0.1, 1.6)]

    Scaled down, the one level row (label 0.5) reads better and every quiet row together worse.
    """
    values = np.asarray(values, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    calm = np.asarray(calm, dtype=bool)
    slope, rows = calibration_slope(values, labels, calm)
    by_scale = {}
    for k in SCALES:
        scaled = k * values
        by_scale[f"{k:.1f}"] = {
            "level_mae": headline_metrics(scaled, labels, calm)["quiet_level_mae"],
            "quiet_mae": float(np.abs(scaled[calm] - labels[calm]).mean()) if calm.any() else None}
    return {"rows": rows, "quiet_rows": int(calm.sum()), "slope": slope, "by_scale": by_scale}


def calibrations(sets: dict[str, Encoded], network: tuple[str, Evaluator]) -> dict[str, Any]:
    """:func:`calibration` of the newest network on each set."""
    name, evaluator = network
    return {"network": name,
            "sets": {set_name: calibration(evaluate_in_blocks(evaluator, data), data.target, quiet_rows(data))
                     for set_name, data in sets.items()}}


def run(*, independent_dir: Path = INDEPENDENT_DIR, data_dir: str | Path = FULL_DATA, out: Path = ERROR_SOURCES_JSON,
        progress: bool = True) -> dict[str, Any]:
    """Split the ``games`` set's level quiet rows (and ``j``'s, when ``data_dir`` is here) and write ``out``."""
    started = time.perf_counter()
    path = independent_dir / f"{GAMES_SET}.csv"
    if not path.is_file():
        raise SystemExit(f"knights error-sources: {registry.repo_relative(path)} is missing "
                         "(make independent builds it)")
    data, report = load_set(path)
    players = read_players(path)
    if len(players) != len(data):
        raise SystemExit(f"knights error-sources: {registry.repo_relative(path)} has {len(players)} rows but "
                         f"{len(data)} read as positions ({report.summary()}); rebuild it with make independent")
    evaluators = measured()
    sets = {GAMES_SET: {"file": registry.repo_relative(path), "rows": len(data),
                        **split(data, players, evaluators, progress)}}
    whole = {other.stem: data if other == path else load_set(other)[0]
             for other in sorted(independent_dir.glob("*.csv"))}
    full = registry.repo_path(data_dir)
    if full.is_dir():
        letters = load_encoded(select_chunks(full, TEST_LETTERS), ChunkCache(full.parent / "cache"), progress=False)
        sets["j"] = {"file": f"{registry.repo_relative(full)} letters {TEST_LETTERS}", "rows": len(letters),
                     **split(letters, None, evaluators, progress)}
        whole["j"] = letters
    networks = [(name, ev) for name, ev in evaluators if name.startswith("EL/")]
    calibrated = {"calibration": calibrations(whole, networks[0])} if networks else {}
    doc = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "seconds": round(time.perf_counter() - started, 1),
           "evaluators": ["material", STOCKFISH_DEPTH1, *(name for name, _ in evaluators)], "sets": sets,
           **calibrated}
    write_json(out, doc)
    return doc


DESCRIPTION = ("Where the evaluators err on the independent games set's quiet, level positions: by the players "
               "of the game, the material balance and the men on the board (report/results/error_sources.json).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--independent-dir", default=str(INDEPENDENT_DIR), help="folder of the independent sets")
    p.add_argument("--out", default=str(ERROR_SOURCES_JSON))
    p.add_argument("--quiet", action="store_true")


def main_args(a: argparse.Namespace) -> int:
    out = registry.repo_path(a.out)
    check_folder(registry.repo_path(a.independent_dir), "--independent-dir")
    check_output(out, "--out")
    doc = run(independent_dir=registry.repo_path(a.independent_dir), out=out, progress=not a.quiet)
    names = doc["evaluators"]
    for set_name, st in doc["sets"].items():
        print(f"{set_name:<40}{'rows':>6}{'|label|':>9}" + "".join(f"{n[:18]:>19}" for n in names))
        for kind, table in st["groups"].items():
            for group, row in table.items():
                cells = "".join(f"{row['by_evaluator'][n]['mae']:>11.3f} "
                                f"({row['by_evaluator'][n]['mean_abs_value']:5.2f})" for n in names)
                print(f"{kind + ': ' + group:<40}{row['rows']:>6}{row['mean_abs_label']:>9.3f}{cells}")
    print("MAE (mean |value|) in pawns over the quiet positions within a pawn of level")
    if "calibration" in doc:
        cal = doc["calibration"]
        print(f"calibration of {cal['network']}: slope of label on value (quiet rows where it says within "
              f"{CALIBRATION_PAWNS:g}); headline MAE / quiet-row MAE with the values scaled by " + ", ".join(
                  f"{k:g}" for k in SCALES))
        for set_name, c in cal["sets"].items():
            scaled = [c["by_scale"][f"{k:.1f}"] for k in SCALES]
            cells = "  ".join(f"{x['level_mae']:.3f} / {x['quiet_mae']:.3f}" for x in scaled)
            print(f"  {set_name:<10} slope {c['slope']:.3f} over {c['rows']:,} rows   {cells}")
    print(f"wrote {registry.repo_relative(out)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.results.error_sources", DESCRIPTION, add_arguments, main_args, argv)


if __name__ == "__main__":
    sys.exit(main())
