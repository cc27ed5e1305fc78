"""Matches: pairings scheduled into games, played in parallel, every game saved.

A pairing ``(a, b, n)`` of two player specs (:mod:`knights.lab.arena.specs`) is ``n``
games that walk through :data:`~knights.lab.arena.openings.OPENINGS`, each opening
played twice with the colours swapped: game ``g`` uses opening ``g // 2`` and ``a``
has White when ``g`` is even. Every game has its own seed, drawn from the match
seed and the pairing, so a game replays alike in any worker and any order::

    tasks = schedule([("ours:material", "random", 4)], Settings(max_plies=120))
    records = run_games(tasks, "results_pgn/demo", workers=2)

:func:`run_games` writes each game to ``<out>/<a>__vs__<b>/gNNNN.pgn`` and its
record (the PGN's facts, the spec names, ``score_a``, seconds) as one line of
``<out>/games.jsonl`` as soon as it finishes; :func:`load_records` reads them back.
The games themselves are played by :func:`knights.lab.arena.game.play_game`.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from knights.lab.arena.game import Settings, play_game, white_points
from knights.lab.arena.openings import OPENINGS
from knights.lab.arena.players import Player
from knights.lab.arena.specs import build_player, check_spec


@dataclass
class GameTask:
    """One scheduled game of a pairing, everything a worker needs to play it."""

    index: int          # game number within its pairing
    a: str              # the pairing's first player (the engine under test)
    b: str
    opening: int        # index into OPENINGS
    a_white: bool
    seed: int
    settings: Settings = field(default_factory=Settings)

    @property
    def white(self) -> str:
        return self.a if self.a_white else self.b

    @property
    def black(self) -> str:
        return self.b if self.a_white else self.a


def game_seed(base: int, a: str, b: str, index: int) -> int:
    """The seed of game ``index`` of the pairing ``a``-``b`` in a match seeded ``base``."""
    return random.Random(f"{base}|{a}|{b}|{index}").getrandbits(31)


def schedule(pairings: Sequence[tuple[str, str, int]], settings: Settings | None = None) -> list[GameTask]:
    """The games of every (a, b, n) pairing: openings in turn, each with both colours
    (``settings``: :class:`~knights.lab.arena.game.Settings` by default)."""
    settings = settings or Settings()
    tasks = []
    for a, b, n in pairings:
        a, b = check_spec(a), check_spec(b)
        for g in range(n):
            tasks.append(GameTask(g, a, b, (g // 2) % len(OPENINGS), g % 2 == 0,
                                  game_seed(settings.seed, a, b, g), settings))
    return tasks


# -- the players a process keeps ---------------------------------------------------------------------
_PLAYERS: dict[tuple[str, str], Player] = {}
MAX_CACHED_PLAYERS = 4
"""Players a process keeps between games (each Stockfish holds ~100 MB); the least
recently used is closed beyond that."""


def _close(player: Player) -> None:
    with contextlib.suppress(Exception):  # already broken or gone
        player.close()


def _close_players() -> None:
    while _PLAYERS:
        _close(_PLAYERS.popitem()[1])


def _worker_init() -> None:
    import multiprocessing.util

    os.environ["KNIGHTS_ARENA_WORKER"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    multiprocessing.util.Finalize(None, _close_players, exitpriority=10)


def _player_for(spec: str, role: str, settings: Settings, seed: int) -> Player:
    """This process's player for ``spec`` in ``role`` ("a" or "b"), reseeded for the game."""
    key = (spec, role)
    player = _PLAYERS.pop(key, None)
    if player is None:
        while len(_PLAYERS) >= MAX_CACHED_PLAYERS:
            _close(_PLAYERS.pop(next(iter(_PLAYERS))))
        player = build_player(spec, settings, seed)
    elif hasattr(player, "reseed"):
        player.reseed(seed)
    _PLAYERS[key] = player  # most recently used last
    return player


