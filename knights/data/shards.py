"""Labelling in shards: one generated run split among machines, then merged.

Why a run splits cleanly
------------------------
:mod:`knights.data.generate` plays a run in *parts* of ``games_per_part`` games: part
``p`` holds games ``p * g`` to ``p * g + g - 1``, and every game is played from its own
seed, so a part's bytes depend only on the recipe, the Stockfish build and ``p``, not
on where or when it was played. The output file is the shortest prefix of games
holding at least ``positions`` rows, which is the parts 0, 1, 2, ... concatenated in
order and cut after the game that reaches ``positions``. Any machine can therefore play
any part; putting the parts together in order gives the single-machine file.

Who plays what
--------------
Shard ``K`` of ``N`` (``1 <= K <= N``, written ``K/N``) plays the parts whose number
leaves remainder ``K - 1`` when divided by ``N``:

>>> Shard.parse("2/3").part(0), Shard.parse("2/3").part(1), Shard.parse("2/3").part(2)
(1, 4, 7)
>>> Shard.owner(7, 3)
Shard(index=2, count=3)

Taking every ``N``-th part (rather than one block of consecutive parts each) keeps the
shards alike: each gets early and late games, and each can start without knowing how
many parts the run needs. Nobody knows that in advance, since games differ in length.
So a shard plays its parts in order until they hold its share of the positions plus
:data:`SHARD_MARGIN`, and stops:

>>> Shard.parse("2/3").target(3000)
1100

Merging
-------
:func:`merge` reads the parts of one or more ``.parts`` folders (one per machine, or
one shared folder), walks parts 0, 1, 2, ... until they hold ``positions`` rows, and
writes exactly the file :func:`~knights.data.generate.generate` would. When a part of
that prefix is missing (a shard that stopped short, or did not run), it writes nothing
and raises :class:`ShardsIncomplete`, whose message names each shard that must play
further and the command that does it (``--until-part``).

A single-machine run is the special case ``1/1`` without the margin: it uses the same
parts, the same stopping rule and the same :func:`assemble`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from knights.common import write_json
from knights.data import csslab

SHARD_MARGIN = 0.1
"""A shard plays this much more than its share of the positions (0.1: 10 %), so that
the parts of all shards almost always cover the run's prefix even though some shards'
games are shorter than others'."""

PART_NAME = "part-{:06d}.csv"
"""File name of part ``p`` inside a ``.parts`` folder."""
RECIPE_FILE = "recipe.json"
"""What the parts of a folder were made with (:meth:`knights.data.generate.Recipe.key`)."""


# -- shards ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based: ``Shard(1, 3)`` is the first of three)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: use K/N with 1 <= K <= N, e.g. 2/3")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` as a shard; anything else raises ValueError saying what is wanted.

        >>> Shard.parse("3/3")
        Shard(index=3, count=3)
        >>> Shard.parse("0/3")
        Traceback (most recent call last):
        ...
        ValueError: shard '0/3': use K/N with 1 <= K <= N, e.g. 2/3
        """
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ValueError(f"shard {text!r}: use K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(match[1]), int(match[2]))

    @classmethod
    def owner(cls, part: int, count: int) -> Shard:
        """The shard of ``count`` that plays ``part``."""
        return cls(part % count + 1, count)

    def part(self, j: int) -> int:
        """The number of this shard's ``j``-th part (``j = 0, 1, 2, ...``)."""
        return self.index - 1 + j * self.count

    def owns(self, part: int) -> bool:
        return part % self.count == self.index - 1

    def target(self, positions: int, margin: float = SHARD_MARGIN) -> int:
        """Rows this shard's parts should hold: its share of ``positions`` plus ``margin``."""
        return math.ceil(round(positions * (1.0 + margin) / self.count, 6))   # 3000 * 1.1 / 3 is 1100.0000000000002

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Share:
    """What one machine plays: its shard's parts in order until they hold ``target``
    rows, and at least every one of them numbered up to ``until_part``.

    A single-machine run is ``Share(Shard(1, 1), positions)``: all parts, in order,
    until they hold ``positions`` rows.
    """

    shard: Shard
    target: int
    until_part: int = -1

    def held(self, rows: Mapping[int, int]) -> tuple[int, int]:
        """``(j, total)``: this shard's first ``j`` parts are all present and hold ``total`` rows."""
        j = total = 0
        while self.shard.part(j) in rows:
            total += rows[self.shard.part(j)]
            j += 1
        return j, total

    def complete(self, rows: Mapping[int, int]) -> bool:
        """Whether the parts present (``rows``: part -> row count) finish this share."""
        j, total = self.held(rows)
        return total >= self.target and self.shard.part(j) > self.until_part

    def next_parts(self, rows: Mapping[int, int], batch: int) -> list[int]:
        """The first ``batch`` parts of this shard not yet in ``rows``, and at least
        every missing one up to ``until_part``."""
        todo: list[int] = []
        j = 0
        while len(todo) < batch or self.shard.part(j) <= self.until_part:
            if self.shard.part(j) not in rows:
                todo.append(self.shard.part(j))
            j += 1
        return todo

    def missing_rows(self, rows: Mapping[int, int]) -> int:
        return max(0, self.target - self.held(rows)[1])


