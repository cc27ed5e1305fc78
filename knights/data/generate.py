"""Generate a labelled dataset with real Stockfish, in the CSSLab format.

How a game is made
------------------
Every position of a game is searched once by Stockfish at a fixed depth. That one
search gives both the *label* (``cp``) and the engine's best move. Players:

* ``stockfish-eps<E>``: plays Stockfish's best move, except that with probability
  ``E`` it plays a uniformly random legal move instead. Different ``E`` per side
  give lopsided games and realistic mistakes at no extra engine time.
* ``stockfish-depth<D>``: plays the move the same search ranked first after its
  iteration ``D`` (``shallow`` style). The hash is cleared once a game, not once a
  position, so early iterations start from what the game's earlier searches left: the
  move is closer to the deep search's choice than a fresh depth-``D`` search's would be.
  In the ``cold`` style the hash is cleared before every search, so the move is the one a
  fresh ``go depth D`` plays: a short search's own mistakes.
* ``greedy``: one-ply material counter (captures the most it can, else random).
* ``random``: a uniformly random legal move.

Every game starts with 0-6 uniformly random plies (a short random opening), so
games rarely repeat. That is the ``mixed`` style, the one ``data/full`` is made of;
:data:`STYLES` holds the others, which ``knights data grow``
(:mod:`knights.data.grow`) adds to it: longer random openings, stronger players,
material odds. A game ends by the rules (mate, stalemate, insufficient
material, threefold repetition, fifty moves) or is adjudicated at ``max_plies`` by
the last evaluation (|eval| >= 5 pawns wins, else a draw).

Determinism
-----------
Game ``i`` is played from its own random stream (seeded by ``(seed, i)``) after a
``ucinewgame`` that clears Stockfish's hash, with one search thread. The output is
the shortest prefix of games 0, 1, 2, ... holding at least ``positions`` rows, so the
same seed, depth and Stockfish version give a byte-identical file whatever the
number of workers.

Interruptions
-------------
Games are played in parts of ``games_per_part`` games. Each finished part is
written to ``<out>.parts/`` through a temporary file and a rename; a rerun with the
same recipe reuses the finished parts and plays only the rest. The final CSV is
also written through a temporary file and renamed.

Several machines
----------------
Since a part's bytes depend only on its number, parts can be played anywhere:
``generate(..., shard=Shard(2, 3))`` plays every third part (1, 4, 7, ...) and writes
no CSV; :func:`knights.data.shards.merge` then joins the parts of all shards into the
file a single machine would have written. :mod:`knights.data.shards` explains how.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.pool import Pool
from pathlib import Path

import chess

from knights.board.outcome import outcome
from knights.board.pieces import capture_gain
from knights.board.placements import parse_material, place_men, random_material
from knights.common import exit_on_termination, write_json
from knights.data import csslab
from knights.data.shards import (
    PART_NAME,
    RECIPE_FILE,
    Shard,
    Share,
    assemble,
    count_rows,
    parts_folder,
    scan_parts,
    write_marker,
)
from knights.data.stockfish import Analysis, Stockfish, find_stockfish

EPSILONS = (0.0, 0.05, 0.1, 0.2, 0.35)
"""The random-move probabilities a ``stockfish-eps<E>`` player is drawn with."""
ADJUDICATE_PAWNS = 5.0
"""At ``max_plies``, a last evaluation this large (pawns) wins the game; smaller ones draw."""
OPENING_PLIES = (0, 6)
"""Fewest and most uniformly random plies a game opens with (inclusive)."""


@dataclass(frozen=True)
class Recipe:
    """Everything that determines the generated file (besides the Stockfish build)."""

    seed: int = 2024
    depth: int = 8
    max_plies: int = 300
    games_per_part: int = 25
    hash_mb: int = 16
    style: str = "mixed"
    """Which generator plays the games (a key of :data:`STYLES`)."""

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"unknown style {self.style!r}: choose one of {', '.join(STYLES)}")

    def key(self, stockfish_name: str) -> dict[str, object]:
        """What a finished part was made with: a rerun reuses parts only under the same key.
        (The default style is left out, so parts written before styles existed still count.)"""
        fields = {k: v for k, v in self.__dict__.items() if not (k == "style" and v == "mixed")}
        return {**fields, "stockfish": stockfish_name, "format": 1}


# -- players -------------------------------------------------------------------
def pick_players(rng: random.Random) -> tuple[str, str]:
    """Choose the two players of a game (White, Black)."""
    roll = rng.random()

    def sf() -> str:
        return f"stockfish-eps{rng.choice(EPSILONS):.2f}"

    if roll < 0.70:
        pair = (sf(), sf())
    elif roll < 0.85:
        pair = (sf(), "greedy")
    elif roll < 0.95:
        pair = (sf(), "random")
    else:
        pair = (rng.choice(("greedy", "random")), "greedy")
    return pair if rng.random() < 0.5 else (pair[1], pair[0])


def strong_players(rng: random.Random) -> tuple[str, str]:
    """Both sides Stockfish, each rarely random (``strong`` style)."""
    return tuple(f"stockfish-eps{rng.choice(STRONG_EPSILONS):.2f}" for _ in range(2))  # type: ignore[return-value]


def odds_players(rng: random.Random) -> tuple[str, str]:
    """Stockfish against Stockfish (85%) or against the greedy capturer (``odds`` style)."""
    first = f"stockfish-eps{rng.choice(EPSILONS):.2f}"
    second = f"stockfish-eps{rng.choice(EPSILONS):.2f}" if rng.random() < 0.85 else "greedy"
    return (first, second) if rng.random() < 0.5 else (second, first)


SHALLOW_DEPTHS = (1, 2, 3, 4)
"""The depths a ``stockfish-depth<D>`` player of the ``shallow`` style is drawn with."""


def shallow_players(rng: random.Random) -> tuple[str, str]:
    """Stockfish playing an early iteration's move (60%: on both sides) or against Stockfish-eps
    (``shallow`` style)."""
    first = f"stockfish-depth{rng.choice(SHALLOW_DEPTHS)}"
    second = f"stockfish-depth{rng.choice(SHALLOW_DEPTHS)}" if rng.random() < 0.6 else \
        f"stockfish-eps{rng.choice(EPSILONS):.2f}"
    return (first, second) if rng.random() < 0.5 else (second, first)


SOUND_PLIES = 20
"""Plies of a ``sound`` game in which its players draw the iteration whose move they play."""
SOUND_EPSILON = 0.02
"""The random-move probability of a ``sound`` player after its opening."""


def sound_players(rng: random.Random) -> tuple[str, str]:
    """Both sides ``stockfish-sound`` (``sound`` style): no random plies at all, an opening of plausible
    moves, then nearly best ones."""
    return ("stockfish-sound", "stockfish-sound")


def chaos_players(rng: random.Random) -> tuple[str, str]:
    """Both sides Stockfish, each playing a random move often (``chaos`` style): games that stay
    disordered on both sides rather than one side's collapse."""
    return tuple(f"stockfish-eps{rng.choice(CHAOS_EPSILONS):.2f}" for _ in range(2))  # type: ignore[return-value]