def run_task(task: GameTask) -> dict:
    """Play one scheduled game with this process's players (built on first use); its
    record, or ``{"fatal": ...}`` when a player cannot be built."""
    start = time.perf_counter()
    try:
        a = _player_for(task.a, "a", task.settings, task.seed)
        b = _player_for(task.b, "b", task.settings, task.seed + 1)
    except Exception as exc:  # noqa: BLE001 - the parent reports it and stops the match
        return {"index": task.index, "a": task.a, "b": task.b, "fatal": f"{type(exc).__name__}: {exc}"}
    white, black = (a, b) if task.a_white else (b, a)
    game = play_game(white, black, OPENINGS[task.opening], task.settings)
    # a spec's player may name itself differently: the arena names everyone by spec
    record = game.to_dict({"White": task.white, "Black": task.black, "Round": task.index + 1, "Seed": task.seed})
    if record["error"]:  # a player that forfeited (or its engine process) is not reused
        for key in ((task.a, "a"), (task.b, "b")):
            broken = _PLAYERS.pop(key, None)
            if broken is not None:
                _close(broken)
    score_white = white_points(record["result"])
    record.update(index=task.index, a=task.a, b=task.b, seed=task.seed, settings=asdict(task.settings),
                  score_a=score_white if task.a_white else 1.0 - score_white,
                  wall=round(time.perf_counter() - start, 4))
    return record


# -- many games ---------------------------------------------------------------------------------------
SECONDS_PER_GAME = {"random": 0.02, "greedy": 0.05, "ab2": 0.6, "ab3": 3.0, "sf-nodes:1": 0.05,
                    "sf-nodes:10": 0.15, "sf-nodes:100": 1.0, "sf-elo": 2.5, "uci": 2.5, "ours": 0.25}
"""Rough seconds of one core a player adds to a game (measured on a loaded 2-core
machine: 4 games of every ladder pairing); a game costs the sum of its two players."""


def player_seconds(spec: str) -> float:
    """Rough seconds ``spec`` adds to a game (:data:`SECONDS_PER_GAME`, by family)."""
    if spec in SECONDS_PER_GAME:
        return SECONDS_PER_GAME[spec]
    family = spec.split(":")[0]
    return SECONDS_PER_GAME.get(family, 1.0 if family.startswith("sf-") else 0.5)


