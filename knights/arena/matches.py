"""Matches between players, in parallel, every game saved as PGN; the strength ladder.

Players are named by **spec** strings, picklable, so that every worker process
builds its own players:

========================  =====================================================
``ours:<evaluator>``      our one-ply engine (:mod:`knights.play.engine`) with any
                          evaluator :func:`knights.evaluate.names.load_evaluator`
                          accepts (``EL/v8``, ``material``, ``democracy``,
                          ``default``); stochastic openings on. ``:det`` at the
                          end (``ours:material:det``) plays deterministically.
``random``                a random mover
``greedy``                one-ply material counter
``ab<N>``                 material alpha-beta to depth N + capture search (ab2, ab3)
``sf-nodes:<N>``          Stockfish, Skill Level 0, N nodes a move (1, 10, 100)
``sf-elo:<E>``            Stockfish, UCI_LimitStrength, UCI_Elo E (>= 1350)
``sf-depth:<D>``          Stockfish at full strength to depth D
``uci:<command>``         any UCI engine started by ``command`` (python-chess)
========================  =====================================================

A pairing of A and B over ``n`` games walks through :data:`OPENINGS` (balanced
lines of 2-4 moves from the standard start), each opening played twice with the
colours swapped: game ``g`` uses opening ``g // 2`` and A has White when ``g`` is
even. The opening moves are played as a book (the PGN header ``OpeningPlies`` says
how many; :mod:`knights.arena.quality` skips them).

Game end and adjudication (:class:`Settings`)
---------------------------------------------
Games end by the rules (checkmate, stalemate, insufficient material, threefold
repetition and the fifty-move rule, both claimed at once), or by adjudication:

* **material**: a side that is ahead by ``adjudicate_cp`` centipawns of material
  (P=100 N=300 B=300 R=500 Q=900; default 1000, i.e. a queen and a pawn) after
  each of ``adjudicate_plies`` consecutive plies (default 40: twenty moves each)
  is declared the winner: it is winning and has had twenty moves to finish;
* **max plies**: a game still running after ``max_plies`` plies (default 300) is
  a draw;
* **forfeit**: a player that raises or plays an illegal move loses.

Wins by checkmate are counted apart from adjudicated wins in every summary, so
"won outright" can be told from "was ahead".

Per-move limits: our one-ply engine and the material opponents search a fixed
depth; ``sf-nodes`` its nodes; ``sf-elo`` and ``uci:`` engines use ``nodes`` /
``movetime_ms`` of :class:`Settings` (``sf-elo`` defaults to 20,000 nodes, which
is enough for Stockfish 15.1 to reach the depth, 1 + its skill level, at which
it picks its weakened move).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import chess
import chess.pgn

from knights.evaluate.names import load_evaluator
from knights.play.engine import OnePlyEngine
from knights.arena.players import (AlphaBetaPlayer, EnginePlayer, GreedyPlayer, Player, RandomPlayer, StockfishPlayer,
                               UciPlayer, material_cp)


# -- openings ------------------------------------------------------------------------
@dataclass(frozen=True)
class Opening:
    name: str
    moves: tuple[str, ...]  # SAN from the standard start

    def board(self) -> chess.Board:
        board = chess.Board()
        for san in self.moves:
            board.push_san(san)
        return board


def _o(name: str, line: str) -> Opening:
    return Opening(name, tuple(line.split()))


OPENINGS: tuple[Opening, ...] = (
    _o("Ruy Lopez", "e4 e5 Nf3 Nc6 Bb5 a6"),
    _o("Queen's Gambit Declined", "d4 d5 c4 e6 Nc3 Nf6"),
    _o("Sicilian, Open", "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6"),
    _o("King's Indian", "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6"),
    _o("Italian Game", "e4 e5 Nf3 Nc6 Bc4 Bc5"),
    _o("Slav", "d4 d5 c4 c6 Nf3 Nf6"),
    _o("French", "e4 e6 d4 d5 Nc3 Nf6"),
    _o("Nimzo-Indian", "d4 Nf6 c4 e6 Nc3 Bb4"),
    _o("Caro-Kann", "e4 c6 d4 d5 Nc3 dxe4 Nxe4"),
    _o("English, Four Knights", "c4 e5 Nc3 Nf6 Nf3 Nc6"),
    _o("Scotch", "e4 e5 Nf3 Nc6 d4 exd4 Nxd4"),
    _o("Queen's Indian", "d4 Nf6 c4 e6 Nf3 b6"),
    _o("Sicilian, Taimanov", "e4 c5 Nf3 e6 d4 cxd4 Nxd4 Nc6"),
    _o("Gruenfeld", "d4 Nf6 c4 g6 Nc3 d5"),
    _o("Petrov", "e4 e5 Nf3 Nf6 Nxe5 d6 Nf3 Nxe4"),
    _o("Queen's Gambit Accepted", "d4 d5 c4 dxc4 Nf3 Nf6"),
    _o("Pirc", "e4 d6 d4 Nf6 Nc3 g6"),
    _o("London System", "d4 d5 Bf4 Nf6 e3 e6"),
    _o("Scandinavian", "e4 d5 exd5 Qxd5 Nc3 Qa5"),
    _o("Reti", "Nf3 d5 g3 Nf6 Bg2 e6"),
)
"""Twenty balanced openings (2-4 moves each), most common first: a pairing of 2k
games uses the first k, each with both colours."""


# -- settings and specs ----------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    max_plies: int = 300
    adjudicate_cp: int = 1000
    adjudicate_plies: int = 40
    nodes: int | None = None        # per move, for sf-elo and uci: players
    movetime_ms: int | None = None  # per move, for sf-elo and uci: players
    seed: int = 2024


SPEC_HELP = ("ours:<evaluator>[:det], random, greedy, ab<N>, sf-nodes:<N>, sf-elo:<E>, "
             "sf-depth:<D>, uci:<command>")


def canonical(spec: str) -> str:
    """The one spelling of a spec (``ours`` / ``ours:default`` name the default
    evaluator; ``:stoch`` is the default and is dropped)."""
    spec = spec.strip()
    if spec == "ours" or spec.startswith("ours:"):
        evaluator, stochastic = parse_ours(spec)
        return f"ours:{evaluator}" + ("" if stochastic else ":det")
    return spec


def parse_ours(spec: str) -> tuple[str, bool]:
    """``ours:EL/v8:det`` -> ``("EL/v8", False)``."""
    rest = spec[len("ours:"):] if spec.startswith("ours:") else ""
    stochastic = True
    for suffix, value in ((":det", False), (":stoch", True)):
        if rest.endswith(suffix) or rest == suffix[1:]:
            rest, stochastic = rest[: -len(suffix)] if rest.endswith(suffix) else "", value
    if rest in ("", "default"):
        from knights.evaluate.names import DEFAULT_EVALUATOR

        rest = DEFAULT_EVALUATOR
    return rest, stochastic


def check_spec(spec: str) -> str:
    """``spec`` in canonical form; ``ValueError`` if it names no player."""
    spec = canonical(spec)
    if spec in ("random", "greedy") or spec.startswith(("ours:", "uci:")):
        if spec == "uci:":
            raise ValueError("uci: needs a command, e.g. 'uci:/usr/games/stockfish'")
        return spec
    if re.fullmatch(r"ab[1-9]", spec) or re.fullmatch(r"sf-(nodes|elo|depth):\d+", spec):
        return spec
    raise ValueError(f"unknown player {spec!r}; players are: {SPEC_HELP}")


_EVALUATORS: dict[str, object] = {}


class OursPlayer:
    """Our one-ply engine (``knights.play.engine``) with a named evaluator; :meth:`reseed`
    restarts its opening randomness (the evaluator is loaded once per process)."""

    def __init__(self, evaluator: str, stochastic: bool = True, seed: int | None = None,
                 name: str | None = None) -> None:
        if evaluator not in _EVALUATORS:
            if os.environ.get("KNIGHTS_ARENA_WORKER"):
                import torch

                torch.set_num_threads(1)
            _EVALUATORS[evaluator] = load_evaluator(evaluator)
        self.evaluator = _EVALUATORS[evaluator]
        self.stochastic = stochastic
        self.name = name or f"ours:{evaluator}" + ("" if stochastic else ":det")
        self._player = EnginePlayer(OnePlyEngine(self.evaluator, stochastic=stochastic, seed=seed), self.name)

    def reseed(self, seed: int | None) -> None:
        self._player.engine.reseed(seed)

    def choose_move(self, board: chess.Board) -> chess.Move:
        return self._player.choose_move(board)

    def new_game(self) -> None:
        self._player.new_game()

    def close(self) -> None:
        self._player.close()


def build_player(spec: str, settings: Settings = Settings(), seed: int | None = None) -> Player:
    """A fresh player for ``spec`` (see the module docstring)."""
    spec = check_spec(spec)
    if spec.startswith("ours:"):
        evaluator, stochastic = parse_ours(spec)
        return OursPlayer(evaluator, stochastic, seed, name=spec)
    if spec == "random":
        return RandomPlayer(seed)
    if spec == "greedy":
        return GreedyPlayer(seed)
    if spec.startswith("ab"):
        return AlphaBetaPlayer(int(spec[2:]), seed)
    if spec.startswith("sf-nodes:"):
        return StockfishPlayer(nodes=int(spec.split(":")[1]), skill=0, name=spec)
    if spec.startswith("sf-elo:"):
        return StockfishPlayer(elo=int(spec.split(":")[1]), nodes=settings.nodes,
                               movetime_ms=settings.movetime_ms, name=spec)
    if spec.startswith("sf-depth:"):
        return StockfishPlayer(depth=int(spec.split(":")[1]), name=spec)
    if spec.startswith("uci:"):
        return UciPlayer(spec[4:], movetime_ms=settings.movetime_ms, nodes=settings.nodes, name=spec)
    raise ValueError(f"unknown player {spec!r}")  # unreachable: check_spec


# -- one game -----------------------------------------------------------------------------
TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-move rule",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
    chess.Termination.FIFTY_MOVES: "fifty-move rule",
    chess.Termination.THREEFOLD_REPETITION: "threefold repetition",
}


@dataclass
class GameTask:
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


def play_game(white: Player, black: Player, opening: Opening, settings: Settings = Settings(),
              headers: dict[str, str] | None = None) -> dict:
    """Play one game from ``opening``; returns the result record (with its PGN text)."""
    board = opening.board()
    book = len(board.move_stack)
    players = {chess.WHITE: white, chess.BLACK: black}
    for p in (white, black):
        p.new_game()
    spent = {chess.WHITE: 0.0, chess.BLACK: 0.0}
    lead_side: chess.Color | None = None
    lead_plies = 0
    result = termination = None
    error = ""
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, termination = outcome.result(), TERMINATIONS[outcome.termination]
            break
        if lead_side is not None and lead_plies >= settings.adjudicate_plies:
            result = "1-0" if lead_side == chess.WHITE else "0-1"
            termination = "adjudication: material"
            break
        if board.ply() >= settings.max_plies:
            result, termination = "1/2-1/2", "adjudication: max plies"
            break
        side = board.turn
        start = time.perf_counter()
        try:
            move = players[side].choose_move(board.copy())
        except Exception as exc:  # a crashing player loses, the match goes on
            move, error = None, f"{type(exc).__name__}: {exc}"
        spent[side] += time.perf_counter() - start
        if move is None or not board.is_legal(move):
            error = error or f"illegal move {move} in {board.fen()}"
            result = "0-1" if side == chess.WHITE else "1-0"
            termination = "forfeit: " + ("error" if move is None else "illegal move")
            break
        board.push(move)
        balance = material_cp(board, chess.WHITE)
        if abs(balance) >= settings.adjudicate_cp:
            leader = balance > 0
            lead_plies = lead_plies + 1 if leader == lead_side else 1
            lead_side = leader
        else:
            lead_side, lead_plies = None, 0

    game = chess.pgn.Game.from_board(board)
    game.headers["Event"] = "Knights arena"
    game.headers["Site"] = "local"
    game.headers["Date"] = _dt.date.today().strftime("%Y.%m.%d")
    game.headers["White"] = white.name
    game.headers["Black"] = black.name
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    game.headers["Opening"] = opening.name
    game.headers["OpeningPlies"] = str(book)
    game.headers["PlyCount"] = str(board.ply())
    for key, value in (headers or {}).items():
        game.headers[key] = str(value)
    if book:
        node = game
        for _ in range(book):
            node = node.variations[0]
        node.comment = "end of book"
    if error:
        game.headers["Error"] = error[:300]
    return {"white": white.name, "black": black.name, "result": result, "termination": termination,
            "plies": board.ply(), "opening": opening.name, "time_white": round(spent[chess.WHITE], 4),
            "time_black": round(spent[chess.BLACK], 4), "error": error,
            "pgn": str(game.accept(chess.pgn.StringExporter(headers=True, variations=False, comments=True)))}


# -- many games, in worker processes -----------------------------------------------------------------
_PLAYERS: dict[tuple[str, str], Player] = {}
MAX_CACHED_PLAYERS = 4
"""Players a process keeps between games (each Stockfish holds ~100 MB); the least
recently used is closed beyond that."""


def _close_players() -> None:
    while _PLAYERS:
        _, player = _PLAYERS.popitem()
        try:
            player.close()
        except Exception:
            pass


def _worker_init() -> None:
    import multiprocessing.util

    os.environ["KNIGHTS_ARENA_WORKER"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    multiprocessing.util.Finalize(None, _close_players, exitpriority=10)


def _player_for(spec: str, role: str, settings: Settings, seed: int) -> Player:
    key = (spec, role)
    player = _PLAYERS.pop(key, None)
    if player is None:
        while len(_PLAYERS) >= MAX_CACHED_PLAYERS:
            _PLAYERS.pop(next(iter(_PLAYERS))).close()
        player = build_player(spec, settings, seed)
    elif hasattr(player, "reseed"):
        player.reseed(seed)
    _PLAYERS[key] = player  # most recently used last
    return player


def run_task(task: GameTask) -> dict:
    """Play one scheduled game with this process's players (built on first use)."""
    start = time.perf_counter()
    try:
        a = _player_for(task.a, "a", task.settings, task.seed)
        b = _player_for(task.b, "b", task.settings, task.seed + 1)
    except Exception as exc:
        return {"index": task.index, "a": task.a, "b": task.b, "fatal": f"{type(exc).__name__}: {exc}"}
    white, black = (a, b) if task.a_white else (b, a)
    opening = OPENINGS[task.opening]
    # a spec's player may name itself differently: the arena keys everything by spec
    record = play_game(white, black, opening, task.settings,
                       headers={"White": task.white, "Black": task.black, "Round": task.index + 1,
                                "Seed": task.seed})
    record["white"], record["black"] = task.white, task.black
    if record["error"]:  # a crashed player (or its engine process) is not reused
        for key in ((task.a, "a"), (task.b, "b")):
            broken = _PLAYERS.pop(key, None)
            if broken is not None:
                try:
                    broken.close()
                except Exception:
                    pass
    score_white = {"1-0": 1.0, "0-1": 0.0}.get(record["result"], 0.5)
    record.update(index=task.index, a=task.a, b=task.b, seed=task.seed,
                  score_a=score_white if task.a_white else 1.0 - score_white,
                  wall=round(time.perf_counter() - start, 4))
    return record