def standard_start(rng: random.Random) -> chess.Board:
    """The standard start (a start function takes the game's random stream; this one needs none)."""
    return chess.Board()


def odds_start(rng: random.Random) -> chess.Board:
    """The standard start with 0-3 of each side's 15 non-king men taken off (at least one
    in all), castling rights a removed rook held cleared: material missing from move one,
often unevenly."""
    board = chess.Board()
    counts = [rng.randint(0, 3), rng.randint(0, 3)]
    if sum(counts) == 0:
        counts[rng.randrange(2)] = 1
    for color, count in zip((chess.WHITE, chess.BLACK), counts, strict=True):
        men = sorted(sq for sq, piece in board.piece_map().items()
                     if piece.color == color and piece.piece_type != chess.KING)
        for sq in rng.sample(men, count):
            board.remove_piece_at(sq)
    board.castling_rights = board.clean_castling_rights()
    return board


def endings_start(rng: random.Random) -> chess.Board:
    """The standard start with only a few men left on their home squares: material drawn
    by a general rule (:func:`knights.board.placements.random_material`: 0-3 pieces and
    0-5 pawns a side, often the same pieces on both sides), each piece on one of its own
    home squares (a material draw that has no room, such as three rooks, is drawn again)
    and the pawns on home squares picked at random; castling rights a removed rook held
    are cleared. The random plies and the players then take it into an ending. Unlike
    the independent ``endgames`` set, no man is put on a random square."""
    home = chess.Board()
    while True:
        strong, weak = parse_material(random_material(rng))
        strong_colour = rng.random() < 0.5
        board = chess.Board()
        board.clear_board()
        if place_men(board, ((strong_colour, strong), (not strong_colour, weak)), rng, home.pieces):
            board.castling_rights = board.clean_castling_rights()
            return board