def safe_name(spec: str) -> str:
    """``spec`` as a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "player"


def pgn_path(out_dir: Path, record: dict) -> Path:
    return out_dir / f"{safe_name(record['a'])}__vs__{safe_name(record['b'])}" / f"g{record['index'] + 1:04d}.pgn"


def save_record(out: Path, log: Path, record: dict) -> dict:
    """One finished game kept: its PGN under ``out``, its row (the PGN's file instead of its text) appended to the
    ``log`` a resumed run reads; a pairing whose players could not be built stops the run, naming them."""
    if "fatal" in record:
        raise RuntimeError(f"cannot build players {record['a']} / {record['b']}: {record['fatal']}")
    path = pgn_path(out, record)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record["pgn"] + "\n\n")
    row = {k: v for k, v in record.items() if k != "pgn"}
    row["pgn_file"] = str(path.relative_to(out))
    with log.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


def run_games(tasks: Sequence[GameTask], out_dir: str | Path, *, workers: int = 1,
              progress: bool = True, desc: str = "games") -> list[dict]:
    """Play ``tasks`` in ``workers`` processes (1: in this process), write every game
    to ``out_dir/<a>__vs__<b>/gNNNN.pgn`` and its record to ``out_dir/games.jsonl``
    (appended as games finish). Returns the records in schedule order."""
    from tqdm import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "games.jsonl"
    records: list[dict] = []
    # the slowest pairings first keeps the workers busy to the end; a pairing's games
    # stay together so that workers reuse their players
    todo = sorted(tasks, key=lambda t: (-(player_seconds(t.a) + player_seconds(t.b)), t.a, t.b))

    def keep(record: dict, bar) -> None:
        records.append(save_record(out, log, record))
        bar.update(1)
        bar.set_postfix_str(f"{record['a']} {record['score_a']:g} vs {record['b']}", refresh=False)

    with tqdm(total=len(todo), desc=desc, unit="game", disable=not progress, file=sys.stderr) as bar:
        if workers <= 1 or len(todo) <= 1:
            try:
                for task in todo:
                    keep(run_task(task), bar)
            finally:
                _close_players()
        else:
            import multiprocessing as mp

            ctx = mp.get_context("spawn")  # clean workers: no inherited torch threads or tqdm monitor
            pool = ctx.Pool(min(workers, len(todo)), initializer=_worker_init)
            try:
                for record in pool.imap_unordered(run_task, todo, chunksize=1):
                    keep(record, bar)
                pool.close()
            except BaseException:
                pool.terminate()
                raise
            finally:
                pool.join()
    order = {(t.a, t.b, t.index): i for i, t in enumerate(tasks)}
    records.sort(key=lambda r: order[(r["a"], r["b"], r["index"])])
    return records


def whole_lines(path: Path, repair: bool = True) -> list[str]:
    """The lines of a log that runs append to, each ending in a newline: a last line cut short (a run killed while
    writing it) is left out, and with ``repair`` dropped from the file too, so that the next run appends after whole
    lines (a reader that only reads passes ``repair=False``: a match may still be writing that line)."""
    try:
        lines = path.read_text().splitlines(keepends=True)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a text log ({e.reason} at byte {e.start})") from None
    if lines and not lines[-1].endswith("\n"):
        lines.pop()
        if repair:
            path.write_text("".join(lines))
    return lines


def numbered_records(out_dir: str | Path, repair: bool = True) -> list[tuple[int, dict]]:
    """The records of a match folder (its ``games.jsonl``), each with its line number. A last line cut short (a run
    killed while writing it) is left out, and with ``repair`` dropped from the file, so that a resumed run plays that
    game again and appends after whole lines; any other line that is not a game record (not JSON, or without its
    players and index) is an error naming the file and the line."""
    path = Path(out_dir) / "games.jsonl"
    lines = whole_lines(path, repair)
    records = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not (isinstance(record["a"], str) and isinstance(record["b"], str) and type(record["index"]) is int):
                raise TypeError("players or index of the wrong type")
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}, line {n}: not a game record ({e})") from None
        records.append((n, record))
    return records


def load_records(out_dir: str | Path) -> list[dict]:
    """The records of a match folder (its ``games.jsonl``); see :func:`numbered_records`."""
    return [record for _, record in numbered_records(out_dir)]


def check_record(record: dict, where: str) -> None:
    """Refuse a game record that :func:`knights.lab.arena.scores.pair_stats` cannot count: a ValueError naming
    ``where`` (its file and line) unless it has a score of 1, 1/2 or 0, a whole number of plies and a termination."""
    score, plies, termination = record.get("score_a"), record.get("plies"), record.get("termination")
    if not (type(score) in (int, float) and score in (0, 0.5, 1)):
        raise ValueError(f"{where}: not a game record (score_a {score!r}: 1, 0.5 or 0)")
    if type(plies) is not int or plies < 0 or not isinstance(termination, str):
        raise ValueError(f"{where}: not a game record (plies {plies!r}, termination {termination!r})")


def match_records(out_dir: str | Path) -> list[dict]:
    """A match folder's games as a reader that only reads takes them (``knights scores``,
    :mod:`knights.lab.arena.pool`): the log is not repaired (a match may still be writing its last line) and every
    record is checked (:func:`check_record`); a ValueError names the folder, or the file and line."""
    log = Path(out_dir) / "games.jsonl"
    if not log.is_file():
        raise ValueError(f"{out_dir}: not a match folder (no games.jsonl)")
    records = []
    for n, record in numbered_records(out_dir, repair=False):
        check_record(record, f"{log}, line {n}")
        records.append(record)
    return records


def finished(out_dir: str | Path, tasks: Sequence[GameTask]) -> list[dict]:
    """The records in ``out_dir`` of games of ``tasks`` played under the same
    :class:`~knights.lab.arena.game.Settings` (when a game ends, the draw rule, the limits), so a
    resumed match never mixes games played under another rule; none if the folder has no log."""
    if not (Path(out_dir) / "games.jsonl").exists():
        return []
    wanted = {(t.a, t.b, t.index): asdict(t.settings) for t in tasks}
    return [r for r in load_records(out_dir)
            if wanted.get((r["a"], r["b"], r["index"])) == r.get("settings", "unknown")]
