"""``knights soak``: the default bot on real clocks, through the two routes lichess uses.

Each game puts the default bot (the compiled search over its default network, as shipped: ``Depth`` 64,
stochastic opening) on a real clock against Stockfish (``UCI_Elo`` 1350, 20,000 nodes a
move; its clock is not run: it is not on trial). The bot's clock is run by wall time
around every move, as a GUI or lichess would; a move that leaves it below zero loses on
time. Two routes:

``uci``       ``knights uci`` as its own process, driven by python-chess's
              ``chess.engine`` (``go wtime btime winc binc``), started and sent
              ``isready`` before the first clock starts, as a GUI does.
``homemade``  lichess-bot's ``homemade`` engine class (``lichess_bot/homemade.py``) built by
              lichess-bot's own ``create_engine`` from our ``lichess_bot/config.yml``, each
              move's limit computed by lichess-bot's own ``game_clock_time`` from a
              ``lib.model.Game`` holding the clocks (as lichess's game state sends them,
              in milliseconds) and the time since the opponent's move, then
              ``engine.search(board, limit, ponder, draw_offered, root_moves)`` as
              lichess-bot's ``play_move`` calls it. Needs a lichess-bot checkout
              (``--lichess-bot DIR``, or ``$LICHESS_BOT_DIR``) whose own dependencies
              import (``requests``, ``rich``, ``backoff``, ``PyYAML``; ``--lichess-bot-deps``
              adds a folder holding them); our class is installed there with
              ``lichess_bot/install.py`` first. lichess-bot gives the first move a fixed
              10 s on lichess (its clock starts later); here the clock runs from the first move.

Counted per route and clock: games, illegal moves, errors (an exception, a crashed or
silent engine: the game ends there and the engine is started again), losses on time,
NaN evaluations (a reported score that is missing or not a finite number after a
searched move), quick moves (``depth 0``: the static answer when no search fits), the
least time left on the bot's clock, and the bot's results. Every game is appended to
``<out>/<route>_<clock>.jsonl`` as it ends, so a run resumes where it stopped, and two
routes can be played by two processes at once (``--routes uci`` and ``--routes homemade``);
the results file is written from every game on disk for the routes and clocks asked.

Results (default ``report/results/soak.json``)::

    {
      "generated": str, "commit": str, "command": str, "note": str (optional, --note),
      "network": str,                    # the search's network (knights.engine.search.SEARCH_NETWORK)
      "opponent": "sf-elo:1350 (20,000 nodes a move, not clocked)",
      "clocks": ["3s+0s", "9s+0.1s"],            # base + increment, seconds
      "totals": {"games", "illegal", "errors", "time_losses", "nan_scores", "quick_moves"},
      "rows": [                                  # one per route and clock
        {"route": "uci", "clock": "3s+0s", "base": 3.0, "increment": 0.0,
         "games", "plies", "moves" (the bot's), "illegal", "errors", "time_losses",
         "nan_scores", "quick_moves", "least_left_ms", "wins", "draws", "losses",
         "startup_seconds" (the slowest engine start, numba cache load or compile included),
         "seconds" (wall seconds of the games), "error_messages" (the first few)}
      ]
    }
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import chess.engine

from knights.board.outcome import outcome as game_outcome
from knights.common import commit, write_json
from knights.data.stockfish import find_stockfish
from knights.engine.spec import SEARCH_NETWORK
from knights.lab.arena.game import white_points
from knights.lab.arena.openings import OPENINGS
from knights.learn.registry import REPO_ROOT

ROUTES = ("uci", "homemade")
CLOCKS = ((3.0, 0.0), (9.0, 0.1))
"""lichess's 1+0 and 3+2, twenty times shorter: 3 s + 0 and 9 s + 0.1 s a game. Sixty times
shorter (1 s + 0) is below what a process answering through pipes on a busy 2-core machine
can keep: ~10 ms a move whatever it does, a hundred moves a game."""
OPPONENT_ELO = 1350
OPPONENT_NODES = 20_000
MAX_PLIES = 200
"""A game still going after this many plies (opening included) is stopped and counted a draw."""
MOVE_OVERHEAD_MS = 0
"""What lichess-bot takes off the clock for the network (its ``move_overhead``); none here:
no network, and the clock is run around the engine call itself."""
RESULTS = Path("report/results/soak.json")
OUT = Path("runs/soak")
COUNTS = ("games", "plies", "moves", "illegal", "errors", "time_losses", "nan_scores", "quick_moves",
          "wins", "draws", "losses")


def clock_name(base: float, inc: float) -> str:
    return f"{base:g}s+{round(inc, 3):g}s"


def parse_clock(text: str) -> tuple[float, float]:
    """``"3+0.033"`` -> ``(3.0, 0.033)`` (seconds); ``ValueError`` on anything else."""
    base, plus, inc = text.partition("+")
    try:
        b, i = float(base), float(inc) if plus else 0.0
    except ValueError:
        raise ValueError(f"clock {text!r}: write BASE+INCREMENT in seconds, e.g. 3+0 or 9+0.1") from None
    if not (0 < b <= 3600 and 0 <= i <= 60) or not (math.isfinite(b) and math.isfinite(i)):
        raise ValueError(f"clock {text!r}: the base is above 0 and at most 3600 s, the increment 0 to 60 s")
    return b, i


# -- the opponent --------------------------------------------------------------------------------
def start_opponent() -> chess.engine.SimpleEngine:
    sf = chess.engine.SimpleEngine.popen_uci(find_stockfish())
    sf.configure({"UCI_LimitStrength": True, "UCI_Elo": OPPONENT_ELO, "Threads": 1, "Hash": 16})
    return sf


# -- the two routes ------------------------------------------------------------------------------
class UciRoute:
    """``knights uci`` in its own process, driven by python-chess."""

    name = "uci"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.engine: chess.engine.SimpleEngine | None = None
        self.startup = 0.0
        self.game = object()

    def start(self) -> None:
        started = time.perf_counter()
        self.engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "knights.cli", "uci"], timeout=300)
        self.engine.configure({"Seed": self.seed})
        self.engine.ping()             # isready: the model loads (and compiles) before any clock starts
        self.startup = max(self.startup, time.perf_counter() - started)

    def new_game(self) -> None:
        if self.engine is None:
            self.start()
        assert self.engine is not None
        self.game = object()       # python-chess sends ucinewgame when the game object changes
        self.engine.ping()

    def move(self, board: chess.Board, clocks: dict[bool, float], inc: float) -> tuple[chess.Move | None, dict]:
        assert self.engine is not None
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        result = self.engine.play(board, limit, game=self.game, info=chess.engine.INFO_SCORE | chess.engine.INFO_BASIC)
        return result.move, dict(result.info)

    def close(self) -> None:
        if self.engine is not None:
            try:
                self.engine.quit()
            except Exception:  # noqa: BLE001 - already gone
                self.engine.close()
            self.engine = None


class HomemadeRoute:
    """lichess-bot's homemade engine, built and driven by lichess-bot's own code."""

    name = "homemade"

    def __init__(self, seed: int, checkout: Path, deps: Path | None) -> None:
        if not (checkout / "lib" / "engine_wrapper.py").is_file():
            raise FileNotFoundError(f"{checkout} is not a lichess-bot checkout (no lib/engine_wrapper.py); "
                                    "clone https://github.com/lichess-bot-devs/lichess-bot and pass --lichess-bot DIR")
        for path in (deps, checkout):
            if path is not None and str(path) not in sys.path:
                sys.path.insert(0, str(path))
        self.seed = seed
        self.checkout = checkout
        self.engine: Any = None
        self.startup = 0.0

    def start(self) -> None:
        import yaml  # type: ignore[import-untyped]
        from lib.config import Configuration, insert_default_values  # type: ignore[import-not-found]
        from lib.engine_wrapper import create_engine  # type: ignore[import-not-found]

        config = yaml.safe_load((LICHESS_BOT / "config.yml").read_text())
        config["engine"]["dir"] = str(self.checkout / "engines")
        config["engine"]["homemade_options"] = {**config["engine"].get("homemade_options", {}), "Seed": self.seed}
        insert_default_values(config)       # what lichess-bot's load_config does after reading the file
        started = time.perf_counter()
        self.engine = create_engine(Configuration(config))
        self.startup = max(self.startup, time.perf_counter() - started)
        self.game_index = 0

    def new_game(self) -> None:
        if self.engine is None:
            self.start()

    def move(self, board: chess.Board, clocks: dict[bool, float], inc: float) -> tuple[chess.Move | None, dict]:
        from lib import model  # type: ignore[import-not-found]
        from lib.engine_wrapper import game_clock_time
        from lib.timer import Timer, msec  # type: ignore[import-not-found]

        setup_timer = Timer()
        ms = {side: max(0, round(clocks[side] * 1000)) for side in (chess.WHITE, chess.BLACK)}
        me = "knights" if board.turn == chess.WHITE else "stockfish"
        info = {"id": "soak", "variant": {"name": "Standard"}, "speed": "bullet", "rated": False,
                "createdAt": round(time.time() * 1000), "clock": {"initial": 0, "increment": round(inc * 1000)},
                "white": {"name": me, "title": "BOT"}, "black": {"name": "other" if me == "knights" else "knights"},
                "state": {"moves": " ".join(m.uci() for m in board.move_stack), "wtime": ms[chess.WHITE],
                          "btime": ms[chess.BLACK], "winc": round(inc * 1000), "binc": round(inc * 1000),
                          "status": "started"}}
        game = model.Game(info, "knights", "https://lichess.org/", _dt.timedelta(seconds=30))
        limit = game_clock_time(board, game, setup_timer, msec(MOVE_OVERHEAD_MS))
        result = self.engine.search(board.copy(), limit, False, False, None)
        return result.move, dict(result.info)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.quit()
            self.engine = None


LICHESS_BOT = REPO_ROOT / "lichess_bot"
"""The repository's lichess-bot folder: the homemade class, its installer and its config."""