@dataclass(frozen=True)
class Style:
    """One generator of games: who plays, from where, after how many random plies."""

    description: str
    players: Callable[[random.Random], tuple[str, str]]
    opening_plies: tuple[int, int]
    start: Callable[[random.Random], chess.Board] = standard_start
    game_prefix: str = "gen"
    """``game_id`` is this prefix and the game's number (styles differ, so their games never share an id)."""
    max_plies: int | None = None
    """A style's own cap on a game's plies, below the recipe's ``max_plies`` (None: the recipe's)."""
    cold: bool = False
    """Clear Stockfish's hash before every search, not once a game: each search starts fresh, so an
    early iteration's move is a short search's own. The labels then come from a fresh depth-8 search
    too (as the independent sets' do), not one that inherits the game's hash, and take longer."""


ENDINGS_PLIES = 100
"""The ``endings`` style's games stop here: past it a drawn ending mostly shuffles."""
CHAOS_EPSILONS = (0.2, 0.35, 0.5)
"""The random-move probabilities of the ``chaos`` style's players (both sides err often)."""
STRONG_EPSILONS = (0.0, 0.02, 0.05)
"""The random-move probabilities of the ``strong`` style's players."""

STYLES: dict[str, Style] = {
    "mixed": Style("Stockfish-eps players (eps 0-0.35), greedy and random movers, after 0-6 random plies "
                   "(data/full)", pick_players, OPENING_PLIES),
    "openings": Style("Stockfish-eps players (eps 0-0.35), greedy and random movers, after 8-20 random plies: "
                      "odd, unbalanced middlegames", pick_players, (8, 20), game_prefix="opn"),
    "strong": Style("Stockfish against Stockfish, each playing a random move with probability 0-0.05, after 1-8 "
                    "random plies: long, accurate games that reach endgames", strong_players, (1, 8),
                    game_prefix="str"),
    "odds": Style("material odds: the start position less 0-3 men of each side, then Stockfish-eps against "
                  "Stockfish-eps or the greedy capturer after 0-4 random plies", odds_players, (0, 4),
                  start=odds_start, game_prefix="odd"),
    "endings": Style("endings from the start position: kings and 0-3 pieces and 0-5 pawns a side left on "
                     "their home squares, then Stockfish-eps against Stockfish-eps or the greedy capturer after "
                     "4-12 random plies, at most 100 plies a game", odds_players, (4, 12), start=endings_start,
                     game_prefix="fin", max_plies=ENDINGS_PLIES),
    "shallow": Style("Stockfish playing the move its depth-8 labelling search ranked first after iteration 1-4 "
                     "(with the hash the game has built up) against the same or Stockfish-eps, after 2-8 random "
                     "plies",
                     shallow_players, (2, 8), game_prefix="shl"),
    "cold": Style("Stockfish playing the move a fresh search (hash cleared before every position) ranks first "
                  "after iteration 1-4 against the same or Stockfish-eps, after 2-8 random plies",
                  shallow_players, (2, 8), game_prefix="cld", cold=True),
    "chaos": Style("Stockfish against Stockfish, each playing a random move with probability 0.2-0.5, after 2-8 "
                   "random plies: disorder on both sides", chaos_players, (2, 8), game_prefix="chs"),
    "sound": Style("Stockfish on both sides from the start position, no random plies: in the first 20 plies each move "
                   "is the one its depth-8 labelling search ranked first after an iteration drawn from 1 to the "
                   "last, then the best move (a random one with probability 0.02): openings a strong player "
                   "might choose, and the middlegames that follow from them", sound_players, (0, 0),
                   game_prefix="snd"),
    "sound2": Style("the sound style's games from a second seed (their own game numbers): more openings a strong "
                    "player might choose and the middlegames that follow, for a version that continues from one "
                    "trained on data/sound", sound_players, (0, 0), game_prefix="sd2"),
    "sound3": Style("the sound style's games from a third seed (their own game numbers), new positions only (none of "
                    "data/sound2's either): more of the games that helped EL/v25, for the ablation rows that go on "
                    "from it",
                    sound_players, (0, 0), game_prefix="sd3"),
    "again": Style("data/full's own style (Stockfish-eps, greedy and random movers after 0-6 random plies) from "
                   "another seed: more of the same, the control for a new style", pick_players, OPENING_PLIES,
                   game_prefix="agn"),
}
"""The generators, by name. ``mixed`` makes ``data/full``; ``knights data grow`` adds the others."""