# -- a folder of parts ----------------------------------------------------------------------
def parts_folder(path: str | Path) -> Path:
    """The parts folder of a run: ``path`` itself when it ends in ``.parts``, else
    ``<path>.parts`` (the folder ``knights data generate --out <path>`` fills)."""
    p = Path(path)
    return p if p.name.endswith(".parts") else Path(f"{p}.parts")


def count_rows(path: Path) -> int:
    """Lines of a file (a part has no header: one line per row)."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def scan_parts(folder: Path) -> dict[int, Path]:
    """The finished parts of a folder by number (half-written ``.tmp`` files are not parts)."""
    return {int(p.stem.split("-")[1]): p for p in sorted(folder.glob("part-*.csv"))
            if re.fullmatch(r"part-\d{6}", p.stem)}


def marker_path(folder: Path, shard: Shard) -> Path:
    """Where a shard records how it was asked to play (read by :func:`merge`)."""
    return folder / f"shard-{shard.index}-of-{shard.count}.json"


def write_marker(folder: Path, share: Share, positions: int, rows: Mapping[int, int], finished: bool) -> None:
    """Record shard, positions and progress, so that the merge knows how the run was split."""
    own = sorted(p for p in rows if share.shard.owns(p))
    write_json(marker_path(folder, share.shard), {
        "shard": str(share.shard), "positions": positions, "until_part": share.until_part,
        "parts": len(own), "last_part": own[-1] if own else None,
        "rows": sum(rows[p] for p in own), "finished": finished})


def read_markers(folder: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("shard-*-of-*.json"))]


# -- putting parts together ----------------------------------------------------------------
def assemble(parts: Mapping[int, Path], out: Path, positions: int, dedup: bool) -> tuple[int, int, int]:
    """Concatenate parts 0, 1, 2, ... up to the first game boundary past ``positions``
    rows into ``out`` (with the CSSLab header; through a temporary file). Returns
    ``(rows written, games, duplicates dropped)``. ``dedup`` drops a row whose
    position (FEN without the move counters) came earlier."""
    tmp = Path(f"{out}.tmp")
    seen: set[str] = set()
    rows = raw = games = dropped = 0
    fen_col = csslab.COLUMNS.index("board")
    last_game = None
    with open(tmp, "w", newline="") as fh:
        fh.write(csslab.HEADER_LINE + "\n")
        part = 0
        while raw < positions:
            with open(parts[part]) as src:
                for line in src:
                    game = line[:line.index(",")]
                    if game != last_game:
                        if raw >= positions:
                            break
                        last_game = game
                        games += 1
                    raw += 1
                    if dedup:
                        key = line.split(",")[fen_col].rsplit(" ", 2)[0]
                        if key in seen:
                            dropped += 1
                            continue
                        seen.add(key)
                    fh.write(line)
                    rows += 1
            part += 1
    os.replace(tmp, out)
    return rows, games, dropped


def prefix(rows: Mapping[int, int], positions: int) -> tuple[int, int]:
    """``(parts, total)``: parts 0 .. ``parts - 1`` are present and hold ``total`` rows,
    walking only as far as needed (``total >= positions`` means the run is covered)."""
    part = total = 0
    while total < positions and part in rows:
        total += rows[part]
        part += 1
    return part, total


class ShardsIncomplete(RuntimeError):
    """The parts found do not cover the run; the message says what to run."""


@dataclass
class MergeReport:
    out: Path
    rows: int
    games: int
    parts: int
    duplicates_dropped: int
    folders: list[Path]

    def summary(self) -> str:
        where = ", ".join(str(f) for f in self.folders)
        return (f"{self.out}: {self.rows:,} positions from {self.games:,} games "
                f"({self.duplicates_dropped:,} duplicates dropped), parts 0-{self.parts - 1} of {where}")


def gather(folders: Sequence[Path]) -> tuple[dict[int, Path], dict[str, object]]:
    """Every part of ``folders`` by number, and their common recipe. Folders of
    different recipes, or two different files of the same part, are refused."""
    key: dict[str, object] | None = None
    key_from: Path | None = None
    parts: dict[int, Path] = {}
    for folder in folders:
        meta = folder / RECIPE_FILE
        if not meta.is_file():
            raise FileNotFoundError(f"{folder} holds no generated parts (no {RECIPE_FILE}): "
                                    "name the --out of a 'knights data generate' run, or its .parts folder")
        this = json.loads(meta.read_text())
        if key is None:
            key, key_from = this, meta
        elif this != key:
            raise RuntimeError(f"{meta} and {key_from} are of different recipes: they cannot be merged")
        for number, path in scan_parts(folder).items():
            other = parts.setdefault(number, path)
            if other != path and other.read_bytes() != path.read_bytes():
                raise RuntimeError(f"{path} and {other} are both part {number} but differ: "
                                   "one of them is damaged; delete it and rerun its shard")
    assert key is not None
    return parts, key


def merge(out: str | Path, positions: int | None = None, folders: Iterable[str | Path] | None = None, *,
          dedup: bool = False) -> MergeReport:
    """Write the run's file from the parts of ``folders`` (default: ``<out>.parts``).

    ``positions`` defaults to the one the shards were run with (when they agree). The
    file is byte-identical to a single-machine ``generate(out, positions, ...)``. If
    parts are missing, nothing is written and :class:`ShardsIncomplete` says which
    shards to run further, with their commands.
    """
    out = Path(out)
    dirs = [parts_folder(f) for f in folders] if folders else [parts_folder(out)]
    parts, key = gather(dirs)
    markers = [(folder, m) for folder in dirs for m in read_markers(folder)]
    if positions is None:
        asked = {int(str(m["positions"])) for _, m in markers}
        if len(asked) != 1:
            were = (f"were run with {', '.join(map(str, sorted(asked)))}" if asked
                    else "recorded no count (they were not run with --shard)")
            raise ValueError(f"say how many positions to merge (--positions): the shards in "
                             f"{', '.join(map(str, dirs))} {were}")
        positions = asked.pop()
    if positions < 1:
        raise ValueError(f"positions must be at least 1, not {positions}")
    rows = {p: count_rows(path) for p, path in parts.items()}
    n_parts, total = prefix(rows, positions)
    if total < positions:
        raise ShardsIncomplete(shortfall(out, positions, rows, n_parts, total, key, markers, dirs))
    out.parent.mkdir(parents=True, exist_ok=True)
    written, games, dropped = assemble(parts, out, positions, dedup)
    return MergeReport(out, written, games, n_parts, dropped, dirs)


def shortfall(out: Path, positions: int, rows: Mapping[int, int], first_missing: int, total: int,
              key: Mapping[str, object], markers: Sequence[tuple[Path, Mapping[str, object]]],
              dirs: Sequence[Path]) -> str:
    """The message of a merge that cannot be made yet: what is missing, who plays it, how."""
    # Guess how far the run goes from the parts seen so far, with the shards' margin.
    per_part = sum(rows.values()) / len(rows) if rows else 1.0
    last = first_missing + max(0, math.ceil((positions - total) / max(per_part, 1.0) * (1 + SHARD_MARGIN)) - 1)
    missing = [p for p in range(first_missing, last + 1) if p not in rows]
    counts = {Shard.parse(str(m["shard"])).count for _, m in markers}
    head = (f"{out} not written: parts 0-{first_missing - 1} hold {total:,} of the {positions:,} positions asked, "
            f"and part {first_missing} is missing" if first_missing else f"{out} not written: part 0 is missing")
    head += f" (the run needs about parts 0-{last})."
    flags = (f"--positions {positions} --seed {key.get('seed')} --depth {key.get('depth')} "
             f"--max-plies {key.get('max_plies')} --games-per-part {key.get('games_per_part')}")
    if len(counts) != 1:
        reason = ("no shard recorded how the run was split" if not counts
                  else f"the shards disagree on their number ({', '.join(map(str, sorted(counts)))})")
        return (f"{head}\n{reason}. Play the missing parts ({listed(missing)}) with "
                f"'knights data generate {flags} --out {out}' (one machine), or with --shard K/N --until-part "
                f"{last} for the shard K of N that owns each (part p belongs to shard p mod N + 1); "
                "then merge again.")
    count = counts.pop()
    lines = [head, "Run these (then merge again; it says if still more is needed):"]
    by_shard: dict[Shard, list[int]] = {}
    for p in missing:
        by_shard.setdefault(Shard.owner(p, count), []).append(p)
    for shard, own in sorted(by_shard.items(), key=lambda item: item[0].index):
        home = next((folder for folder, m in markers if m["shard"] == str(shard)), dirs[0])
        lines.append(f"  shard {shard} (missing parts {listed(own)}): knights data generate --shard {shard} "
                     f"--until-part {own[-1]} {flags} --out {str(home)[:-len('.parts')]}")
    return "\n".join(lines)


def listed(numbers: Sequence[int], most: int = 6) -> str:
    """``1, 4, 7, ...``: the first ``most`` numbers, then an ellipsis."""
    return ", ".join(map(str, numbers[:most])) + (", ..." if len(numbers) > most else "")