def _install(checkout: Path) -> None:
    """Put our homemade class into the checkout (``lichess_bot/install.py``; nothing twice)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lichess_bot_install", LICHESS_BOT / "install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lichess_bot_install"] = module
    spec.loader.exec_module(module)
    import io

    module.install(checkout, out=io.StringIO())


# -- one game ------------------------------------------------------------------------------------
def _finite_score(info: dict) -> bool:
    score = info.get("score")
    if score is None:
        return False
    value = score.relative.score(mate_score=100_000)
    return value is not None and math.isfinite(value)


def play_one(route: Any, opponent: chess.engine.SimpleEngine, base: float, inc: float, index: int,
             max_plies: int = MAX_PLIES) -> dict:
    """One game of the bot (White when ``index`` is even) on a ``base`` + ``inc`` clock,
    from opening ``index // 2``; stopped (a draw) after ``max_plies`` plies."""
    ours = chess.WHITE if index % 2 == 0 else chess.BLACK
    board = OPENINGS[(index // 2) % len(OPENINGS)].board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    row: dict[str, Any] = dict.fromkeys(COUNTS, 0)
    row.update(index=index, least_left_ms=round(base * 1000), error="")
    result = "*"
    started = time.perf_counter()
    try:
        route.new_game()
        opponent.ping()
    except Exception as exc:  # noqa: BLE001 - an engine that cannot start a game is an error
        row["errors"] = 1
        row["error"] = f"new game: {type(exc).__name__}: {exc}"
        route.close()
        return {**row, "games": 1, "result": result, "seconds": round(time.perf_counter() - started, 2)}
    while game_outcome(board) is None and len(board.move_stack) < max_plies:   # the project's one rule
        if board.turn != ours:
            reply = opponent.play(board, chess.engine.Limit(nodes=OPPONENT_NODES)).move
            if reply is None:
                raise RuntimeError(f"Stockfish gave no move in {board.fen()}")
            board.push(reply)
            continue
        t0 = time.perf_counter()
        try:
            move, info = route.move(board, clocks, inc)
        except Exception as exc:  # noqa: BLE001 - counted; the engine is started again for the next game
            row["errors"] += 1
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            route.close()
            result = "0-1" if ours == chess.WHITE else "1-0"
            break
        clocks[ours] -= time.perf_counter() - t0
        row["least_left_ms"] = min(row["least_left_ms"], round(clocks[ours] * 1000))
        row["moves"] += 1
        if clocks[ours] < 0:
            row["time_losses"] += 1
            result = "0-1" if ours == chess.WHITE else "1-0"
            break
        clocks[ours] += inc
        if move is None or move not in board.legal_moves:
            row["illegal"] += 1
            row["error"] = f"illegal move {move} in {board.fen()}"
            result = "0-1" if ours == chess.WHITE else "1-0"
            break
        depth = info.get("depth")
        row["quick_moves"] += depth == 0
        if depth != 0 and not _finite_score(info):
            row["nan_scores"] += 1
        board.push(move)
    if result == "*":
        ended = game_outcome(board)
        result = ended.result() if ended else "1/2-1/2"
    points = white_points(result)
    points = points if ours == chess.WHITE else 1.0 - points
    row["wins"], row["draws"], row["losses"] = int(points == 1.0), int(points == 0.5), int(points == 0.0)
    row.update(games=1, plies=len(board.move_stack), result=result, ours="white" if ours else "black",
               line=" ".join(m.uci() for m in board.move_stack),
               seconds=round(time.perf_counter() - started, 2))
    return row


# -- many games ----------------------------------------------------------------------------------
def log_path(out: Path, route: str, base: float, inc: float) -> Path:
    return out / f"{route}_{clock_name(base, inc).replace('+', '_')}.jsonl"


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def play_route(route_name: str, clocks: Sequence[tuple[float, float]], games: int, *, out: Path, seed: int,
               checkout: Path | None, deps: Path | None, progress: bool) -> None:
    """Play what is missing of ``games`` games on every clock through ``route_name``."""
    todo = [(b, i, len(read_rows(log_path(out, route_name, b, i)))) for b, i in clocks]
    if all(done >= games for _, _, done in todo):
        return
    if route_name == "homemade":
        if checkout is None:
            raise ValueError("the homemade route needs a lichess-bot checkout: --lichess-bot DIR "
                             "(or $LICHESS_BOT_DIR)")
        route: Any = HomemadeRoute(seed, checkout, deps)     # checks the checkout first
        _install(checkout)
    else:
        route = UciRoute(seed)
    out.mkdir(parents=True, exist_ok=True)
    opponent = start_opponent()
    try:
        route.start()
        for base, inc, done in todo:
            path = log_path(out, route_name, base, inc)
            for g in range(done, games):
                row = play_one(route, opponent, base, inc, g)
                row["startup_seconds"] = round(route.startup, 2)
                with path.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
                if progress:
                    print(f"{route_name} {clock_name(base, inc)} game {g + 1}/{games}: {row['result']} "
                          f"({row['plies']} plies, least left {row['least_left_ms']} ms"
                          + (f", {row['error']}" if row["error"] else "") + ")", file=sys.stderr, flush=True)
    finally:
        route.close()
        opponent.quit()


def summarise(out: Path, routes: Sequence[str], clocks: Sequence[tuple[float, float]], command: str) -> dict:
    rows = []
    for route in routes:
        for base, inc in clocks:
            games = read_rows(log_path(out, route, base, inc))
            if not games:
                continue
            row: dict[str, Any] = {"route": route, "clock": clock_name(base, inc), "base": base, "increment": inc}
            row.update({k: sum(int(g[k]) for g in games) for k in COUNTS})
            row["least_left_ms"] = min(g["least_left_ms"] for g in games)
            row["startup_seconds"] = max(float(g.get("startup_seconds", 0)) for g in games)
            row["seconds"] = round(sum(float(g["seconds"]) for g in games), 1)
            row["error_messages"] = [g["error"] for g in games if g["error"]][:5]
            rows.append(row)
    totals = {k: sum(r[k] for r in rows) for k in ("games", "illegal", "errors", "time_losses", "nan_scores",
                                                    "quick_moves")}
    return {"generated": _dt.datetime.now().isoformat(timespec="seconds"), "commit": commit(), "command": command,
            "network": SEARCH_NETWORK,
            "opponent": f"sf-elo:{OPPONENT_ELO} ({OPPONENT_NODES:,} nodes a move, not clocked)",
            "max_plies": MAX_PLIES, "clocks": [clock_name(b, i) for b, i in clocks], "totals": totals, "rows": rows}


def soak_main(args: Any) -> int:
    """``knights soak [--routes uci homemade] [--clocks 3+0 9+0.1] [--games N]``."""
    import logging

    logging.getLogger("chess.engine").setLevel(logging.ERROR)   # the engines' info strings are not news
    routes = args.routes or list(ROUTES)
    for r in routes:
        if r not in ROUTES:
            raise ValueError(f"unknown route {r!r}; routes are: {', '.join(ROUTES)}")
    clocks = [parse_clock(c) for c in args.clocks] if args.clocks else list(CLOCKS)
    if args.games < 1:
        raise ValueError("--games is at least 1")
    checkout = args.lichess_bot or os.environ.get("LICHESS_BOT_DIR")
    out = Path(args.out)
    for route in routes:
        play_route(route, clocks, args.games, out=out, seed=args.seed,
                   checkout=Path(checkout).resolve() if checkout else None,
                   deps=Path(args.lichess_bot_deps).resolve() if args.lichess_bot_deps else None,
                   progress=not args.quiet)
    command = "knights " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    doc = summarise(out, routes, clocks, command)
    if args.note:
        doc["note"] = args.note
    write_json(Path(args.results), doc)
    for row in doc["rows"]:
        print(f"{row['route']:<9} {row['clock']:<10} {row['games']:>4} games: {row['illegal']} illegal, "
              f"{row['errors']} errors, {row['time_losses']} lost on time, {row['nan_scores']} NaN, "
              f"{row['quick_moves']} quick moves, least left {row['least_left_ms']} ms; "
              f"+{row['wins']} ={row['draws']} -{row['losses']}")
    print(f"wrote {args.results}")
    return 0


def add_arguments(sub: Any) -> None:
    s = sub.add_parser("soak", help="the default bot on real clocks through knights uci and lichess-bot's homemade "
                                    "route: illegal moves, errors, losses on time, NaN scores")
    s.add_argument("--routes", nargs="+", default=None, help="uci, homemade (default both)")
    s.add_argument("--clocks", nargs="+", default=None, help="BASE+INC seconds (default 3+0 9+0.1)")
    s.add_argument("--games", type=int, default=125, help="games per route and clock (default 125)")
    s.add_argument("--lichess-bot", default=None, help="a lichess-bot checkout (default $LICHESS_BOT_DIR)")
    s.add_argument("--lichess-bot-deps", default=None,
                   help="a folder holding lichess-bot's own dependencies (pip install --target)")
    s.add_argument("--out", default=str(OUT), help="where every game is logged (resumes from it)")
    s.add_argument("--results", default=str(RESULTS))
    s.add_argument("--seed", type=int, default=100)
    s.add_argument("--note", default=None, help="a sentence kept in the results file (the machine, its load)")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=soak_main)