def choose_move(player: str, board: chess.Board, best: str | None, rng: random.Random,
                shallow: tuple[str, ...] = ()) -> chess.Move:
    moves = list(board.legal_moves)
    if player == "stockfish-sound":
        if board.ply() < SOUND_PLIES and shallow:
            drawn = chess.Move.from_uci(shallow[rng.randrange(len(shallow))] or best or "0000")
            if drawn in moves:
                return drawn
        elif rng.random() < SOUND_EPSILON:
            return rng.choice(moves)
        return chess.Move.from_uci(best) if best else rng.choice(moves)
    if player.startswith("stockfish-depth"):
        depth = int(player.rsplit("depth", 1)[1])
        pick = shallow[min(depth, len(shallow)) - 1] if shallow else best
        move = chess.Move.from_uci(pick) if pick else None
        return move if move in moves else (chess.Move.from_uci(best) if best else rng.choice(moves))
    if player.startswith("stockfish"):
        eps = float(player.rsplit("eps", 1)[1])
        if best is not None and rng.random() >= eps:
            return chess.Move.from_uci(best)
        return rng.choice(moves)
    if player == "greedy":
        gains = [capture_gain(board, m) for m in moves]
        top = max(gains)
        return rng.choice([m for m, g in zip(moves, gains, strict=True) if g == top])
    return rng.choice(moves)


# -- one game ------------------------------------------------------------------
Ply = tuple[dict[str, str], chess.Move, Analysis]
"""One move of a generated game: the position's columns, the move played, the search."""


def game_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"knights-game-{seed}-{index}")


def terminal_value(board: chess.Board) -> float | None:
    """Exact value (pawns, from the side to move) of a finished position, else None."""
    ended = outcome(board)
    if ended is None:
        return None
    return -csslab.MATE_PAWNS if ended.winner is not None else 0.0


def play_labelled_game(engine: Stockfish, recipe: Recipe, index: int) -> list[dict[str, str]]:
    """Play game ``index`` and return its rows, one per move played, each labelled
    by the search that chose the move."""
    rng = game_rng(recipe.seed, index)
    style = STYLES[recipe.style]
    white, black = style.players(rng)
    opening_plies = rng.randint(*style.opening_plies)
    start = style.start(rng)
    engine.new_game()
    board = start.copy()
    plies: list[Ply] = []
    final_value: float | None = None  # from the side to move at the end
    termination = "Normal"
    while True:
        final_value = terminal_value(board)
        if final_value is not None:
            break
        if style.cold:
            engine.new_game()
        analysis = engine.analyse(board.fen(), depth=recipe.depth)
        if len(plies) >= min(recipe.max_plies, style.max_plies or recipe.max_plies):
            final_value = csslab.eval_to_pawns(rel_text(analysis))
            termination = "Adjudication"
            break
        player = white if board.turn == chess.WHITE else black
        if len(plies) < opening_plies:
            move = rng.choice(list(board.legal_moves))
        else:
            move = choose_move(player, board, analysis.bestmove, rng, analysis.shallow)
        plies.append((csslab.position_columns(board), move, analysis))
        board.push(move)
    return game_rows(f"{style.game_prefix}{index:07d}", white, black, plies, board, final_value, termination,
                     start=start)


def rel_text(a: Analysis) -> str:
    """A search score, from the side to move, as the cp column writes it."""
    if a.mate is not None and a.mate != 0:
        return csslab.format_eval(mate=a.mate)
    return csslab.format_eval(cp=a.cp if a.cp is not None else 0)


def game_result(board: chess.Board, final_value: float) -> str:
    """Result from the final position's value (pawns, side to move)."""
    if abs(final_value) < ADJUDICATE_PAWNS:
        return "1/2-1/2"
    side_to_move_wins = final_value > 0
    white_wins = side_to_move_wins == (board.turn == chess.WHITE)
    return "1-0" if white_wins else "0-1"


