"""More training data from more generators: ``knights data grow`` and ``make more-data``.

``data/full`` comes from one generator (the ``mixed`` style of :mod:`knights.data.generate`),
so a network trained on it can learn that generator's habits. Growing adds games of the
other :data:`~knights.data.generate.STYLES` (longer random openings, stronger players,
material odds), each labelled exactly as ``data/full`` is (Stockfish at the same depth,
one search per position), in three steps:

1. **Play.** Each style is generated into ``<work>/<style>.csv`` by
   :func:`~knights.data.generate.generate`, with its own seed, in resumable parts. The
   styles take turns in ``rounds`` (each round raises every style's target by its share
   of ``positions``/``rounds``), so an interrupted run has some of every style, and a
   rerun with a larger ``positions`` reuses every part already played.
2. **Combine.** The styles' games are interleaved (one game of each in turn) into
   ``<work>/more.csv``, keeping a row only if its position (:func:`position_key`) is new:
   not in ``data/full`` or another training source, not in an independent test set
   (they must stay unseen), and not earlier in the combined file. Every drop is counted
   by reason.
3. **Split** (the Makefile): ``data/split.sh`` cuts ``more.csv`` into ``data/more/Chess_More_*``
   chunks, the same format and split rules as ``data/full``.

The same seed, depth, positions, Stockfish build and excluded files give the same
``more.csv``. Growing again (a larger ``positions``) extends every style's file, but the
combined file is interleaved and cut anew, so its chunks change: train on ``data/more``
once it has grown as far as it will.

Timing: ``<work>/timings.json`` adds up, per style, the rows and the seconds (wall and
worker) of every call to :func:`~knights.data.generate.generate` that finished, over all
runs, so a resumed run reports the time of all of them. A call cut short loses its time
while its finished parts are kept and counted by the next call, so only a run stopped
by hand overstates its rate (by less than one call's share).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knights.common import write_json
from knights.data import csslab
from knights.data.generate import STYLES, Recipe, generate
from knights.data.independent import OUT_DIR as INDEPENDENT_DIR
from knights.data.independent import REPO_ROOT, TrainingKeys, fen_key, training_keys

TIMINGS = "timings.json"
"""Per style, the rows and seconds of every finished call, over all runs (in the work folder)."""
WORK_DIR = "data/generated/more"
"""Where the styles' files, their parts and the combined ``more.csv`` are written (ignored by git)."""
SHARES = {"openings": 0.35, "strong": 0.35, "odds": 0.30}
"""Each grown style's share of the positions."""
SEEDS = {"openings": 3101, "strong": 3102, "odds": 3103, "endings": 3104, "shallow": 3105, "cold": 3106,
         "chaos": 3107, "again": 3108, "sound": 3109, "sound2": 3110,
         "sound3": 3111}
"""Each style's seed (``data/full`` uses 2024): no two runs share a game stream."""
EXCLUDE = ("data/full", "data/sample", INDEPENDENT_DIR)
"""Positions already here are not added: the training data made so far (``data/full`` holds
every row of ``data/generated/games.csv``, so that file is not read again), and the
independent test sets, which must stay unseen by every training run."""


@dataclass(frozen=True)
class GrownSet:
    """One folder of grown data: which styles in what shares, where they are played, what
    they leave out, and the combined file the Makefile splits into chunks."""

    shares: dict[str, float]
    work: str
    exclude: tuple[str, ...]
    combined: str
    folder: str
    """Where the Makefile's target (:attr:`make`) splits the combined file into chunks."""
    make: str = ""
    """The make command that grows it (empty: ``make <name>-data``)."""
    needs: tuple[str, ...] = ()
    """Folders of :attr:`exclude` that must be here before anything is played: without them the set would be
    another file (others missing are only recorded as absent, with a warning)."""


