"""Engine benchmarks (found by ``knights bench``): ``decision`` and ``soak``.

``decision``  time per move decision of :class:`~knights.engine.one_ply.OnePlyEngine`
              (deterministic) on real middlegame positions of the committed sample
              (``data/sample/Sample_*``: move 10 on, at least 18 pieces, 25-45 legal
              moves), one core (``torch.set_num_threads(1)``), against the
              original's per-move loop: a python-chess ``Board`` per candidate and
              one forward pass per candidate, same evaluator. Rows: ``decision``
              (network alone, ratio, target >= 8x), ``decision_ms`` (network alone,
              decisions/s, target >= 333.3/s, i.e. < 3 ms a decision; the ms are in
              the details) and ``decision_ens`` (the democracy ensemble, ratio;
              skipped when the ensemble is not shipped) and ``decision_judged`` (the
              one-ply bot's own evaluator, compiled networks judged where the captures end,
              against the democracy with the captures' material added, the same
              positions, decisions/s, target: not slower). Without trained weights the
              network is the default version's architecture, randomly initialised:
              the timing is the same, the moves are not meaningful. Each position is
              timed several times and its best time kept, ours and the loop
              alternating position by position; the loop is timed candidate by
              candidate (the same ~1 ms units as one batched decision), so a busy
              machine penalises both sides alike.
``soak``      whole games of the stochastic bot against a random mover and against
              itself (500 games, ``--quick`` 40), a move cap per game; every move is
              checked legal and every exception caught. The row reads clean games
              (no illegal move, no error) over games played: the target is all of them.
              The evaluator is what ``knights play --depth 1`` uses
              (:func:`knights.engine.build.select_play_evaluator`: ``sparse+quiesce``
              when its networks' weights exist, else the democracy, the newest trained EL
              version, material counting).
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import chess
import numpy as np

from knights.lab.bench.core import benchmark, make_result, make_skip
from knights.lab.results.timing import timed
from knights.learn import registry

SAMPLE_DIR = registry.REPO_ROOT / "data" / "sample"
MS_TARGET = 3.0
RATIO_TARGET = 8.0


# -- positions ---------------------------------------------------------------------------
def middlegame_positions(count: int, *, folder: Path = SAMPLE_DIR, min_moves: int = 25,
                         max_moves: int = 45) -> list[chess.Board]:
    """Up to ``count`` distinct middlegame positions of the committed sample chunks,
    spread evenly over them (deterministic)."""
    fens: list[str] = []
    for path in sorted(folder.glob("Sample_*")):
        with open(path, newline="") as fh:
            fens.extend(row["board"] for row in csv.DictReader(fh) if row.get("board"))
    if not fens:
        raise FileNotFoundError(f"no sample chunks with a 'board' column under {folder}")
    boards: list[chess.Board] = []
    seen: set[str] = set()
    stride = max(1, len(fens) // (count * 6))
    for fen in fens[::stride]:
        placement = fen.split(" ")[0]
        if placement in seen:
            continue
        board = chess.Board(fen)
        if board.fullmove_number < 10 or len(board.piece_map()) < 18:
            continue
        if min_moves <= board.legal_moves.count() <= max_moves:
            seen.add(placement)
            boards.append(board)
            if len(boards) == count:
                break
    return boards


# -- the original's per-move loop ---------------------------------------------------------------
def _loop_step(evaluator, board: chess.Board, move: chess.Move) -> float:
    """One candidate of the original's loop: a new Board, the move pushed, that one
    position encoded and evaluated alone."""
    from knights.board.positions import positions_from_boards

    child = board.copy()
    child.push(move)
    return float(evaluator.evaluate(positions_from_boards([child]))[0])


def per_move_loop(evaluator, board: chess.Board) -> chess.Move:
    """What the original did: :func:`_loop_step` for each legal move; White the max,
    Black the min."""
    best_move, best = None, None
    for move in board.legal_moves:
        value = _loop_step(evaluator, board, move)
        key = value if board.turn == chess.WHITE else -value
        if best is None or key > best:
            best_move, best = move, key
    assert best_move is not None
    return best_move


def _timed_loop(evaluator, board: chess.Board, repeats: int) -> tuple[float, chess.Move | None]:
    """Seconds of :func:`per_move_loop` on ``board`` timed candidate by candidate
    (best of ``repeats`` for each, summed: the same ~1 ms granularity as one batched
    decision, so a busy machine penalises both sides alike), and its move (None when
    there is none)."""
    total, best_move, best = 0.0, None, None
    for move in board.legal_moves:
        fastest, value = timed(partial(_loop_step, evaluator, board, move), repeats)
        total += fastest
        key = value if board.turn == chess.WHITE else -value
        if best is None or key > best:
            best_move, best = move, key
    return total, best_move


def network_evaluator_for_timing():
    """The default network with its weights, or its architecture untrained (timing only)."""
    from knights.evaluate.base import NetworkEvaluator
    from knights.evaluate.load import load_evaluator
    from knights.evaluate.names import DEFAULT_NETWORK

    version = registry.get(DEFAULT_NETWORK)
    if version.is_trained():
        return load_evaluator(DEFAULT_NETWORK), True
    model = version.build().eval()
    return NetworkEvaluator(model, version.library.INPUTS, f"{version.name} (untrained)"), False


def _best_time(fn: Callable[[chess.Board], chess.Move], board: chess.Board,
               repeats: int) -> tuple[float, chess.Move | None]:
    return timed(lambda: fn(board), repeats)


def _time_pair(ours: Callable[[chess.Board], chess.Move],
               base: Callable[[chess.Board, int], tuple[float, chess.Move | None]],
               boards: Sequence[chess.Board], base_boards: Sequence[chess.Board],
               repeats: int) -> tuple[float, float, list, list]:
    """Mean seconds per decision of ``ours`` and ``base``: each position timed
    ``repeats`` times and its best time kept (a busy machine only ever adds time),
    ours and the baseline alternating position by position so both meet the same
    machine load."""
    ours(boards[0]), base(boards[0], 1)  # warm-up
    t_ours, t_base, out_ours, out_base = [], [], [], []
    for i, board in enumerate(boards):
        if i < len(base_boards):
            t, move = base(base_boards[i], repeats)
            t_base.append(t)
            out_base.append(move)
        t, move = _best_time(ours, board, repeats)
        t_ours.append(t)
        out_ours.append(move)
    return float(np.mean(t_ours)), float(np.mean(t_base)), out_ours, out_base


def _decision_rows(evaluator, label: str, boards: Sequence[chess.Board], base_boards: Sequence[chess.Board],
                   repeats: int, *, with_ms_row: bool, trained: bool) -> list[dict]:
    from knights.engine.one_ply import OnePlyEngine

    engine = OnePlyEngine(evaluator, stochastic=False)
    seconds, base_seconds, ours_moves, base_moves = _time_pair(
        lambda b: engine.choose(b).move, lambda b, r: _timed_loop(evaluator, b, r), boards, base_boards, repeats)
    ms, base_ms = seconds * 1e3, base_seconds * 1e3
    same = np.mean([a == b for a, b in zip(ours_moves, base_moves, strict=False)])
    details = {"evaluator": evaluator.name, "trained_weights": trained, "positions": len(boards),
               "baseline_positions": len(base_boards), "ms_per_decision": round(ms, 3),
               "baseline_ms_per_decision": round(base_ms, 3), "ratio": round(base_ms / ms, 2),
               "ms_target": MS_TARGET, "ms_target_met": bool(ms < MS_TARGET),
               "legal_moves_mean": round(float(np.mean([b.legal_moves.count() for b in boards])), 1),
               "same_move_as_baseline": round(float(same), 3), "repeats_per_position": repeats,
               "timing": "mean over positions of the best of the repeats", "threads": 1}
    baseline = "per-move loop: a python-chess Board and one forward pass per candidate"
    rows = [make_result(label, 1e3 / ms, 1e3 / base_ms, target=RATIO_TARGET, unit="decisions/s",
                        baseline=baseline, details=details)]
    if with_ms_row:
        rows.append(make_result(f"{label}_ms", 1e3 / ms, 1e3 / base_ms, target=1e3 / MS_TARGET, metric="rate",
                                unit="decisions/s", baseline=baseline, details=details))
    return rows


@benchmark("decision")
def bench_decision(quick: bool) -> list[dict]:
    """Time per move decision, batched engine against the per-move loop (one core)."""
    import torch

    from knights.evaluate.load import load_evaluator
    from knights.evaluate.names import available_evaluators

    boards = middlegame_positions(60 if quick else 300)
    base_boards = boards[: 15 if quick else 60]
    repeats = 3 if quick else 5
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        network, trained = network_evaluator_for_timing()
        rows = _decision_rows(network, "decision", boards, base_boards, repeats, with_ms_row=True,
                              trained=trained)
        if "democracy" in available_evaluators():
            rows += _decision_rows(load_evaluator("democracy"), "decision_ens", boards, base_boards, repeats,
                                   with_ms_row=False, trained=True)
        else:
            rows.append(make_skip("decision_ens", "the democracy ensemble is not shipped yet "
                                  "(knights/evaluate/democracy.py and its trained learners)",
                                  target=RATIO_TARGET, unit="decisions/s"))
        rows.append(_judged_decision_row(base_boards, repeats))
    finally:
        torch.set_num_threads(threads)
    return rows


def _judged_decision_row(boards: Sequence[chess.Board], repeats: int) -> dict:
    """The one-ply bot's decision (:data:`~knights.engine.spec.ONE_PLY_EVALUATOR`: compiled networks judged
    where the captures end) against the democracy's with the captures' material added, on the same positions,
    alternating."""
    from knights.engine.build import available
    from knights.engine.build import evaluator as play_evaluator
    from knights.engine.one_ply import OnePlyEngine
    from knights.engine.spec import ONE_PLY_EVALUATOR
    from knights.evaluate.load import load_evaluator
    from knights.evaluate.names import DEFAULT_EVALUATOR, available_evaluators

    if ONE_PLY_EVALUATOR not in available() or DEFAULT_EVALUATOR not in available_evaluators():
        return make_skip("decision_judged", f"{ONE_PLY_EVALUATOR} or {DEFAULT_EVALUATOR} is not trained here",
                         target=1.0, unit="decisions/s")
    judged = OnePlyEngine(play_evaluator(ONE_PLY_EVALUATOR), stochastic=False)
    democracy = OnePlyEngine(load_evaluator(DEFAULT_EVALUATOR), stochastic=False)

    def base(board: chess.Board, r: int) -> tuple[float, chess.Move | None]:
        return timed(lambda: democracy.choose(board).move, r)

    seconds, base_seconds, ours_moves, base_moves = _time_pair(lambda b: judged.choose(b).move, base, boards, boards,
                                                               repeats)
    same = np.mean([a == b for a, b in zip(ours_moves, base_moves, strict=False)])
    details = {"evaluator": ONE_PLY_EVALUATOR, "baseline_evaluator": DEFAULT_EVALUATOR, "positions": len(boards),
               "ms_per_decision": round(seconds * 1e3, 3), "baseline_ms_per_decision": round(base_seconds * 1e3, 3),
               "same_move_as_baseline": round(float(same), 3), "repeats_per_position": repeats,
               "timing": "mean over positions of the best of the repeats", "threads": 1}
    return make_result("decision_judged", 1 / seconds, 1 / base_seconds, target=1.0, unit="decisions/s",
                       baseline=f"the one-ply decision of {DEFAULT_EVALUATOR}, the same positions", details=details)


# -- soak ---------------------------------------------------------------------------------------
def soak(games: int, *, evaluator=None, max_plies: int = 300, seed: int = 0) -> dict:
    """``games`` whole games, half against a random mover (the bot's colour
    alternating), half against itself, by the engine's rules (no material
    adjudication, draws claimed once on the board); counts of illegal moves and
    errors. A game still running at ``max_plies`` counts as capped (``unfinished`` /
    ``*``), not as a draw."""
    from knights.engine.build import evaluator as play_evaluator
    from knights.engine.build import resolve
    from knights.engine.one_ply import OnePlyEngine
    from knights.engine.spec import BotSpec
    from knights.lab.arena.game import FORFEIT_ERROR, MAX_PLIES, Settings, play_game
    from knights.lab.arena.players import EnginePlayer, RandomPlayer

    evaluator = evaluator or play_evaluator(str(resolve(BotSpec(depth=1)).evaluator))   # the one-ply bot's own
    settings = Settings(max_plies=max_plies, adjudicate_cp=None, claim_next_move=False)
    n_random = games // 2
    played = plies = illegal = errors = capped_games = 0
    vs_random = {"win": 0, "draw": 0, "loss": 0, "unfinished": 0}
    self_play = {"1-0": 0, "0-1": 0, "1/2-1/2": 0, "*": 0}
    problems: list[str] = []
    t0 = time.perf_counter()
    for g in range(games):
        bot = EnginePlayer(OnePlyEngine(evaluator, stochastic=True, seed=seed + g), name="bot")
        if g < n_random:
            rnd = RandomPlayer(seed=seed + 10_000 + g)
            bot_white = g % 2 == 0
            white, black = (bot, rnd) if bot_white else (rnd, bot)
        else:
            white = bot
            black = EnginePlayer(OnePlyEngine(evaluator, stochastic=True, seed=seed + 20_000 + g), name="bot2")
        record = play_game(white, black, settings=settings)
        capped = record.termination == MAX_PLIES
        played += 1
        plies += record.plies
        capped_games += capped
        illegal += record.illegal
        errors += record.termination == FORFEIT_ERROR
        if record.error and len(problems) < 5:
            problems.append(record.error)
        result = "*" if capped else record.result
        if g < n_random:
            if result == "*":
                vs_random["unfinished"] += 1
            elif result == "1/2-1/2":
                vs_random["draw"] += 1
            else:
                won = (result == "1-0") == bot_white
                vs_random["win" if won else "loss"] += 1
        else:
            self_play[result] += 1
    return {"games": played, "plies": plies, "illegal": illegal, "errors": errors, "capped": capped_games,
            "vs_random": vs_random, "self_play": self_play, "problems": problems,
            "seconds": round(time.perf_counter() - t0, 2), "evaluator": evaluator.name, "max_plies": max_plies}


@benchmark("soak")
def bench_soak(quick: bool) -> list[dict]:
    """Whole games against a random mover and against itself: no illegal move, no error."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tally = soak(40 if quick else 500, max_plies=200 if quick else 300)
    finally:
        torch.set_num_threads(threads)
    clean = tally["games"] - tally["illegal"] - tally["errors"]
    details = {k: v for k, v in tally.items()}
    details["ms_per_ply"] = round(tally["seconds"] / max(1, tally["plies"]) * 1e3, 3)
    return [make_result("soak", float(clean), float(tally["games"]), target=1.0, unit="games",
                        baseline="games played; ours = clean games (no illegal move, no error)",
                        details=details)]