def game_rows(game_id: str, white: str, black: str, plies: list[Ply], final_board: chess.Board,
              final_value: float, termination: str, start: chess.Board | None = None) -> list[dict[str, str]]:
    """The CSSLab rows of a finished game played from ``start`` (default: the standard
    position): every ply's position, move and label, with the game's players and result
    and each move's loss in pawns and in win rate."""
    result = game_result(final_board, final_value)
    b = csslab.format_bool
    white_won, black_won = result == "1-0", result == "0-1"
    # value of every position from its mover's side, the final one included
    texts = [rel_text(a) for _, _, a in plies]
    rel_values = [csslab.eval_to_pawns(t) for t in texts] + [final_value]
    board = start.copy() if start is not None else chess.Board()
    rows = []
    for ply, (pos, move, _) in enumerate(plies):
        cp_rel = texts[ply]
        cp_white = cp_rel if board.turn == chess.WHITE else csslab.negate_eval(cp_rel)
        before, after = rel_values[ply], -rel_values[ply + 1]
        loss = max(0.0, before - after)
        wr_before, wr_after = csslab.winrate(before), csslab.winrate(after)
        wr_loss = max(0.0, wr_before - wr_after)
        active_won = white_won if board.turn == chess.WHITE else black_won
        row = {
            "game_id": game_id, "type": "Generated", "result": result,
            "white_player": white, "black_player": black, "time_control": "-",
            "num_ply": str(len(plies)), "termination": termination,
            "white_won": b(white_won), "black_won": b(black_won),
            "no_winner": b(not (white_won or black_won)),
            "move_ply": str(ply), "move": move.uci(), "cp": cp_white, "cp_rel": cp_rel,
            "cp_loss": csslab.format_pawns(loss), "is_blunder_cp": b(loss >= csslab.BLUNDER_CP_PAWNS),
            "winrate": f"{wr_before:.4f}", "winrate_loss": f"{wr_loss:.4f}",
            "is_blunder_wr": b(wr_loss >= csslab.BLUNDER_WINRATE),
            "opp_winrate": f"{1.0 - wr_before:.4f}", "active_won": b(active_won),
            "is_capture": b(board.is_capture(move)),
            **pos,
        }
        rows.append(row)
        board.push(move)
    return rows


# -- parts, workers, resume ---------------------------------------------------------
_ENGINE: Stockfish | None = None


def _worker_init(path: str, hash_mb: int) -> None:
    global _ENGINE  # noqa: PLW0603 - one engine per worker process, made by the pool's initializer
    # Ctrl-C signals the whole process group. Only the parent may act on it: a worker that dies of
    # it inside the task queue's lock leaves Pool.terminate() waiting while replacements play on
    # (seen with 16 workers). Stockfish, started below, inherits the ignored SIGINT; it ends when
    # its worker does (end of input). A part cut short stays a .tmp file, played again next run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # terminate() ends a worker, whatever the parent's handler
    _ENGINE = Stockfish(path, threads=1, hash_mb=hash_mb)


@contextmanager
def _labelling_pool(workers: int, path: str, hash_mb: int) -> Iterator[Pool]:
    """The workers' pool. SIGTERM and SIGHUP stop the parent as Ctrl-C does, and the pool is ended
    with SIGINT ignored, so that a second Ctrl-C cannot leave workers playing on."""
    pool = mp.get_context("fork").Pool(workers, initializer=_worker_init, initargs=(path, hash_mb))
    try:
        with exit_on_termination(as_interrupt=True):
            yield pool
    finally:
        main = threading.current_thread() is threading.main_thread()
        intr = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            pool.terminate()
            pool.join()
        finally:
            if main:
                signal.signal(signal.SIGINT, intr if intr is not None else signal.default_int_handler)


def _play_part(args: tuple[Recipe, int, str]) -> tuple[int, int]:
    recipe, part, parts_dir = args
    assert _ENGINE is not None
    start = part * recipe.games_per_part
    target = Path(parts_dir) / PART_NAME.format(part)
    tmp = target.with_suffix(".csv.tmp")
    n = 0
    with open(tmp, "w", newline="") as fh:
        writer = csslab.RowWriter(fh, header=False)
        for g in range(start, start + recipe.games_per_part):
            n += writer.write_all(play_labelled_game(_ENGINE, recipe, g))
    os.replace(tmp, target)
    return part, n