_BEFORE_SOUND = ("data/more", "data/endings", "data/shallow")
"""The grown sets data/sound leaves out (they were here when it was grown)."""
GROWN: dict[str, GrownSet] = {
    "more": GrownSet(SHARES, WORK_DIR, EXCLUDE, "more.csv", "data/more"),
    "endings": GrownSet({"endings": 1.0}, "data/generated/endings", (*EXCLUDE, "data/more"), "kept.csv",
                        "data/endings"),
    "shallow": GrownSet({"shallow": 1.0}, "data/generated/shallow", (*EXCLUDE, "data/more", "data/endings"),
                        "kept.csv", "data/shallow"),
    **{name: GrownSet({name: 1.0}, f"data/generated/{name}", EXCLUDE, "kept.csv", f"data/{name}",
                      make=f"make style-data SET={name}")
       for name in ("cold", "chaos", "again")},
    "sound": GrownSet({"sound": 1.0}, "data/generated/sound", (*EXCLUDE, *_BEFORE_SOUND), "kept.csv", "data/sound",
                      make="make style-data SET=sound", needs=_BEFORE_SOUND),
    # the sound games' first 300,000 played positions, as data/sound held them when EL/v23 trained: data/sound's own
    # parts (the same folder, so nothing is played twice) put together up to that count, into a file and folder of
    # their own
    "sound300k": GrownSet({"sound": 1.0}, "data/generated/sound", (*EXCLUDE, *_BEFORE_SOUND), "kept300k.csv",
                          "data/sound300k", make="make style-data SET=sound300k", needs=_BEFORE_SOUND),
    "sound2": GrownSet({"sound2": 1.0}, "data/generated/sound2", EXCLUDE, "kept.csv", "data/sound2",
                       make="make style-data SET=sound2"),
    "sound3": GrownSet({"sound3": 1.0}, "data/generated/sound3", (*EXCLUDE, "data/sound2"), "kept.csv", "data/sound3",
                       make="make style-data SET=sound3", needs=("data/sound2",)),
}
"""``data/more`` (``make more-data``: the three styles beside ``data/full``'s) and
``data/endings`` (``make endings-data``: endings played out from a thinned start, for the networks that
train on them; it also leaves out ``data/more``'s positions) and ``data/shallow`` (``make shallow-data``:
games of Stockfish playing the move its labelling search ranked first after iteration 1-4); and three
sets that test what kind of game the networks lack, each against the others at the same size: ``data/cold``
(a fresh short search's moves), ``data/chaos`` (both sides often random) and ``data/again`` (more of
``data/full``'s own style, the control), which leave out only ``data/full``, the sample and the independent sets
(the machine that grew them had no ``data/more``, ``data/endings`` or ``data/shallow``: their reports list those as
absent), so each is the same file on any machine; and ``data/sound``, sound
openings (no random plies at all) and the middlegames that follow, the kind of game the independent ``games``
set's Stockfish players reach, which leaves out every set before it (so it needs them), and ``data/sound300k``,
its first 300,000 played positions (EL/v23 trained on data/sound when it held that many);
``data/sound2``, the same games from a second seed for a version that continues from a parent trained on
``data/sound``: it leaves out only ``data/full``, the sample and the independent sets, so that it is the same
file on any machine that has ``data/full`` (some of its positions, mostly early in the opening, are also in
``data/sound`` and the other grown sets); ``data/sound3``, the same games from a third seed for the ablation rows
that go on from one trained on ``data/sound2`` (``v25_then_sound3``), leaving out ``data/sound2``'s positions too
(so it needs that folder); like ``data/sound2`` it does not leave out ``data/sound`` or the other grown sets."""


def grow_command(folder: str) -> str:
    """The make command that grows a data folder of :data:`GROWN` (``make more-data`` for any other)."""
    return next((g.make or f"make {name}-data" for name, g in GROWN.items() if g.folder == folder.rstrip("/")),
                "make more-data")


@dataclass
class StyleRun:
    style: str
    rows: int
    games: int
    seconds: float
    """Wall seconds of every finished call that played this style's rows, over all runs."""
    worker_seconds: float
    """The same, times the workers of each call."""


@dataclass
class GrowReport:
    out: Path
    styles: list[StyleRun] = field(default_factory=list)
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    seconds_play: float = 0.0
    """Wall seconds of this run's play step."""
    seconds_combine: float = 0.0
    workers: int = 1
    excluded: dict[str, object] = field(default_factory=dict)
    """What was read to leave positions out (:meth:`TrainingKeys.describe`): present and absent sources."""

    @property
    def played(self) -> int:
        return sum(s.rows for s in self.styles)

    @property
    def rate(self) -> float:
        """Positions a second for each worker, over every run's finished calls."""
        worker_seconds = sum(s.worker_seconds for s in self.styles)
        return self.played / worker_seconds if worker_seconds > 0 else float("nan")

    def as_dict(self, recipe: Recipe) -> dict[str, object]:
        generated = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        return {"generated": generated, "positions_kept": self.kept, "positions_played": self.played,
                "dropped": dict(sorted(self.dropped.items())),
                "styles": {s.style: {"rows": s.rows, "games": s.games, "seconds": round(s.seconds, 1),
                                     "seed": SEEDS[s.style], "description": STYLES[s.style].description}
                           for s in self.styles},
                "depth": recipe.depth, "workers": self.workers,
                "seconds_all_runs": round(sum(s.seconds for s in self.styles), 1),
                "worker_seconds_all_runs": round(sum(s.worker_seconds for s in self.styles), 1),
                "positions_per_worker_second": round(self.rate, 1),
                "seconds_play": round(self.seconds_play, 1), "seconds_combine": round(self.seconds_combine, 1),
                "excluded": self.excluded}

    def summary(self) -> str:
        drops = ", ".join(f"{n:,} {why}" for why, n in sorted(self.dropped.items())) or "none"
        return (f"{self.out}: {self.kept:,} new positions of {self.played:,} played "
                f"({', '.join(f'{s.style} {s.rows:,}' for s in self.styles)}); dropped: {drops}; "
                f"play {self.seconds_play:,.0f} s with {self.workers} workers ({self.rate:,.0f} positions a second "
                f"a worker over all runs), combine {self.seconds_combine:,.0f} s")


