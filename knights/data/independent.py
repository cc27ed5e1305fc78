"""Independent test sets: positions no training run has seen, labelled by a deeper search.

Why
---
Letter ``j`` of ``data/full`` is never trained on, but it comes from the very generator
the training letters come from (:mod:`knights.data.generate`: Stockfish-eps, greedy and
random players after 0-6 random plies, labelled at depth 8). A network can learn that
generator's habits, so ``j`` flatters it. An independent set differs in three ways:

* its positions come from a generator no training data uses (games between other
  kinds of players, :mod:`knights.lab.arena.testsets`; random endgame placements, here);
* it is labelled deeper (:data:`DEPTH`, 12 plies, against the training data's 8);
* it is de-duplicated against every training position, and against positions the
  training generator reaches trivially (those within :data:`START_PLIES` plies of the
  standard start).

How a set is built
------------------
A :class:`Source` turns a part number into candidate positions, as a function of its
seed and the part number alone. Every candidate is labelled by Stockfish (one thread,
the hash cleared before each search, so a label depends on the position and the depth
only) and each finished part is written to ``<work>/<source>/part-NNNNNN.csv`` through a
temporary file and a rename, with its timings beside it: a rerun reuses finished parts
and labels only the rest. An :class:`Assembler` then walks the parts in order and keeps
a candidate unless its :func:`position_key` (placement, side to move, castling rights,
en-passant square where a capture there is legal) is

1. in the training data (:func:`training_keys`),
2. near the start (:func:`start_keys`),
3. already in this set or an earlier independent set.

Every drop is counted by reason; the first ``rows`` kept rows are the set, written as a
CSSLab CSV (:mod:`knights.data.csslab`) with a JSON sidecar of its recipe and counts.
The same seed, depth, training data and Stockfish build give the same file.

Endgames (:class:`EndgameSource`)
---------------------------------
A material configuration such as ``KRPvKR`` is drawn from :data:`ENDGAMES`, the stronger
side given to White or Black at random, and the pieces put on random squares (pawns on
ranks 2-7) until the position is legal (:func:`knights.board.placements.random_placement`)
and the side to move has a move (no mate, no stalemate). Such positions are not what
games produce, which is the point: the networks have to judge material they rarely saw
in unfamiliar places.
"""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import chess

from knights.board.placements import parse_material as parse_material
from knights.board.placements import random_placement
from knights.common import write_json
from knights.data import csslab
from knights.data.generate import rel_text
from knights.data.stockfish import Analysis, Stockfish

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = "data/independent"
"""Where the finished sets live (committed: small CSV files and their JSON sidecars)."""
WORK_DIR = "data/generated/independent"
"""Labelled parts on their way to a set (ignored by git; a rerun resumes from them)."""
DEPTH = 12
"""Stockfish depth of every label (the training data is labelled at depth 8)."""
START_PLIES = 4
"""Positions within this many plies of the standard start are dropped: the training
generator opens with 0-6 random plies, so it reaches all of them easily."""
TRAINING_SOURCES = ("data/full", "data/sample", "data/generated/games.csv", "data/more", "data/endings",
                    "data/shallow", "data/cold", "data/chaos", "data/again", "data/sound", "data/sound2",
                    "data/sound3")
"""Every folder (or file) of training data: the full dataset and its pre-split file (the
version notebooks and the ensemble train on ``data/full``), the committed sample (quick
runs) and the grown data of the other generator styles (``data/more``, ``data/endings``,
``data/shallow``, the style experiment's ``data/cold``, ``data/chaos`` and ``data/again``, and the sound
games ``data/sound``, ``data/sound2`` and ``data/sound3``: :mod:`knights.data.grow`, which itself leaves out every
position of these sets). Those not on this machine are recorded as absent."""


# -- keys ------------------------------------------------------------------------------
def position_key(board: chess.Board) -> str:
    """What makes two positions the same for de-duplication: placement, side to move,
    castling rights and the en-passant square only where an en-passant capture is legal
    (python-chess's EPD without operations), whatever the move counters say.

    >>> position_key(chess.Board())
    'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -'
    """
    return board.epd()


def fen_key(fen: str) -> str | None:
    """:func:`position_key` of a FEN; ``None`` when python-chess cannot read it."""
    try:
        return position_key(chess.Board(fen))
    except ValueError:
        return None