def game_seed(base: int, a: str, b: str, index: int) -> int:
    return random.Random(f"{base}|{a}|{b}|{index}").getrandbits(31)


def schedule(pairings: Sequence[tuple[str, str, int]], settings: Settings = Settings()) -> list[GameTask]:
    """The games of every (a, b, n) pairing: openings in turn, each with both colours."""
    tasks = []
    for a, b, n in pairings:
        a, b = check_spec(a), check_spec(b)
        for g in range(n):
            tasks.append(GameTask(g, a, b, (g // 2) % len(OPENINGS), g % 2 == 0,
                                  game_seed(settings.seed, a, b, g), settings))
    return tasks


def safe_name(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "player"


def pgn_path(out_dir: Path, record: dict) -> Path:
    return out_dir / f"{safe_name(record['a'])}__vs__{safe_name(record['b'])}" / f"g{record['index'] + 1:04d}.pgn"


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
    order = sorted(range(len(tasks)), key=lambda i: (-_expected_cost(tasks[i]), tasks[i].a, tasks[i].b))
    todo = [tasks[i] for i in order]

    def keep(record: dict, bar) -> None:
        if "fatal" in record:
            raise RuntimeError(f"cannot build players {record['a']} / {record['b']}: {record['fatal']}")
        path = pgn_path(out, record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(record["pgn"] + "\n\n")
        row = {k: v for k, v in record.items() if k != "pgn"}
        row["pgn_file"] = str(path.relative_to(out))
        with log.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        records.append(row)
        bar.update(1)
        bar.set_postfix_str(f"{record['a']} {record['score_a']:g} vs {record['b']}", refresh=False)

    if workers <= 1 or len(todo) <= 1:
        try:
            with tqdm(total=len(todo), desc=desc, unit="game", disable=not progress, file=sys.stderr) as bar:
                for task in todo:
                    keep(run_task(task), bar)
        finally:
            _close_players()
    else:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")  # clean workers: no inherited torch threads or tqdm monitor
        pool = ctx.Pool(min(workers, len(todo)), initializer=_worker_init)
        try:
            with tqdm(total=len(todo), desc=desc, unit="game", disable=not progress, file=sys.stderr) as bar:
                for record in pool.imap_unordered(run_task, todo, chunksize=1):
                    keep(record, bar)
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
    key = {(t.a, t.b, t.index): i for i, t in enumerate(tasks)}
    records.sort(key=lambda r: key[(r["a"], r["b"], r["index"])])
    return records


SECONDS_PER_GAME = {"random": 0.02, "greedy": 0.05, "ab2": 0.6, "ab3": 3.0, "sf-nodes:1": 0.05,
                    "sf-nodes:10": 0.15, "sf-nodes:100": 1.0, "sf-elo": 2.5, "uci": 2.5, "ours": 0.25}
"""Rough seconds of one core a player adds to a game (measured on a loaded 2-core
machine: 4 games of every ladder pairing); a game costs the sum of its two players."""


def player_seconds(spec: str) -> float:
    if spec in SECONDS_PER_GAME:
        return SECONDS_PER_GAME[spec]
    family = spec.split(":")[0]
    return SECONDS_PER_GAME.get(family, 1.0 if family.startswith("sf-") else 0.5)


def _expected_cost(task: GameTask) -> float:
    return player_seconds(task.a) + player_seconds(task.b)


def load_records(out_dir: str | Path) -> list[dict]:
    """The records of a match folder (its ``games.jsonl``)."""
    path = Path(out_dir) / "games.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- summaries ---------------------------------------------------------------------------------------
@dataclass
class PairStats:
    player: str
    opponent: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    wins_by_mate: int = 0
    losses_by_mate: int = 0
    adjudicated: int = 0
    plies: int = 0

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else float("nan")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(points=self.points, score=self.score,
                 mean_plies=self.plies / self.games if self.games else None)
        return d


def pair_stats(records: Iterable[dict]) -> dict[tuple[str, str], PairStats]:
    """Results from both sides' point of view: ``stats[(x, y)]`` is x's record against y."""
    stats: dict[tuple[str, str], PairStats] = {}
    for r in records:
        for me, other, s in ((r["a"], r["b"], r["score_a"]), (r["b"], r["a"], 1.0 - r["score_a"])):
            st = stats.setdefault((me, other), PairStats(me, other))
            st.games += 1
            st.plies += r["plies"]
            mate = r["termination"] == "checkmate"
            st.adjudicated += r["termination"].startswith("adjudication")
            if s == 1.0:
                st.wins += 1
                st.wins_by_mate += mate
            elif s == 0.0:
                st.losses += 1
                st.losses_by_mate += mate
            else:
                st.draws += 1
    return stats


def format_scores(records: Sequence[dict]) -> str:
    """One line per pairing: score, W/D/L, wins by mate, mean plies, seconds a game."""
    lines = [f"{'player':<24} {'opponent':<16} {'games':>5} {'score':>6}  {'W-D-L':<11} {'mates':>5} "
             f"{'plies':>5} {'s/game':>7}"]
    stats = pair_stats(records)
    walls: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        walls[(r["a"], r["b"])].append(r.get("wall", 0.0))
    for (a, b), w in walls.items():
        st = stats[(a, b)]
        lines.append(f"{a:<24} {b:<16} {st.games:>5} {st.score:>6.3f}  "
                     f"{f'{st.wins}-{st.draws}-{st.losses}':<11} {st.wins_by_mate:>5} "
                     f"{st.plies / st.games:>5.0f} {sum(w) / len(w):>7.2f}")
    return "\n".join(lines)


# -- the strength ladder ---------------------------------------------------------------------------------
LADDER = ("random", "greedy", "ab2", "ab3", "sf-nodes:1", "sf-nodes:10", "sf-nodes:100")
"""The free rungs, weak to strong."""
ANCHORS = {"sf-elo:1350": 1350.0, "sf-elo:1500": 1500.0, "sf-elo:1800": 1800.0, "sf-elo:2000": 2000.0}
"""Stockfish 15.1 UCI_Elo levels: the fixed ratings."""

CHAIN = (
    ("random", "greedy"), ("greedy", "ab2"), ("ab2", "ab3"), ("greedy", "ab3"),
    ("ab3", "sf-nodes:1"), ("ab3", "sf-nodes:10"), ("sf-nodes:1", "sf-nodes:10"),
    ("sf-nodes:10", "sf-nodes:100"),
    ("sf-nodes:1", "sf-elo:1350"), ("sf-nodes:10", "sf-elo:1350"), ("sf-nodes:100", "sf-elo:1350"),
    ("sf-nodes:100", "sf-elo:1500"), ("sf-nodes:100", "sf-elo:1800"), ("sf-nodes:100", "sf-elo:2000"),
)
"""Games between the rungs that rate them: neighbours, plus the anchors each can score against."""

SHIPPED_OPPONENTS = ("random", "greedy", "ab2", "ab3", "sf-nodes:1", "sf-nodes:10", "sf-elo:1350")
VERSION_OPPONENTS = ("random", "greedy", "ab2", "sf-nodes:1")

TARGETS = (
    {"opponent": "greedy", "what": "score >= 0.75", "min_score": 0.75},
    {"opponent": "random", "what": "score >= 0.95, most games won by checkmate", "min_score": 0.95,
     "min_mate_share": 0.5},
)
"""Targets for the shipped bot (checked by the lead once the networks are trained)."""


@dataclass
class StrengthPlan:
    engines: list[str]
    shipped: str
    pairings: list[tuple[str, str, int]]
    anchors: dict[str, float]
    settings: Settings
    quality_games: int = 10
    quality_depth: int = 10


def strength_plan(*, quick: bool = False, engines: Sequence[str] | None = None, games: int | None = None,
                  chain_games: int | None = None, version_games: int | None = None,
                  seed: int = 2024) -> StrengthPlan:
    """What ``knights strength`` plays.

    Full (defaults): the shipped bot (``ours:default``: one ply, stochastic openings,
    the default evaluator) plays 80 games (20 openings x 2 colours, twice) against
    each of :data:`SHIPPED_OPPONENTS`; every other trained EL version (stochastic
    too, so that all versions are judged as the bot plays) 40 games against each of
    :data:`VERSION_OPPONENTS`; the ladder's :data:`CHAIN` 40 games a pairing; the
    first 10 games of the shipped bot against each opponent are analysed for move
    quality at depth 10: 2,240 games with all eight EL versions trained. Measured
    per-game times put it at about 20 minutes on 2 idle cores (35 on a heavily
    loaded machine); ``knights strength --dry-run`` prints the plan and an estimate.

    Quick: ``ours:material`` against random, greedy and sf-nodes:1, two games each,
    a short chain up to the 1350 anchor, games capped at 80 plies, Stockfish
    anchors at 1,000 nodes: a smoke test of the whole pipeline in seconds.
    """
    if quick:
        settings = Settings(max_plies=80, adjudicate_plies=10, nodes=1000, seed=seed)
        shipped = canonical(engines[0]) if engines else "ours:material"
        n, c = _count(games, 2), _count(chain_games, 2)
        pairings = [(shipped, o, n) for o in ("random", "greedy", "sf-nodes:1")]
        pairings += [("random", "greedy", c), ("greedy", "sf-nodes:1", c), ("sf-nodes:1", "sf-elo:1350", c)]
        return StrengthPlan([shipped], shipped, pairings, {"sf-elo:1350": 1350.0}, settings,
                            quality_games=1, quality_depth=6)
    settings = Settings(seed=seed)
    if engines:
        names = [canonical(e) for e in engines]
    else:
        from knights.evaluate.names import DEFAULT_EVALUATOR, available_evaluators, default_evaluator_name, trained_networks

        available = available_evaluators()
        trained = trained_networks(available)  # the versions alone
        # the shipped bot plays the default evaluator; without its weights (a fresh
        # clone) the bot falls back as the engine does, and so does this ladder,
        # under the evaluator's real name
        default = default_evaluator_name(available)
        if default != DEFAULT_EVALUATOR:
            print(f"note: {DEFAULT_EVALUATOR} is not trained; the shipped bot is rated with '{default}'",
                  file=sys.stderr)
        names = [f"ours:{default}"] + [f"ours:{e}" for e in trained]
    names = list(dict.fromkeys(names))
    shipped = names[0]
    pairings = [(shipped, o, _count(games, 80)) for o in SHIPPED_OPPONENTS]
    for e in names[1:]:
        pairings += [(e, o, _count(version_games, 40)) for o in VERSION_OPPONENTS]
    pairings += [(a, b, _count(chain_games, 40)) for a, b in CHAIN]
    pairings = [p for p in pairings if p[2] > 0]
    return StrengthPlan(names, shipped, pairings, dict(ANCHORS), settings)


def _count(value: int | None, default: int) -> int:
    if value is not None and value < 0:
        raise ValueError(f"a game count cannot be negative ({value})")
    return default if value is None else value


def label(spec: str, shipped: str | None = None) -> str:
    text = spec
    if spec.startswith("ours:"):
        evaluator, stochastic = parse_ours(spec)
        text = f"{evaluator} (one ply{', stochastic' if stochastic else ''})"
    if spec == shipped:
        text += " [shipped bot]"
    return text


def rating_report(records: Sequence[dict], anchors: dict[str, float], *, shipped: str | None = None,
                  engines: Sequence[str] = (), prior_draws: float = 1.0) -> dict:
    """Ratings, per-opponent scores and the targets, as one JSON-ready dict."""
    from knights.arena.elo import Table, fit_ratings

    table = Table.from_games([(r["a"], r["b"], r["score_a"]) for r in records])
    ratings = fit_ratings(table, anchors, prior_draws=prior_draws)
    stats = pair_stats(records)
    rungs = [p for p in (*LADDER, *anchors) if p in ratings]
    opponents = rungs + [p for p in ratings if p not in rungs and not p.startswith("ours:")]
    order = sorted(ratings.values(), key=lambda r: -r.rating)
    players = []
    for rt in order:
        p = rt.player
        kind = "anchor" if rt.anchor else ("ours" if p.startswith("ours:") or p in engines else "opponent")
        vs = {o: stats[(p, o)].to_dict() for o in ratings if (p, o) in stats}
        players.append({**rt.to_dict(), "label": label(p, shipped), "kind": kind,
                        "shipped": p == shipped, "score_rate": rt.score_rate if rt.games else None, "vs": vs})
    targets = []
    for t in TARGETS:
        st = stats.get((shipped, t["opponent"])) if shipped else None
        row = {"player": shipped, **t, "games": 0, "score": None, "mate_share": None, "status": "not played"}
        if st and st.games:
            row.update(games=st.games, score=st.score, mate_share=st.wins_by_mate / st.games)
            ok = st.score >= t["min_score"] and row["mate_share"] >= t.get("min_mate_share", 0.0)
            row["status"] = "PASS" if ok else "MISS"
        targets.append(row)
    return {
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "method": ("maximum likelihood (Bradley-Terry, Elo scale 400/log10, draws = half a point) over all "
                   f"games, anchors fixed; prior: {prior_draws:g} virtual draw(s) per pairing; 95% "
                   "interval = rating +- 1.96 se, se from the inverse observed Fisher information"),
        "anchors": anchors, "games": len(records), "opponents": opponents, "players": players,
        "targets": targets,
    }


def _fmt_rating(p: dict) -> str:
    if p["kind"] == "anchor":
        return f"{p['rating']:.0f} (anchor)"
    rel = " rel." if p.get("relative") else ""
    return f"{p['rating']:.0f} [{p['low']:.0f}, {p['high']:.0f}]{rel}"


def markdown_table(report: dict) -> str:
    opponents = [o for o in report["opponents"] if any(o in p["vs"] for p in report["players"])]
    head = ["Player", "Elo [95%]", "Games", "Score"] + [f"vs {o}" for o in opponents]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for p in report["players"]:
        cells = [p["label"], _fmt_rating(p), f"{p['games']:.0f}",
                 "" if p["score_rate"] is None else f"{p['score_rate']:.2f}"]
        for o in opponents:
            v = p["vs"].get(o)
            cells.append("" if not v else f"{v['score']:.2f} ({v['games']})")
        lines.append("| " + " | ".join(cells) + " |")
    out = ["# Playing strength", "", f"Generated {report['generated']} from {report['games']} games.", "",
           *lines, "", "Score cells: score (games). " + report["method"] + ".", ""]
    if report["targets"] and report["targets"][0]["player"]:
        out += ["## Targets for the shipped bot", "", "| Target | Games | Score | Won by mate | Status |",
                "|---|---|---|---|---|"]
        for t in report["targets"]:
            score = "" if t["score"] is None else f"{t['score']:.2f}"
            mates = "" if t["mate_share"] is None else f"{t['mate_share']:.0%}"
            out.append(f"| vs {t['opponent']}: {t['what']} | {t['games']} | {score} | {mates} | {t['status']} |")
        out.append("")
    return "\n".join(out)


def write_report(report: dict, results_dir: str | Path, figures_dir: str | Path) -> list[Path]:
    """``elo.json``, ``elo.csv``, ``elo.md`` in ``results_dir`` and ``elo.png`` in ``figures_dir``."""
    results, figures = Path(results_dir), Path(figures_dir)
    results.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    paths = [results / "elo.json", results / "elo.csv", results / "elo.md", figures / "elo.png"]
    paths[0].write_text(json.dumps(report, indent=2) + "\n")
    opponents = report["opponents"]
    with paths[1].open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["player", "label", "kind", "rating", "low", "high", "se", "games", "score"]
                   + [f"score_vs_{o}" for o in opponents] + [f"games_vs_{o}" for o in opponents])
        for p in report["players"]:
            w.writerow([p["player"], p["label"], p["kind"], f"{p['rating']:.1f}", f"{p['low']:.1f}",
                        f"{p['high']:.1f}", f"{p['se']:.1f}", f"{p['games']:.0f}",
                        "" if p["score_rate"] is None else f"{p['score_rate']:.4f}"]
                       + [f"{p['vs'][o]['score']:.4f}" if o in p["vs"] else "" for o in opponents]
                       + [p["vs"][o]["games"] if o in p["vs"] else "" for o in opponents])
    paths[2].write_text(markdown_table(report))
    plot_ratings(report, paths[3])
    return paths


def plot_ratings(report: dict, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players = list(reversed(report["players"]))
    colours = {"anchor": "tab:gray", "opponent": "tab:blue", "ours": "tab:red"}
    fig, ax = plt.subplots(figsize=(8, 0.38 * len(players) + 1.4))
    for y, p in enumerate(players):
        c = colours[p["kind"]]
        if p["kind"] == "anchor":
            ax.plot(p["rating"], y, "D", color=c)
        else:
            ax.errorbar(p["rating"], y, xerr=[[p["rating"] - p["low"]], [p["high"] - p["rating"]]],
                        fmt="o", color=c, capsize=3)
    ax.set_yticks(range(len(players)), [p["label"] for p in players], fontsize=8)
    ax.set_xlabel("Elo (Stockfish 15.1 UCI_Elo anchors fixed; bars: 95% interval)")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker=m, ls="", color=colours[k], label=n)
               for k, m, n in (("ours", "o", "ours"), ("opponent", "o", "opponents"), ("anchor", "D", "anchors"))]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    ax.set_title("Playing strength")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def estimate_seconds(plan: StrengthPlan, workers: int = 1) -> dict:
    """Rough wall time of a plan from :data:`SECONDS_PER_GAME` (quality: 60 plies a game
    at about 60 ms a position at depth 10)."""
    games = sum(n for _, _, n in plan.pairings)
    play = sum(n * (player_seconds(a) + player_seconds(b)) for a, b, n in plan.pairings)
    shipped_opponents = sum(1 for a, _, _ in plan.pairings if a == plan.shipped)
    quality = shipped_opponents * plan.quality_games * 60 * 0.06 * (plan.quality_depth / 10) ** 2
    w = max(1, workers)
    return {"games": games, "play_s": play / w, "quality_s": quality / w, "total_s": (play + quality) / w}


def format_plan(plan: StrengthPlan, workers: int) -> str:
    lines = [f"{'player':<24} {'opponent':<16} {'games':>5} {'~s/game':>8}"]
    for a, b, n in plan.pairings:
        lines.append(f"{a:<24} {b:<16} {n:>5} {player_seconds(a) + player_seconds(b):>8.2f}")
    est = estimate_seconds(plan, workers)
    lines.append(f"{est['games']} games; rough estimate with {workers} worker(s): {est['play_s'] / 60:.0f} min of games "
                 f"+ {est['quality_s'] / 60:.0f} min of move quality = {est['total_s'] / 60:.0f} min")
    return "\n".join(lines)


def run_strength(plan: StrengthPlan, *, results_dir: str | Path, figures_dir: str | Path,
                 pgn_dir: str | Path, workers: int = 1, progress: bool = True, quality: bool = True,
                 log=print) -> dict:
    """Play the plan, rate everyone, write the table, plot and quality summary."""
    pgn_dir = Path(pgn_dir)
    if (pgn_dir / "games.jsonl").exists():  # a fresh run: forget the previous one's games
        (pgn_dir / "games.jsonl").unlink()
        for old in pgn_dir.glob("*__vs__*/g*.pgn"):
            old.unlink()
    start = time.perf_counter()
    tasks = schedule(plan.pairings, plan.settings)
    log(f"strength: {len(tasks)} games in {len(plan.pairings)} pairings, {workers} worker(s); PGNs in {pgn_dir}")
    records = run_games(tasks, pgn_dir, workers=workers, progress=progress, desc="strength")
    played = time.perf_counter() - start
    log(format_scores(records))
    report = rating_report(records, plan.anchors, shipped=plan.shipped, engines=plan.engines)
    report["settings"] = dataclasses.asdict(plan.settings)
    report["pgn_dir"] = str(pgn_dir)
    report["seconds_games"] = round(played, 1)
    report["workers"] = workers
    if quality:
        from knights.arena import quality as q

        files = []
        for a, b, _ in plan.pairings:
            if a == plan.shipped:
                folder = pgn_dir / f"{safe_name(a)}__vs__{safe_name(b)}"
                files += sorted(folder.glob("*.pgn"))[: plan.quality_games]
        t0 = time.perf_counter()
        summary = q.summarise_files(files, depth=plan.quality_depth, workers=workers, progress=progress,
                                    root=pgn_dir)
        q.write_summary(summary, Path(results_dir) / "quality.json")
        report["seconds_quality"] = round(time.perf_counter() - t0, 1)
        log(q.format_summary(summary))
    paths = write_report(report, results_dir, figures_dir)
    log(markdown_table(report))
    log("wrote " + ", ".join(str(p) for p in paths) + (f", {Path(results_dir) / 'quality.json'}" if quality else ""))
    log(f"strength: {time.perf_counter() - start:.0f} s in all ({played:.0f} s of games)")
    return report


# -- command line ----------------------------------------------------------------------------------------
def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def match_main(args) -> int:
    """``knights match A B [C ...]``: A against each of B, C, ..."""
    settings = Settings(max_plies=args.max_plies, nodes=args.nodes, movetime_ms=args.movetime, seed=args.seed)
    specs = [check_spec(s) for s in args.players]
    if len(specs) < 2:
        raise ValueError("name the engine under test and at least one opponent")
    engine, opponents = specs[0], specs[1:]
    out = Path(args.out or Path("results_pgn") / "matches" /
               f"{safe_name(engine)}-{_dt.datetime.now():%Y%m%d-%H%M%S}")
    if (out / "games.jsonl").exists():
        (out / "games.jsonl").unlink()
    tasks = schedule([(engine, o, args.games) for o in opponents], settings)
    start = time.perf_counter()
    records = run_games(tasks, out, workers=args.workers, progress=not args.quiet, desc="match")
    print(format_scores(records))
    anchors = {s: float(s.split(":")[1]) for s in specs if s.startswith("sf-elo:")}
    if anchors:
        report = rating_report(records, anchors, engines=[engine])
        for p in report["players"]:
            print(f"{p['player']:<24} {_fmt_rating(p)}")
    print(f"{len(records)} games in {time.perf_counter() - start:.0f} s; PGNs in {out}")
    return 0


def strength_main(args) -> int:
    """``knights strength [--quick]``."""
    plan = strength_plan(quick=args.quick, engines=args.engines or None, games=args.games,
                         chain_games=args.chain_games, version_games=args.version_games, seed=args.seed)
    if args.quality_games is not None:
        plan.quality_games = args.quality_games
    if args.dry_run:
        print(format_plan(plan, args.workers))
        return 0
    base = Path("runs/strength-quick") if args.quick else None
    results = args.results_dir or (base / "results" if base else Path("report/results"))
    figures = args.figures_dir or (base / "figures" if base else Path("report/figures"))
    pgns = args.pgn_dir or (base / "pgn" if base else Path("results_pgn/strength"))
    run_strength(plan, results_dir=results, figures_dir=figures, pgn_dir=pgns, workers=args.workers,
                 progress=not args.quiet, quality=not args.no_quality)
    return 0


def add_arguments(sub) -> None:
    """The ``match`` and ``strength`` subcommands (for :mod:`knights.cli`)."""
    m = sub.add_parser("match", help="play an engine against opponents; PGNs and scores",
                       description=f"Players: {SPEC_HELP}.")
    m.add_argument("players", nargs="+", help="the engine under test, then its opponents")
    m.add_argument("--games", type=int, default=20, help="games against each opponent (2 per opening)")
    m.add_argument("--workers", type=int, default=default_workers())
    m.add_argument("--movetime", type=int, default=None, help="ms per move for sf-elo and uci: players")
    m.add_argument("--nodes", type=int, default=None, help="nodes per move for sf-elo and uci: players")
    m.add_argument("--max-plies", type=int, default=300)
    m.add_argument("--seed", type=int, default=2024)
    m.add_argument("--out", default=None, help="folder for the PGNs (default results_pgn/matches/...)")
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=match_main)

    s = sub.add_parser("strength", help="the rating ladder: Elo table, plot, PGNs, move quality")
    s.add_argument("--quick", action="store_true", help="a few games, material evaluator (smoke test)")
    s.add_argument("--engines", nargs="*", default=None,
                   help="our players to rate (first = the shipped bot); default: ours:default + trained EL")
    s.add_argument("--games", type=int, default=None, help="games of the shipped bot per opponent (80)")
    s.add_argument("--version-games", type=int, default=None, help="games of other versions per opponent (40)")
    s.add_argument("--chain-games", type=int, default=None, help="games per ladder pairing (40)")
    s.add_argument("--quality-games", type=int, default=None, help="shipped-bot games analysed per opponent (10)")
    s.add_argument("--no-quality", action="store_true")
    s.add_argument("--dry-run", action="store_true", help="print the pairings and a time estimate, play nothing")
    s.add_argument("--workers", type=int, default=default_workers())
    s.add_argument("--seed", type=int, default=2024)
    s.add_argument("--results-dir", default=None)
    s.add_argument("--figures-dir", default=None)
    s.add_argument("--pgn-dir", default=None)
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=strength_main)
