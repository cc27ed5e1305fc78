"""The engine worker: every decision runs here, in order, away from the protocol's reading and clock.

``knights uci`` must answer in time while torch imports and a model loads (a load can hold
the interpreter lock for half a second), so the protocol process (:mod:`~knights.play.uci`)
does neither: :class:`EngineLink` posts requests ``(id, op, args)`` down a pipe to an
:class:`EngineWorker` in a separate engine process (:func:`engine_main`, spawned after
``uciok``), which answers ``(id, kind, payload)`` in order and sends notices as ``(0,
"info", text)``. A program that has the evaluators loaded already (lichess-bot's homemade
engine, a test) runs the same worker on a thread instead, sharing them.

The worker measures what a decision costs (when the model loads, then on every move); the
link keeps the median of the last :data:`COST_WINDOW`, which the protocol compares with
the time a move may take (:func:`knights.play.clock.move_budget`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import chess

if TYPE_CHECKING:
    from knights.play.engine import OnePlyEngine

COST_WINDOW = 7          # decisions whose median is the cost estimate


class EngineWorker:
    """The child process's side: torch, the model and every decision live here, so that a
    long import or model load (which can hold the interpreter lock for half a second) never
    stops the protocol process from answering in time. Requests ``(id, op, args)`` are
    answered ``(id, kind, payload)`` in order; notices go out as ``(0, "info", text)``."""

    def __init__(self, conn: Connection, evaluator: str | None, seed: int | None, stochastic: bool,
                 own_process: bool = True) -> None:
        self.conn = conn
        self.own_process = own_process
        self.evaluator_name = evaluator
        self.seed = seed
        self.stochastic = stochastic
        self.capture_bonus = 0.0
        self.engine: OnePlyEngine | None = None
        self._loaded_name: str | None = None
        self.cost: float | None = None

    def info(self, text: str) -> None:
        self.conn.send((0, "info", text))

    def run(self) -> None:
        while True:
            try:
                rid, op, args = self.conn.recv()
            except (EOFError, OSError):
                return
            try:
                kind, payload = getattr(self, "op_" + op)(*args)
            except Exception as exc:  # noqa: BLE001 - reported to the protocol process
                kind, payload = "error", f"{type(exc).__name__}: {exc}"
            try:
                self.conn.send((rid, kind, payload))
            except OSError:   # the protocol process has gone (quit): nothing to answer
                return

    def op_ping(self) -> tuple[str, Any]:
        return "ok", None

    def op_warm(self) -> tuple[str, Any]:
        import torch

        if self.own_process:
            torch.set_num_threads(1)   # one ply of ~35 positions: a second thread only adds overhead
        import knights.evaluate.names
        import knights.play.engine  # noqa: F401
        return "ok", None

    def op_evaluator(self, value: str) -> tuple[str, Any]:
        from knights.evaluate.names import EvaluatorError, resolve_name

        try:
            self.evaluator_name = resolve_name(value)   # loaded at the next isready / go
        except EvaluatorError as exc:
            self.info(str(exc))
        return "ok", None

    def op_set(self, name: str, value: Any) -> tuple[str, Any]:
        setattr(self, name, value)
        if self.engine is not None:
            if name == "seed":
                self.engine.reseed(value)
            else:
                setattr(self.engine, name, value)
        return "ok", None

    def op_state(self) -> tuple[str, Any]:
        engine = self.engine
        return "state", {"evaluator": self.evaluator_name, "engine": engine.name if engine else None,
                         "stochastic": engine.stochastic if engine else self.stochastic,
                         "seed": engine.seed if engine else self.seed,
                         "capture_bonus": engine.capture_bonus if engine else self.capture_bonus}

    def op_load(self) -> tuple[str, Any]:
        self.ensure_engine()
        return "loaded", self.cost

    def op_decide(self, fen: str, moves: list[str], searchmoves: list[str], deadline: float | None
                  ) -> tuple[str, Any]:
        if deadline is not None and time.monotonic() > deadline:
            return "expired", None     # the protocol process has answered already
        engine = self.ensure_engine()
        board = chess.Board(fen)
        for move in moves:
            board.push_uci(move)
        started = time.perf_counter()
        decision = engine.choose(board, root_moves=[chess.Move.from_uci(m) for m in searchmoves] or None)
        self.cost = time.perf_counter() - started
        return "decision", {"move": decision.move.uci(), "mates": decision.mates,
                            "pov": decision.score_for(board.turn), "nodes": len(decision.candidates),
                            "order": [m.uci() for m, _ in decision.candidates], "cost": self.cost}

    def _measure(self, engine: OnePlyEngine) -> None:
        """The cost of one decision on a middlegame position (the second of two: the first
        warms caches), without touching the opening randomness."""
        board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9")
        stochastic, engine.stochastic = engine.stochastic, False
        try:
            for _ in range(2):
                started = time.perf_counter()
                engine.choose(board)
                self.cost = time.perf_counter() - started
        finally:
            engine.stochastic = stochastic

    def ensure_engine(self) -> OnePlyEngine:
        """Build (or rebuild after setoption Evaluator) the engine and return it; a failure to
        load the chosen evaluator is reported and the previous engine (or material) kept."""
        from knights.evaluate.names import select_evaluator
        from knights.play.engine import OnePlyEngine

        if self.engine is not None and self._loaded_name == self.evaluator_name:
            return self.engine
        try:
            evaluator = select_evaluator(self.evaluator_name, notice=self.info)
        except Exception as exc:  # noqa: BLE001 - reported, the engine carries on
            self.info(f"cannot load evaluator {self.evaluator_name!r}: {exc}")
            if self.engine is not None:
                self.evaluator_name = self._loaded_name
                return self.engine
            from knights.evaluate.base import MaterialEvaluator

            evaluator = MaterialEvaluator()
            self.info("playing with the material evaluator")
        engine = OnePlyEngine(evaluator, stochastic=self.stochastic, seed=self.seed,
                              capture_bonus=self.capture_bonus)
        try:
            self._measure(engine)
        except Exception as exc:  # noqa: BLE001 - reported; the first real decision measures it
            self.info(f"could not time a decision: {type(exc).__name__}: {exc}")
        self.engine = engine
        self._loaded_name = self.evaluator_name
        return engine


def engine_main(conn: Connection, evaluator: str | None, seed: int | None, stochastic: bool) -> None:
    """The engine process (``multiprocessing``, spawned: nothing of the parent's threads)."""
    with contextlib.suppress(OSError, AttributeError):   # the protocol process comes first for the CPU
        os.nice(5)
    with contextlib.suppress(KeyboardInterrupt):   # Ctrl-C reaches the whole group: the parent reports
        EngineWorker(conn, evaluator, seed, stochastic).run()


class EngineLink:
    """The protocol process's side: requests to the engine process (started on first need,
    restarted after it dies with the options ``start_args`` gives then), its replies, and
    what they tell: whether the engine is loaded, what a decision costs, the last decision's
    candidates. Notices go to ``info``."""

    def __init__(self, info: Callable[[str], None], start_args: Callable[[], tuple[str | None, int | None, bool]],
                 *, engine_process: bool) -> None:
        self.info = info
        self.start_args = start_args                 # (evaluator, seed, stochastic) for a new engine process
        self.engine_process = engine_process         # False: the worker runs on a thread of this process
        self._conn: Connection | None = None
        self._proc: Any = None                       # the engine process (multiprocessing.Process)
        self._next_id = 0
        self.ready = False                           # the engine process has the engine loaded
        self.loading = False                         # a load is requested and not answered yet
        self.cost: float | None = None              # seconds a decision takes: the median of the last few
        self._costs: deque[float] = deque(maxlen=COST_WINDOW)
        self.previous_order: list[chess.Move] = []   # the last decision's candidates, best first

    def post(self, op: str, *args: Any) -> int:
        """Send a request to the engine process (started on first need); its id."""
        if self._conn is None or self._proc is None or not self._proc.is_alive():
            if self.engine_process:
                ctx = multiprocessing.get_context("spawn")
                self._conn, child = ctx.Pipe()
                self._proc = ctx.Process(target=engine_main, name="knights-uci-engine", daemon=True,
                                         args=(child, *self.start_args()))
                self._proc.start()
                child.close()
            else:
                self._conn, child = multiprocessing.Pipe()
                worker = EngineWorker(child, *self.start_args(), own_process=False)
                self._proc = threading.Thread(target=worker.run, name="knights-uci-engine", daemon=True)
                self._proc.start()
            self.ready = self.loading = False
        self._next_id += 1
        self._conn.send((self._next_id, op, args))
        return self._next_id

    def wait(self, rid: int, timeout: float | None) -> tuple[str, Any] | None:
        """The reply to request ``rid``, or ``None`` after ``timeout`` seconds (or if the
        engine process has died: it is restarted on the next request). Notices and late
        replies to earlier requests are taken in on the way."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._conn is not None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            try:
                if not self._conn.poll(left):
                    return None
                got, kind, payload = self._conn.recv()
            except (EOFError, OSError):
                self.info("the engine process has ended; it restarts at the next request")
                self.close()
                return None
            if got == rid:
                self._absorb(kind, payload, awaited=True)
                return kind, payload
            self._absorb(kind, payload, awaited=False)
        return None

    def _absorb(self, kind: str, payload: Any, *, awaited: bool) -> None:
        if kind == "info":
            self.info(payload)
        elif kind == "loaded":
            self.ready, self.loading = True, False
            self._note_cost(payload)
        elif kind == "decision":
            self.ready = True
            self._note_cost(payload["cost"])
            self.previous_order = [chess.Move.from_uci(m) for m in payload["order"]]
        elif kind == "error" and not awaited:
            self.info(f"engine error: {payload}")

    def _note_cost(self, seconds: float | None) -> None:
        """The median of the last :data:`COST_WINDOW` decisions: one slow move (a page fault,
        a busy machine) does not make every later move a quick one."""
        if seconds is not None:
            self._costs.append(seconds)
            self.cost = statistics.median(self._costs)

    def pump(self) -> None:
        """Take in whatever the engine process has sent (notices) without waiting."""
        self.wait(-1, 0.0)

    def drain(self) -> None:
        """Wait until the engine process has done every request so far (tests; ``isready``)."""
        if self._conn is not None:
            self.wait(self.post("ping"), None)

    def state(self) -> dict[str, Any]:
        """The engine process's evaluator, engine name and options (tests)."""
        reply = self.wait(self.post("state"), None)
        return reply[1] if reply else {}

    def close(self) -> None:
        """End the engine process."""
        conn, proc, self._conn, self._proc = self._conn, self._proc, None, None
        if conn is not None:
            conn.close()
        if proc is not None:
            proc.join(timeout=0.5)   # it ends at the end of its current request
            if proc.is_alive() and hasattr(proc, "terminate"):
                proc.terminate()
                proc.join(timeout=2)

    def start_loading(self) -> None:
        """Load the engine in the background unless it is loaded or loading."""
        if not self.ready and not self.loading:
            self.post("load")
            self.loading = True