@dataclass
class GenerateReport:
    out: Path
    rows: int
    games: int
    duplicates_dropped: int
    seconds: float
    parts_reused: int
    workers: int
    stockfish: str
    shard: Shard | None = None
    parts: int = 0

    def summary(self) -> str:
        rate = self.rows / self.seconds if self.seconds > 0 else float("nan")
        how = (f"in {self.seconds:,.0f} s with {self.workers} workers ({rate:,.0f} positions/s; "
               f"{self.parts_reused} parts reused; {self.stockfish})")
        if self.shard is not None:
            return (f"{parts_folder(self.out)}: shard {self.shard}: {self.rows:,} positions in {self.parts} parts "
                    f"({self.games:,} games) {how}; when every shard is done: knights data merge --out {self.out}")
        return (f"{self.out}: {self.rows:,} positions from {self.games:,} games "
                f"({self.duplicates_dropped:,} duplicates dropped) {how}")


def generate(out: str | Path, positions: int, recipe: Recipe = Recipe(), *, workers: int = 1,
             dedup: bool = False, progress: bool = True, stockfish_path: str | None = None,
             shard: Shard | None = None, until_part: int = -1) -> GenerateReport:
    """Write a CSSLab CSV of at least ``positions`` labelled rows to ``out``.

    With ``shard`` (K of N), play only that shard's parts into ``<out>.parts/``, until
    they hold their share of ``positions`` (plus :data:`~knights.data.shards.SHARD_MARGIN`)
    and every one numbered up to ``until_part``, and write no CSV: once every shard is
    done, :func:`knights.data.shards.merge` writes it (see :mod:`knights.data.shards`).
    """
    from tqdm import tqdm

    if positions < 1:
        raise ValueError(f"positions must be at least 1, not {positions}")
    if until_part >= 0 and shard is None:
        raise ValueError("until_part (--until-part) plays further parts of one shard: give the shard (--shard K/N)")
    share = Share(Shard(1, 1), positions) if shard is None else Share(shard, shard.target(positions), until_part)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = stockfish_path or find_stockfish()
    with Stockfish(path) as probe:
        sf_name = probe.name
    parts_dir = parts_folder(out)
    parts_dir.mkdir(exist_ok=True)
    key = recipe.key(sf_name)
    meta = parts_dir / RECIPE_FILE
    if meta.exists() and json.loads(meta.read_text()) != key:
        raise RuntimeError(f"{parts_dir} holds parts of another recipe ({meta}); remove it or use another --out")
    if not meta.exists():
        write_json(meta, key)

    t0 = time.perf_counter()
    done = {number: count_rows(p) for number, p in scan_parts(parts_dir).items()}
    reused = sum(1 for p in done if share.shard.owns(p))
    if shard is not None:
        write_marker(parts_dir, share, positions, done, finished=False)

    bar = tqdm(total=share.target, unit="pos", desc="generate" if shard is None else f"shard {shard}",
               disable=not progress, smoothing=0.05)
    bar.update(min(share.target, share.held(done)[1]))
    if not share.complete(done):
        with _labelling_pool(workers, path, recipe.hash_mb) as pool:
            while not share.complete(done):
                # Queue a bounded batch of the next missing parts (Pool consumes its whole
                # task list at once), sized from the rows per part seen so far.
                per_part = (sum(done.values()) / len(done)) if done else 2000.0
                batch = max(workers, int(share.missing_rows(done) / max(per_part, 1.0) * 1.1) + 1)
                todo = [(recipe, part, str(parts_dir)) for part in share.next_parts(done, batch)]
                for part, n in pool.imap_unordered(_play_part, todo):
                    done[part] = n
                    bar.update(n)
                    if share.complete(done):
                        break
    bar.close()
    if shard is not None:
        write_marker(parts_dir, share, positions, done, finished=True)
        own = [p for p in done if shard.owns(p)]
        return GenerateReport(out, sum(done[p] for p in own), len(own) * recipe.games_per_part, 0,
                              time.perf_counter() - t0, reused, workers, sf_name, shard, len(own))
    rows, games, dropped = assemble(scan_parts(parts_dir), out, positions, dedup)
    return GenerateReport(out, rows, games, dropped, time.perf_counter() - t0, reused, workers, sf_name)