@functools.cache
def start_keys(plies: int = START_PLIES) -> frozenset[str]:
    """Keys of every position reachable from the standard start within ``plies`` plies
    (77,796 distinct positions up to 4 plies; about 7 s)."""
    frontier = {position_key(chess.Board()): chess.Board()}
    seen = set(frontier)
    for _ in range(plies):
        nxt: dict[str, chess.Board] = {}
        for board in frontier.values():
            for move in board.legal_moves:
                board.push(move)
                key = position_key(board)
                if key not in seen and key not in nxt:
                    nxt[key] = board.copy(stack=False)
                board.pop()
        seen.update(nxt)
        frontier = nxt
    return frozenset(seen)


def _data_files(path: Path) -> list[Path]:
    """The data files of a training source: the file itself, or every visible file of
    the folder that is a CSV or a chunk (a name without a dot)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.iterdir()
                  if p.is_file() and not p.name.startswith(".") and ("." not in p.name or p.suffix == ".csv"))


def fens_of(path: Path) -> Iterator[str]:
    """The ``board`` column of a CSSLab file (rows without one are passed over)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        header = [h.strip().lstrip("\ufeff") for h in next(reader, [])]
        if "board" not in header:
            return
        i = header.index("board")
        for row in reader:
            if len(row) > i:
                yield row[i]


@dataclass
class TrainingKeys:
    """The positions of the training data, by source, as :func:`position_key` strings."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    """Keys of each source present, by its repository-relative name."""
    rows: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    absent: list[str] = field(default_factory=list)

    def source_of(self, key: str) -> str | None:
        """The first training source that holds ``key``, else ``None``."""
        for name, keys in self.keys.items():
            if key in keys:
                return name
        return None

    def describe(self) -> dict[str, object]:
        return {"present": {n: {"rows": self.rows[n], "distinct positions": len(k),
                                "unreadable FENs": self.unreadable[n]} for n, k in self.keys.items()},
                "absent": self.absent}


def training_keys(sources: Sequence[str] = TRAINING_SOURCES, root: Path = REPO_ROOT,
                  progress: bool = False) -> TrainingKeys:
    """Read the FEN of every row of every training source present under ``root``."""
    from tqdm import tqdm

    out = TrainingKeys()
    for name in sources:
        path = Path(name) if Path(name).is_absolute() else root / name
        if not path.exists():
            out.absent.append(name)
            continue
        keys: set[str] = set()
        rows = bad = 0
        for file in tqdm(_data_files(path), desc=f"training keys {name}", unit="file", disable=not progress):
            for fen in fens_of(file):
                rows += 1
                key = fen_key(fen)
                if key is None:
                    bad += 1
                else:
                    keys.add(key)
        out.keys[name], out.rows[name], out.unreadable[name] = keys, rows, bad
    return out


# -- candidates and sources ---------------------------------------------------------------
@dataclass
class Candidate:
    """A position proposed for a set: which set, the board (its FEN is what is labelled
    and written) and the CSSLab columns its source knows (players, move played, ...)."""

    set_name: str
    board: chess.Board
    columns: dict[str, str] = field(default_factory=dict)


class Source(Protocol):
    """A generator of candidate positions, part by part."""

    @property
    def name(self) -> str:
        """Folder name of its parts under :data:`WORK_DIR`."""
        ...

    @property
    def sets(self) -> tuple[str, ...]:
        """The sets its candidates go to."""
        ...

    def recipe(self) -> dict[str, object]:
        """Everything that determines its candidates: a rerun reuses parts only under the same recipe."""
        ...

    def describe(self) -> str:
        """One paragraph on what it generates, for the sidecar."""
        ...

    def candidates(self, part: int) -> list[Candidate]:
        """The candidates of part ``part``: a function of the recipe and ``part`` alone."""
        ...


# -- labelling and parts -------------------------------------------------------------------
def label(engine: Stockfish, board: chess.Board, depth: int) -> Analysis:
    """Stockfish's search of ``board`` at ``depth`` from an empty hash (reproducible)."""
    engine.new_game()
    return engine.analyse(board.fen(), depth=depth)


def labelled_row(candidate: Candidate, analysis: Analysis) -> dict[str, str]:
    """The CSSLab row of a labelled candidate: ``cp`` from White's side, ``cp_rel`` from
    the side to move's, the position's own columns and the source's."""
    board = candidate.board
    cp_rel = rel_text(analysis)
    cp_white = cp_rel if board.turn == chess.WHITE else csslab.negate_eval(cp_rel)
    return {"type": f"independent:{candidate.set_name}", **candidate.columns, "cp": cp_white, "cp_rel": cp_rel,
            **csslab.position_columns(board)}


def part_path(work: Path, part: int) -> Path:
    return work / f"part-{part:06d}.csv"


