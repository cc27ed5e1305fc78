"""The independent test sets, built: games of other players, their tactics, and endgames.

``python -m knights.lab.arena.testsets`` (or ``knights data independent``) writes three sets
to ``data/independent/`` with :mod:`knights.data.independent` (labelling, de-duplication,
resumable parts, the sidecars):

============  ==========================================================================
``games``     positions sampled from games between players of kinds the training
              generator never uses (below), from ply :data:`MIN_PLY` on
``tactics``   positions of the same games right before a capture or a check (the move
              played there captures or checks), none of them also in ``games``
``endgames``  random legal placements of few pieces
              (:class:`knights.data.independent.EndgameSource`)
============  ==========================================================================

The games (:class:`GamesSource`)
--------------------------------
The training data is made by Stockfish at depth 8 playing its best move or, with a small
probability, a uniformly random one, against greedy and random movers, after 0-6 random
plies. Here each side is drawn from :data:`PLAYERS`, none of which plays that way:

* ``sf-soft:n<N>:t<T>``: Stockfish searching ``N`` nodes with four principal variations,
  choosing among them at random with probability proportional to ``exp(score / T)``
  (``T`` in pawns): plausible moves, not random ones (:class:`SoftmaxStockfish`);
* ``ab1``, ``ab2``, ``ab3``: material alpha-beta with a capture search
  (our search over material, :func:`knights.engine.build.build`; the committed sets were played
  by an earlier material alpha-beta of the arena's, since folded into the one search);
* ``oneply-material``: the project's one-ply engine over counting material, with its
  stochastic opening (:class:`~knights.engine.one_ply.OnePlyEngine`).

Every game opens with a line of :data:`BOOK` (named openings, none random), and ends by
the rules, by material adjudication, or at :data:`MAX_PLIES`. Positions are sampled from
ply :data:`MIN_PLY` on, where the training generator's random openings are long behind.
Game ``i`` is a function of ``(seed, i)``: its players, their seeds and the opening come
from its own random stream, Stockfish searches by nodes with one thread from a cleared
hash, so the same seed gives the same games.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import chess

from knights.common import module_main, write_json
from knights.data import independent
from knights.data.independent import Candidate, EndgameSource, Source
from knights.data.stockfish import find_stockfish
from knights.lab.arena.game import Settings, play_game
from knights.lab.arena.openings import Opening
from knights.lab.arena.players import EnginePlayer, Player

MIN_PLY = 20
"""Positions are sampled from this ply on (the training generator's random opening is
at most 6 plies; ten moves later its games and ours have parted)."""
MAX_PLIES = 220
"""A game still going at this many plies is drawn."""
SETTINGS = Settings(max_plies=MAX_PLIES, adjudicate_cp=1000, adjudicate_plies=30, claim_next_move=True)
"""How a game ends: the rules, a side a queen and a pawn ahead for 30 plies, or MAX_PLIES. The committed
sets were played with a draw the side to move could claim by its next move ending the game (the arena's
rule then), so that stays (the recipe, and so the parts' key, is the one the sets were made with)."""
SET_ORDER = ("games", "tactics", "endgames")
"""Build order: each set is de-duplicated against the sets before it."""

BOOK: tuple[Opening, ...] = tuple(Opening(name, tuple(moves.split())) for name, moves in (
    ("Polish", "b4 e5 Bb2 Bxb4 Bxe5 Nf6"),
    ("Bird", "f4 d5 Nf3 g6 e3 Bg7"),
    ("English, Anglo-Dutch", "c4 f5 Nc3 Nf6 g3 e6"),
    ("Trompowsky", "d4 Nf6 Bg5 Ne4 Bf4 c5"),
    ("Benko Gambit", "d4 Nf6 c4 c5 d5 b5 cxb5 a6"),
    ("Dutch, Leningrad", "d4 f5 g3 Nf6 Bg2 g6 Nf3 Bg7"),
    ("Scandinavian, Modern", "e4 d5 exd5 Nf6 d4 Nxd5"),
    ("Alekhine", "e4 Nf6 e5 Nd5 d4 d6 Nf3"),
    ("Modern", "e4 g6 d4 Bg7 Nc3 d6"),
    ("Caro-Kann, Two Knights", "e4 c6 Nc3 d5 Nf3 Bg4"),
    ("Smith-Morra Gambit", "e4 c5 d4 cxd4 c3 dxc3 Nxc3"),
    ("Sicilian, Alapin", "e4 c5 c3 Nf6 e5 Nd5"),
    ("Sicilian, Sveshnikov", "e4 c5 Nf3 Nc6 d4 cxd4 Nxd4 Nf6 Nc3 e5"),
    ("Sicilian, Najdorf", "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6"),
    ("French, Advance", "e4 e6 d4 d5 e5 c5 c3 Nc6"),
    ("Danish Gambit", "e4 e5 d4 exd4 c3 dxc3 Bc4"),
    ("King's Gambit", "e4 e5 f4 exf4 Nf3 g5"),
    ("Philidor", "e4 e5 Nf3 d6 d4 Nf6 Nc3"),
    ("Ponziani", "e4 e5 Nf3 Nc6 c3 Nf6 d4"),
    ("Four Knights, Scotch", "e4 e5 Nf3 Nc6 Nc3 Nf6 d4 exd4"),
    ("Two Knights", "e4 e5 Nf3 Nc6 Bc4 Nf6 Ng5 d5 exd5"),
    ("Ruy Lopez, Berlin", "e4 e5 Nf3 Nc6 Bb5 Nf6 O-O Nxe4"),
    ("Blackmar-Diemer Gambit", "d4 d5 e4 dxe4 Nc3 Nf6 f3"),
    ("Albin Countergambit", "d4 d5 c4 e5 dxe5 d4"),
    ("Semi-Slav", "d4 d5 c4 c6 Nf3 Nf6 Nc3 e6"),
    ("King's Indian, Fianchetto", "d4 Nf6 c4 g6 g3 Bg7 Bg2 O-O"),
    ("King's Indian Attack", "Nf3 d5 g3 c5 Bg2 Nc6 O-O e6 d3"),
    ("Pirc, Austrian", "e4 d6 d4 Nf6 Nc3 g6 f4 Bg7"),
    ("Jobava London", "d4 d5 Nc3 Nf6 Bf4 e6"),
    ("Vienna", "e4 e5 Nc3 Nf6 f4 d5"),
))
"""Thirty named opening lines (3-5 moves), other than the arena's match book."""

PLAYERS: tuple[tuple[str, float], ...] = (
    ("sf-soft:n50:t1.5", 1.0), ("sf-soft:n200:t1.0", 2.0), ("sf-soft:n1000:t0.5", 2.5),
    ("sf-soft:n5000:t0.25", 2.0), ("ab1", 1.0), ("ab2", 2.0), ("ab3", 1.5), ("oneply-material", 1.5),
)
"""Player specs and their relative frequencies (each side drawn independently)."""


class SoftmaxStockfish:
    """Stockfish (one thread) searching ``nodes`` nodes with ``multipv`` lines, choosing a
    line with probability proportional to ``exp(score / temperature)`` (pawns, mates as
    +-100): a strong or weak player by ``nodes``, a sharp or loose one by ``temperature``."""

    def __init__(self, nodes: int, temperature: float, seed: int, *, multipv: int = 4,
                 path: str | None = None, name: str | None = None) -> None:
        import chess.engine

        self.nodes, self.temperature, self.multipv = nodes, temperature, multipv
        self.name = name or f"sf-soft:n{nodes}:t{temperature:g}"
        self.rng = random.Random(seed)
        self._engine = chess.engine.SimpleEngine.popen_uci(path or find_stockfish())
        self._engine.configure({"Threads": 1, "Hash": 16})
        self._game = object()

    def new_game(self) -> None:
        self._game = object()   # a new key: python-chess sends ucinewgame, which clears the hash

    def choose_move(self, board: chess.Board) -> chess.Move:
        import chess.engine

        infos = self._engine.analyse(board, chess.engine.Limit(nodes=self.nodes), multipv=self.multipv,
                                     game=self._game)
        lines = [(info["pv"][0], info["score"].relative.score(mate_score=10_000)) for info in infos
                 if info.get("pv") and "score" in info]
        if not lines:
            raise RuntimeError(f"{self.name} found no move in {board.fen()}")
        best = max(score for _, score in lines)
        weights = [math.exp((score - best) / 100.0 / self.temperature) for _, score in lines]
        return self.rng.choices([move for move, _ in lines], weights)[0]

    def close(self) -> None:
        self._engine.quit()


def make_player(spec: str, seed: int, stockfish_path: str | None = None) -> Player:
    """A fresh player of :data:`PLAYERS` seeded with ``seed``."""
    if spec.startswith("sf-soft:"):
        _, nodes, temp = spec.split(":")
        return SoftmaxStockfish(int(nodes[1:]), float(temp[1:]), seed, path=stockfish_path, name=spec)
    if spec.startswith("ab"):
        from knights.engine.build import build
        from knights.engine.spec import parse

        return EnginePlayer(build(parse(spec, seed=seed)), spec)
    if spec == "oneply-material":
        from knights.engine.one_ply import OnePlyEngine
        from knights.evaluate.base import MaterialEvaluator

        return EnginePlayer(OnePlyEngine(MaterialEvaluator(), stochastic=True, seed=seed, mate_guard=False), spec)
    raise ValueError(f"unknown test-set player {spec!r}")


def gives_tactic(board: chess.Board, move: chess.Move) -> bool:
    """Whether ``move`` captures (en passant included) or gives check."""
    return board.is_capture(move) or board.gives_check(move)


@dataclass
class GamesSource:
    """Games of :data:`PLAYERS` from :data:`BOOK`; sets ``games`` and ``tactics``.

    From each game's plies at or after :data:`MIN_PLY`, a position goes to ``games`` with
    probability ``p_games``; otherwise, if the move played there captures or checks, to
    ``tactics`` with probability ``p_tactics``."""

    seed: int = 2025
    games_per_part: int = 4
    p_games: float = 0.08
    p_tactics: float = 0.35
    min_ply: int = MIN_PLY
    stockfish_path: str | None = None
    name: str = "games"

    @property
    def sets(self) -> tuple[str, ...]:
        return ("games", "tactics")

    def recipe(self) -> dict[str, object]:
        return {"generator": "games", "seed": self.seed, "games_per_part": self.games_per_part,
                "p_games": self.p_games, "p_tactics": self.p_tactics, "min_ply": self.min_ply,
                "players": dict(PLAYERS), "book": [o.name for o in BOOK],
                "settings": {"max_plies": SETTINGS.max_plies, "adjudicate_cp": SETTINGS.adjudicate_cp,
                             "adjudicate_plies": SETTINGS.adjudicate_plies}}

    def describe(self) -> str:
        players = ", ".join(p for p, _ in PLAYERS)
        return (f"games between players drawn from {players} (knights.lab.arena.testsets), each opening with one of "
                f"{len(BOOK)} named book lines; positions from ply {self.min_ply} on: 'games' takes each with "
                f"probability {self.p_games}, 'tactics' the others whose move played captures or checks with "
                f"probability {self.p_tactics}")

    def play(self, index: int) -> tuple[list[Candidate], str]:
        """Game ``index`` and the candidates drawn from it."""
        rng = random.Random(f"knights-independent-games-{self.seed}-{index}")
        specs, weights = [p for p, _ in PLAYERS], [w for _, w in PLAYERS]
        white_spec, black_spec = rng.choices(specs, weights, k=2)
        opening = rng.choice(BOOK)
        white = make_player(white_spec, rng.randrange(2**32), self.stockfish_path)
        black = make_player(black_spec, rng.randrange(2**32), self.stockfish_path)
        try:
            record = play_game(white, black, opening, SETTINGS)
        finally:
            white.close()
            black.close()
        game_id = f"ind{self.seed}-{index:06d}"
        common = {"game_id": game_id, "white_player": white_spec, "black_player": black_spec,
                  "result": record.result, "termination": record.termination, "num_ply": str(record.plies),
                  "time_control": "-"}
        out: list[Candidate] = []
        board = chess.Board()
        for ply, move in enumerate(record.board.move_stack):
            if ply >= self.min_ply:
                to = None
                if rng.random() < self.p_games:
                    to = "games"
                elif gives_tactic(board, move) and rng.random() < self.p_tactics:
                    to = "tactics"
                if to is not None:
                    out.append(Candidate(to, board.copy(stack=False), {
                        **common, "move_ply": str(ply), "move": move.uci(),
                        "is_capture": "True" if board.is_capture(move) else "False"}))
            board.push(move)
        return out, f"{white_spec} vs {black_spec} ({opening.name}): {record.result} in {record.plies} plies"

    def candidates(self, part: int) -> list[Candidate]:
        out: list[Candidate] = []
        for index in range(part * self.games_per_part, (part + 1) * self.games_per_part):
            out += self.play(index)[0]
        return out


class SkillStockfish:
    """Stockfish (one thread) at ``Skill Level`` ``level`` (0-20), ``nodes`` nodes a move: Stockfish's own
    weakening (it searches several lines and picks a weaker one at random; its random stream is seeded by
    the clock, so these games are not reproducible move for move: the final set is frozen by its checksum)."""

    def __init__(self, level: int, nodes: int, *, path: str | None = None) -> None:
        import chess.engine

        self.level, self.nodes = level, nodes
        self.name = f"sf-skill:{level}"
        self._engine = chess.engine.SimpleEngine.popen_uci(path or find_stockfish())
        self._engine.configure({"Threads": 1, "Hash": 16, "Skill Level": level})

    def new_game(self) -> None:
        pass

    def choose_move(self, board: chess.Board) -> chess.Move:
        import chess.engine

        move = self._engine.play(board, chess.engine.Limit(nodes=self.nodes)).move
        if move is None:
            raise RuntimeError(f"{self.name} found no move in {board.fen()}")
        return move

    def close(self) -> None:
        self._engine.quit()


@dataclass
class SkillGamesSource:
    """The final test set's generator: games between two Stockfish players at Skill Levels drawn
    independently and uniformly from 0-20, from the standard start (no book, no random plies: the
    skill's own choices vary the games); each position from ply ``min_ply`` on goes to the set
    with probability ``p_take``. No training or selection set was made this way."""

    seed: int = 4242
    games_per_part: int = 4
    p_take: float = 0.06
    min_ply: int = 16
    nodes: int = 10_000
    stockfish_path: str | None = None
    name: str = "final"

    @property
    def sets(self) -> tuple[str, ...]:
        return ("final",)

    def recipe(self) -> dict[str, object]:
        return {"generator": "stockfish-skill-games", "seed": self.seed, "games_per_part": self.games_per_part,
                "p_take": self.p_take, "min_ply": self.min_ply, "nodes": self.nodes, "skill_levels": [0, 20],
                "settings": {"max_plies": SETTINGS.max_plies, "adjudicate_cp": SETTINGS.adjudicate_cp,
                             "adjudicate_plies": SETTINGS.adjudicate_plies}}

    def describe(self) -> str:
        return (f"games between two Stockfish players at Skill Levels drawn uniformly from 0-20 ({self.nodes:,} "
                f"nodes a move), from the standard start; each position from ply {self.min_ply} on taken with "
                f"probability {self.p_take}")

    def candidates(self, part: int) -> list[Candidate]:
        out: list[Candidate] = []
        for index in range(part * self.games_per_part, (part + 1) * self.games_per_part):
            rng = random.Random(f"knights-final-games-{self.seed}-{index}")
            levels = rng.randint(0, 20), rng.randint(0, 20)
            white = SkillStockfish(levels[0], self.nodes, path=self.stockfish_path)
            black = SkillStockfish(levels[1], self.nodes, path=self.stockfish_path)
            try:
                record = play_game(white, black, None, SETTINGS)
            finally:
                white.close()
                black.close()
            common = {"game_id": f"fin{self.seed}-{index:06d}", "white_player": white.name,
                      "black_player": black.name, "result": record.result, "termination": record.termination,
                      "num_ply": str(record.plies), "time_control": "-"}
            board = chess.Board()
            for ply, move in enumerate(record.board.move_stack):
                if ply >= self.min_ply and rng.random() < self.p_take:
                    out.append(Candidate("final", board.copy(stack=False), {
                        **common, "move_ply": str(ply), "move": move.uci(),
                        "is_capture": "True" if board.is_capture(move) else "False"}))
                board.push(move)
        return out


FINAL_DIR = "data/final"
"""The final test set (committed, frozen by its checksum):
read only by :mod:`knights.evaluate.final`, for the democracy study's final step (``make democracy``)."""


def build_final(rows: int = 5000, *, depth: int = independent.DEPTH, seed: int = 4242, progress: bool = True,
                work_dir: str | Path = independent.WORK_DIR) -> list[Path]:
    """Build the final test set: :class:`SkillGamesSource`, de-duplicated against the training data, the
    positions near the start and every selection set (``data/independent``)."""
    training = independent.training_keys(independent.TRAINING_SOURCES, progress=progress)
    start = independent.start_keys(independent.START_PLIES)
    before = earlier_keys(list(SET_ORDER), independent.OUT_DIR)
    source = SkillGamesSource(seed=seed)
    report = independent.build_source(source, {"final": rows}, depth=depth, training=training, start=start,
                                      earlier=before, work_dir=work_dir, progress=progress)
    csv_path, json_path = independent.write_set(
        "final", report, source, depth=depth, training=training, stockfish=independent.stockfish_name(),
        out_dir=FINAL_DIR, command=f"knights data final --rows {rows} --depth {depth} --seed {seed}")
    freeze(csv_path, json_path)
    return [csv_path, json_path]


def freeze(csv_path: Path, json_path: Path) -> str:
    """Record the final set's checksum in its sidecar (``sha256``): its one reader refuses a set that differs."""
    import hashlib

    digest = hashlib.sha256(csv_path.read_bytes()).hexdigest()
    side = json.loads(json_path.read_text())
    write_json(json_path, {**side, "sha256": digest})
    return digest


# -- building ----------------------------------------------------------------------------------
def earlier_keys(names: list[str], out_dir: str | Path) -> dict[str, set[str]]:
    """Keys of the finished sets ``names`` in ``out_dir`` (those that exist)."""
    out: dict[str, set[str]] = {}
    folder = independent.repo_path(out_dir)
    for name in names:
        path = folder / f"{name}.csv"
        if path.exists():
            out[name] = {k for k in map(independent.fen_key, independent.fens_of(path)) if k is not None}
    return out


def build(sets: list[str], rows: int, *, depth: int = independent.DEPTH, seed: int = 2025,
          out_dir: str | Path = independent.OUT_DIR, work_dir: str | Path = independent.WORK_DIR,
          training_sources: tuple[str, ...] = independent.TRAINING_SOURCES, stockfish_path: str | None = None,
          progress: bool = True, command: str = "", games_per_part: int = 4,
          endgames_per_part: int = 100, start_plies: int = independent.START_PLIES) -> list[Path]:
    """Build ``sets`` (of :data:`SET_ORDER`) with ``rows`` rows each; returns the files written.
    ``training_sources``: the training data to de-duplicate against (paths relative to the
    repository, or absolute); ``start_plies``: how far from the start positions are dropped."""
    unknown = set(sets) - set(SET_ORDER)
    if unknown:
        raise ValueError(f"unknown sets {sorted(unknown)}: choose from {', '.join(SET_ORDER)}")
    t0 = time.perf_counter()
    training = independent.training_keys(training_sources, progress=progress)
    start = independent.start_keys(start_plies)
    sf_name = independent.stockfish_name(stockfish_path)
    if progress:
        print(f"training data: {training.describe()}; {len(start):,} positions near the start; {sf_name}; "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    sources: list[Source] = []
    if {"games", "tactics"} & set(sets):
        sources.append(GamesSource(seed=seed, games_per_part=games_per_part, stockfish_path=stockfish_path))
    if "endgames" in sets:
        sources.append(EndgameSource(seed=seed, per_part=endgames_per_part))
    written: list[Path] = []
    for source in sources:
        wanted = [s for s in source.sets if s in sets]
        first = min(SET_ORDER.index(s) for s in source.sets)
        before = earlier_keys(list(SET_ORDER[:first]), out_dir)
        report = independent.build_source(source, {s: rows for s in source.sets}, depth=depth, training=training,
                                          start=start, earlier=before, work_dir=work_dir,
                                          stockfish_path=stockfish_path, progress=progress)
        for name in wanted:
            written += independent.write_set(name, report, source, depth=depth, training=training,
                                             stockfish=sf_name, out_dir=out_dir, command=command)
            if progress:
                tally = report.sets[name]
                print(f"{name}: {len(tally.rows):,} rows; dropped {dict(tally.dropped)}; "
                      f"generate {report.generate_s:.0f} s, label {report.label_s:.0f} s "
                      f"({report.parts} parts, {report.parts_reused} reused)", file=sys.stderr)
    return written


DESCRIPTION = ("Build the independent test sets (games of other players, their tactics, random endgames), "
               "labelled by Stockfish and de-duplicated against the training data, into data/independent/.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``knights data independent`` (the same as the module's own command line)."""
    p.add_argument("--sets", default=",".join(SET_ORDER), help=f"comma-separated, of {', '.join(SET_ORDER)}")
    p.add_argument("--rows", type=int, default=5000, help="rows per set (default 5000)")
    p.add_argument("--depth", type=int, default=independent.DEPTH, help="Stockfish labelling depth (default 12)")
    p.add_argument("--seed", type=int, default=2025)
    p.add_argument("--out", default=independent.OUT_DIR, help="folder of the finished sets")
    p.add_argument("--work", default=independent.WORK_DIR, help="folder of the resumable labelled parts")
    p.add_argument("--quiet", action="store_true")


def run(a: argparse.Namespace) -> int:
    """Build as the parsed options of :func:`add_arguments` say."""
    sets = [s.strip() for s in a.sets.split(",") if s.strip()]
    command = (f"python -m knights.lab.arena.testsets --sets {','.join(sets)} --rows {a.rows} --depth {a.depth} "
               f"--seed {a.seed}")
    for path in build(sets, a.rows, depth=a.depth, seed=a.seed, out_dir=a.out, work_dir=a.work,
                      progress=not a.quiet, command=command):
        print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return module_main("knights.lab.arena.testsets", DESCRIPTION, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