def targets(positions: int, rounds: int, shares: dict[str, float] = SHARES) -> list[dict[str, int]]:
    """Every style's target after each round: its share of ``positions``, reached in equal steps.

    >>> targets(1000, 2, {"a": 0.5, "b": 0.5})
    [{'a': 250, 'b': 250}, {'a': 500, 'b': 500}]
    """
    if positions < 1 or rounds < 1:
        raise ValueError(f"positions and rounds must be at least 1 (got {positions}, {rounds})")
    return [{style: max(1, round(positions * share * r / rounds)) for style, share in shares.items()}
            for r in range(1, rounds + 1)]


def read_games(path: Path) -> Iterator[list[list[str]]]:
    """The rows of a generated CSV, a game at a time (a game's rows are contiguous)."""
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        gid = header.index("game_id")
        game: list[list[str]] = []
        for row in reader:
            if game and row[gid] != game[0][gid]:
                yield game
                game = []
            game.append(row)
        if game:
            yield game


def interleave(paths: Sequence[Path]) -> Iterator[list[list[str]]]:
    """One game of each file in turn until all are used up."""
    streams = [read_games(p) for p in paths]
    while streams:
        alive = []
        for stream in streams:
            game = next(stream, None)
            if game is not None:
                yield game
                alive.append(stream)
        streams = alive


def combine(paths: Sequence[Path], out: Path, exclude: TrainingKeys) -> tuple[int, Counter[str]]:
    """Write the games of ``paths``, interleaved, to ``out``, keeping each row whose position is
    new; returns the rows kept and the drops by reason."""
    board_col = csslab.COLUMNS.index("board")
    seen: set[str] = set()
    dropped: Counter[str] = Counter()
    kept = 0
    tmp = out.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(csslab.COLUMNS)
        for game in interleave(paths):
            for row in game:
                key = fen_key(row[board_col])
                if key is None:
                    dropped["unreadable FEN"] += 1
                    continue
                where = exclude.source_of(key)
                if where is not None:
                    dropped[f"in {where}"] += 1
                elif key in seen:
                    dropped["repeated"] += 1
                else:
                    seen.add(key)
                    writer.writerow(row)
                    kept += 1
    tmp.replace(out)
    return kept, dropped


def grow(positions: int, *, depth: int = 8, rounds: int = 4, workers: int = 1, work: str | Path | None = None,
         exclude: Sequence[str] | None = None, root: Path = REPO_ROOT, stockfish_path: str | None = None,
         progress: bool = True, shares: dict[str, float] | None = None, games_per_part: int = 25,
         grown: str = "more") -> GrowReport:
    """Play ``positions`` more positions over the styles of the :data:`GROWN` set ``grown`` and
    combine them into its combined file (``<work>/more.csv`` for ``more``); ``work``,
    ``exclude`` and ``shares`` replace the set's own."""
    plan = GROWN[grown]
    shares = plan.shares if shares is None else shares
    if exclude is None:
        missing = [f for f in plan.needs if not (root / f).exists()]
        if missing:
            raise FileNotFoundError(f"growing {plan.folder} leaves out {missing[0]}'s positions, which is not here: "
                                    f"run {grow_command(missing[0])} first")
    exclude = plan.exclude if exclude is None else exclude
    work = Path(plan.work if work is None else work)
    work = work if work.is_absolute() else root / work
    work.mkdir(parents=True, exist_ok=True)
    report = GrowReport(work / plan.combined, workers=workers)
    ledger_path = work / TIMINGS
    ledger: dict[str, dict[str, float]] = json.loads(ledger_path.read_text()) if ledger_path.is_file() else {}
    t0 = time.perf_counter()
    runs: dict[str, StyleRun] = {}
    for step, goal in enumerate(targets(positions, rounds, shares), 1):
        for style, rows in goal.items():
            recipe = Recipe(seed=SEEDS[style], depth=depth, style=style, games_per_part=games_per_part)
            if progress:
                print(f"round {step}/{rounds}: {style} to {rows:,} positions")
            done = generate(work / f"{style}.csv", rows, recipe, workers=workers, progress=progress,
                            stockfish_path=stockfish_path)
            entry = ledger.setdefault(style, {"rows": 0, "seconds": 0.0, "worker_seconds": 0.0})
            if done.rows > entry["rows"]:   # a call that played nothing adds no time
                entry["rows"] = done.rows
                entry["seconds"] += done.seconds
                entry["worker_seconds"] += done.seconds * workers
                write_json(ledger_path, ledger)
            share = min(1.0, done.rows / entry["rows"]) if entry["rows"] else 1.0   # the ledger times every part
            # played in the folder: a set put together from fewer of them (sound300k from data/sound's) gets their share
            runs[style] = StyleRun(style, done.rows, done.games, entry["seconds"] * share,
                                   entry["worker_seconds"] * share)
    report.styles = list(runs.values())
    report.seconds_play = time.perf_counter() - t0
    t1 = time.perf_counter()
    keys = training_keys(exclude, root, progress=progress)
    report.excluded = keys.describe()
    if keys.absent:
        print(f"warning: not on this machine, so not left out: {', '.join(keys.absent)}", file=sys.stderr)
    report.kept, report.dropped = combine([work / f"{s}.csv" for s in shares], report.out, keys)
    report.seconds_combine = time.perf_counter() - t1
    return report