def write_part(source: Source, part: int, work: Path, engine: Stockfish, depth: int) -> dict[str, float]:
    """Generate, label and write one part; returns its timings (also written beside it)."""
    t0 = time.perf_counter()
    candidates = source.candidates(part)
    t1 = time.perf_counter()
    rows = [labelled_row(c, label(engine, c.board, depth)) for c in candidates]
    t2 = time.perf_counter()
    target = part_path(work, part)
    tmp = target.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as fh:
        csslab.RowWriter(fh).write_all(rows)
    timing = {"generate_s": t1 - t0, "label_s": t2 - t1, "candidates": float(len(rows))}
    write_json(target.with_suffix(".json"), timing, indent=None)
    os.replace(tmp, target)
    return timing


def read_part(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# -- assembly --------------------------------------------------------------------------------
@dataclass
class SetTally:
    """What one set kept and dropped, by reason."""

    rows: list[dict[str, str]] = field(default_factory=list)
    candidates: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    beyond_target: int = 0


class Assembler:
    """Keeps the candidates of a source's parts, in order, that no training data and no
    earlier row holds, until every set has its rows."""

    def __init__(self, targets: dict[str, int], training: TrainingKeys, start: frozenset[str],
                 earlier: dict[str, set[str]] | None = None) -> None:
        self.targets = targets
        self.training = training
        self.start = start
        self.earlier = earlier or {}
        self.tally = {name: SetTally() for name in targets}
        self.keys: dict[str, set[str]] = {name: set() for name in targets}

    def done(self) -> bool:
        return all(len(self.tally[n].rows) >= t for n, t in self.targets.items())

    def reason_to_drop(self, key: str | None, set_name: str) -> str | None:
        if key is None:
            return "unreadable FEN"
        source = self.training.source_of(key)
        if source is not None:
            return f"in training data {source}"
        if key in self.start:
            return f"within {START_PLIES} plies of the start"
        if key in self.keys[set_name]:
            return "repeated in this set"
        for groups in (self.earlier, self.keys):
            for name, keys in groups.items():
                if key in keys:
                    return f"in independent set {name}"
        return None

    def add(self, rows: Iterable[dict[str, str]]) -> int:
        """Judge a part's rows; returns how many were kept."""
        kept = 0
        for row in rows:
            name = row["type"].removeprefix("independent:")
            tally = self.tally[name]
            if len(tally.rows) >= self.targets[name]:
                tally.beyond_target += 1
                continue
            tally.candidates += 1
            key = fen_key(row["board"])
            reason = self.reason_to_drop(key, name)
            if reason is not None:
                tally.dropped[reason] += 1
                continue
            assert key is not None
            self.keys[name].add(key)
            tally.rows.append(row)
            kept += 1
        return kept


@dataclass
class BuildReport:
    """A finished build of one source's sets."""

    source: str
    parts: int
    parts_reused: int
    generate_s: float
    label_s: float
    assemble_s: float
    sets: dict[str, SetTally]
    keys: dict[str, set[str]]


def build_source(source: Source, targets: dict[str, int], *, depth: int = DEPTH, training: TrainingKeys,
                 start: frozenset[str], earlier: dict[str, set[str]] | None = None, work_dir: str | Path = WORK_DIR,
                 stockfish_path: str | None = None, progress: bool = True,
                 max_parts: int = 100_000) -> BuildReport:
    """Label parts of ``source`` (reusing finished ones) until every set of ``targets``
    has its rows; return the kept rows and counts."""
    from tqdm import tqdm

    work = repo_path(work_dir) / source.name
    work.mkdir(parents=True, exist_ok=True)
    key = {**source.recipe(), "depth": depth, "format": 1}
    meta = work / "recipe.json"
    if meta.exists() and json.loads(meta.read_text()) != key:
        raise RuntimeError(f"{work} holds parts of another recipe ({meta}); remove the folder or change --work")
    write_json(meta, key)
    assembler = Assembler(targets, training, start, earlier)
    generate_s = label_s = assemble_s = 0.0
    reused = part = 0
    bar = tqdm(total=sum(targets.values()), unit="pos", desc=source.name, disable=not progress)
    engine: Stockfish | None = None
    try:
        while not assembler.done():
            if part >= max_parts:
                raise RuntimeError(f"{source.name}: {max_parts} parts did not give {targets} rows")
            path = part_path(work, part)
            if path.exists():
                timing = json.loads(path.with_suffix(".json").read_text())
                reused += 1
            else:
                engine = engine or Stockfish(stockfish_path, threads=1, hash_mb=16)
                timing = write_part(source, part, work, engine, depth)
            generate_s += timing["generate_s"]
            label_s += timing["label_s"]
            t0 = time.perf_counter()
            bar.update(assembler.add(read_part(path)))
            assemble_s += time.perf_counter() - t0
            part += 1
    finally:
        if engine is not None:
            engine.close()
        bar.close()
    return BuildReport(source.name, part, reused, generate_s, label_s, assemble_s, assembler.tally, assembler.keys)


def repo_path(path: str | Path) -> Path:
    """``path`` as given when absolute, else taken from the repository root."""
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def stockfish_name(path: str | None = None) -> str:
    with Stockfish(path) as sf:
        return sf.name


def write_set(name: str, report: BuildReport, source: Source, *, depth: int, training: TrainingKeys,
              stockfish: str, out_dir: str | Path = OUT_DIR, command: str = "") -> tuple[Path, Path]:
    """``<out>/<name>.csv`` (CSSLab) and ``<out>/<name>.json`` (the sidecar)."""
    out = repo_path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tally = report.sets[name]
    csv_path, json_path = out / f"{name}.csv", out / f"{name}.json"
    tmp = csv_path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as fh:
        csslab.RowWriter(fh).write_all(tally.rows)
    os.replace(tmp, csv_path)
    side = {
        "name": name, "file": f"{name}.csv", "rows": len(tally.rows),
        "generator": source.describe(), "source": source.name, "recipe": source.recipe(),
        "label": {"engine": stockfish, "depth": depth, "threads": 1, "hash_mb": 16,
                  "hash": "cleared before every position"},
        "candidates_judged": tally.candidates,
        "dropped": dict(sorted(tally.dropped.items())),
        "dropped_total": sum(tally.dropped.values()),
        "labelled_beyond_target": tally.beyond_target,
        "dedup": {"key": "placement, side to move, castling rights, en-passant square (only where a capture "
                         "there is legal)",
                  "training_data": training.describe(),
                  "near_start": f"every position within {START_PLIES} plies of the standard start"},
        "time_s": {"generate": round(report.generate_s, 1), "label": round(report.label_s, 1),
                   "assemble": round(report.assemble_s, 1),
                   "note": f"the whole source {report.source} ({', '.join(report.sets)}), {report.parts} parts, "
                           "one thread; generate and label summed over the parts, whenever they were made"},
        "built": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "command": command,
    }
    write_json(json_path, side)
    return csv_path, json_path


# -- endgames ---------------------------------------------------------------------------------
ENDGAMES: tuple[tuple[str, float], ...] = (
    # rook endings
    ("KRPvKR", 3.0), ("KRPPvKRP", 2.0), ("KRvKP", 1.0), ("KRPvKRPP", 1.0),
    # queen endings and queen against rook
    ("KQvKR", 2.0), ("KQPvKQ", 1.0), ("KQvKRP", 1.0),
    # minor pieces
    ("KRvKB", 1.0), ("KRvKN", 1.0), ("KBPvKB", 1.5), ("KNPvKB", 1.0), ("KBPPvKN", 1.0),
    ("KBNvK", 0.5), ("KBPvKNP", 1.0),
    # pawn endings
    ("KPvK", 1.5), ("KPPvKP", 2.0), ("KPPPvKPP", 1.5),
    # more pieces
    ("KRBvKR", 1.0), ("KRNPvKRP", 1.0), ("KQvKBN", 0.5),
)
"""Material configurations (stronger side first) and their relative frequencies."""

@dataclass
class EndgameSource:
    """Random legal placements of few pieces (:data:`ENDGAMES`), one set: ``endgames``."""

    seed: int = 2025
    per_part: int = 100
    set_name: str = "endgames"
    name: str = "endgames"

    @property
    def sets(self) -> tuple[str, ...]:
        return (self.set_name,)

    def recipe(self) -> dict[str, object]:
        return {"generator": "endgames", "seed": self.seed, "per_part": self.per_part,
                "set": self.set_name, "endgames": dict(ENDGAMES)}

    def describe(self) -> str:
        names = ", ".join(e for e, _ in ENDGAMES)
        return (f"random legal placements of few pieces ({names}; weighted), the stronger side White or Black "
                "and the side to move at random, pawns on ranks 2-7, no castling or en passant, the side to "
                "move neither mated nor stalemated")

    def candidates(self, part: int) -> list[Candidate]:
        rng = random.Random(f"knights-independent-endgames-{self.seed}-{part}")
        configs = [e for e, _ in ENDGAMES]
        weights = [w for _, w in ENDGAMES]
        out = []
        for i in range(self.per_part):
            config = rng.choices(configs, weights)[0]
            board = random_placement(config, rng)
            out.append(Candidate(self.set_name, board, {
                "game_id": f"end{self.seed}-{part:05d}-{i:03d}-{config}", "time_control": "-"}))
        return out
