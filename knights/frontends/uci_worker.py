"""The engine worker: every decision runs here, in order, away from the protocol's reading and clock.

``knights uci`` must answer in time while torch imports and a model loads (a load can hold
the interpreter lock for half a second), so the protocol process (:mod:`~knights.frontends.uci`)
does neither: :class:`EngineLink` posts requests ``(id, op, args)`` down a pipe to an
:class:`EngineWorker` in a separate engine process (:func:`engine_main`, spawned after
``uciok``), which answers ``(id, kind, payload)`` in order and sends notices as ``(0,
"info", text)``. A program that has the evaluators loaded already (lichess-bot's homemade
engine, a test) runs the same worker on a thread instead, sharing them. The protocol never
blocks on the pipe: it watches it beside its input (:meth:`EngineLink.waitables`) and takes
in what has come (:meth:`EngineLink.pump`); the reply to a request it waits for is kept
until it asks (:meth:`EngineLink.keep`, :meth:`EngineLink.take`).

What a human may want to know about the engine it built (the evaluator it plays with, a
fallback) is said in the next search's ``info string`` lines, never between a client's
command and its answer (a client reads ``isready``'s answer as ``readyok`` alone); only an
error also goes to standard error, the engine's log.

The worker measures what a decision costs (when the model loads, then on every move); the
link keeps the median of the last few (:class:`knights.engine.clock.DecisionCost`), which the protocol compares with
the time a move may take (:func:`knights.engine.clock.move_budget`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import chess

from knights.engine.clock import DecisionCost, search_deadlines

if TYPE_CHECKING:
    from knights.engine.search import Control, SearchEngine

ENGINE_LOG_NAME = "KnightsKernels"


class EvaluatorUnusable(RuntimeError):
    """The evaluator the options ask for cannot be loaded or gives non-finite values: the reason."""
NO_DEADLINE = float("inf")


def shared_control(ctx: Any = multiprocessing) -> Any:
    """The numbers a running search is steered by, shared by the two processes:
    ``[search id, soft deadline, hard deadline, stop]`` (deadlines in ``time.monotonic()``
    seconds; ``inf``: none). A search stops when the id is no longer its own (a newer
    ``go`` came), when ``stop`` is set or at the hard deadline; it starts no new
    iteration after the soft one. ``ponderhit`` sets the deadlines of a running search."""
    return ctx.Array("d", [0.0, NO_DEADLINE, NO_DEADLINE, 0.0])


def search_control(shared: Any, sid: int) -> Control:
    """A :class:`~knights.engine.search.Control` reading ``shared`` for search ``sid``."""
    from knights.engine.search import Control

    class Shared(Control):
        def should_stop(self) -> bool:
            return bool(shared[0] != sid or shared[3])

        def deadlines(self) -> tuple[float, float]:
            return float(shared[1]), float(shared[2])

    return Shared()


class EngineWorker:
    """The child process's side: torch, the model and every decision live here, so that a
    long import or model load (which can hold the interpreter lock for half a second) never
    stops the protocol process from answering in time. Requests ``(id, op, args)`` are
    answered ``(id, kind, payload)`` in order; notices go out as ``(0, "info", text)``."""

    def __init__(self, conn: Connection, evaluator: str | None, seed: int | None, stochastic: bool,
                 depth: int = 1, control: Any = None, own_process: bool = True) -> None:
        self.conn = conn
        self.own_process = own_process
        self.evaluator_name = evaluator
        self.seed = seed
        self.stochastic = stochastic
        self.capture_bonus = 0.0
        self.depth = depth
        self.control = control if control is not None else shared_control()
        self.engine: SearchEngine | None = None
        self._loaded_name: str | None = None
        self._loaded_for: tuple[str | None, bool] | None = None   # (evaluator asked for, searching) when loaded
        self._failed: tuple[tuple[str | None, bool], str] | None = None   # what could not be loaded, and why
        self.cost: float | None = None
        self.notes: list[str] = []     # said in the next search's info lines (note)

    def info(self, text: str) -> None:
        """A notice now: the answer to the request being done (an option refused)."""
        self.conn.send((0, "info", text))

    def note(self, text: str) -> None:
        """A notice for the next search's ``info string`` lines (the engine built, a fallback)."""
        self.notes.append(text)

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
        return "ok", None

    def op_evaluator(self, value: str) -> tuple[str, Any]:
        from knights.engine.build import resolve
        from knights.engine.spec import parse
        from knights.evaluate.names import EvaluatorError

        try:   # loaded at the next isready / go; "default" stays None (it depends on the depth)
            wanted = parse(value, depth=self.depth)
            self.evaluator_name = None if wanted.evaluator is None else resolve(wanted).evaluator
        except EvaluatorError as exc:
            self.info(str(exc))
        return "ok", None

    def op_set(self, name: str, value: Any) -> tuple[str, Any]:
        setattr(self, name, value)
        if self.engine is not None:
            if name == "seed":
                self.engine.reseed(value)
            elif name == "newgame":
                self.engine.new_game()
            else:
                setattr(self.engine, name, value)
        return "ok", None

    def op_state(self) -> tuple[str, Any]:
        engine = self.engine
        return "state", {"evaluator": self.evaluator_name, "engine": engine.name if engine else None,
                         "stochastic": engine.stochastic if engine else self.stochastic,
                         "seed": engine.seed if engine else self.seed,
                         "capture_bonus": engine.capture_bonus if engine else self.capture_bonus,
                         "depth": engine.depth if engine else self.depth}

    def op_load(self) -> tuple[str, Any]:
        try:
            self.ensure_engine()
        except EvaluatorUnusable as exc:    # said once at isready; every go says it again
            return "broken", str(exc)
        return "loaded", self.cost

    def op_decide(self, fen: str, moves: list[str], searchmoves: list[str], deadline: float | None,
                  search: dict[str, Any] | None = None) -> tuple[str, Any]:
        """Decide on the position; ``search``: ``{"sid", "depth", "nodes", "own_ms"}`` of a ``go``
        (the shared control's id, UCI's ``depth`` and ``nodes``, milliseconds counted from the
        start of the search; ``None``: not given). The notes held since the last search are said first."""
        if deadline is not None and time.monotonic() > deadline:
            return "expired", None     # the protocol process has answered already
        from knights.engine.search import SearchLimits

        engine = self.ensure_engine()
        board = chess.Board(fen)
        for move in moves:
            board.push_uci(move)
        search = search or {}
        sid = int(search.get("sid", 0))
        notes, self.notes = self.notes, []
        for text in notes:
            self.conn.send((0, "say", (sid, text)))
        root_moves = [chess.Move.from_uci(m) for m in searchmoves] or None
        soft = hard = None
        if search.get("own_ms") is not None:    # a time of its own, from now (a go with no clock)
            soft, hard = search_deadlines(search["own_ms"] / 1000, now=0.0)
        decision = engine.choose(
            board, root_moves,
            limits=SearchLimits(depth=search.get("depth"), nodes=search.get("nodes"), soft=soft, hard=hard),
            control=search_control(self.control, sid),
            on_iteration=lambda it: self.conn.send((0, "line", (sid, it.uci()))))
        self.cost = engine.one_ply_seconds   # the one-ply part: what the quickest answer costs
        ponder = decision.pv[1].uci() if len(decision.pv) > 1 else None
        return "decision", {"move": decision.move.uci(), "mates": decision.mates, "mate_in": decision.mate_in,
                            "pov": decision.score_for(board.turn), "nodes": decision.nodes or len(decision.candidates),
                            "depth": decision.depth, "seldepth": decision.seldepth, "ponder": ponder,
                            "pv": [m.uci() for m in decision.pv] or [decision.move.uci()],
                            "order": [m.uci() for m, _ in decision.candidates], "cost": self.cost}

    def ensure_engine(self) -> SearchEngine:
        """Build (or rebuild after setoption Evaluator) the engine and return it.

        An evaluator that cannot be loaded (missing or damaged files, non-finite evaluations) is
        never replaced by another one in silence: :class:`EvaluatorUnusable` is raised, now and at
        every later request until the options change, so that ``isready`` and every ``go`` say
        why in an ``info string error:`` line (and, once, on stderr, the engine's log); the
        protocol still answers each ``go`` with a legal move."""
        from knights.engine.build import build, resolve
        from knights.engine.spec import BotSpec

        asked = (self.evaluator_name, self.depth > 1)   # all the default depends on (op_set sets the depth itself)
        if self.engine is not None and self._loaded_for == asked:
            return self.engine                         # (no look at the files on every move)
        if self._failed is not None and self._failed[0] == asked:
            raise EvaluatorUnusable(self._failed[1])  # (no second load of a broken file on every move)
        spec = BotSpec(self.evaluator_name, depth=self.depth, stochastic=self.stochastic, seed=self.seed,
                       capture_bonus=self.capture_bonus)
        try:
            spec = resolve(spec, notice=self.note)
            engine = build(spec)
        except Exception as exc:  # noqa: BLE001 - reported on every request, never played around
            message = f"cannot load evaluator {spec.evaluator or 'default'!r}: {exc}"
            self._failed = (asked, message)
            self.engine, self._loaded_name, self._loaded_for = None, None, None
            if self.own_process:   # the engine's log; the protocol says it in every answer
                print(f"knights uci: error: {message}", file=sys.stderr, flush=True)
            raise EvaluatorUnusable(message) from None
        self._failed = None
        wanted = spec.evaluator
        try:
            self.cost = engine.measure_one_ply()   # the cost of one decision, before the first move
        except Exception as exc:  # noqa: BLE001 - reported; the first real decision measures it
            self.note(f"could not time a decision: {type(exc).__name__}: {exc}")
        self.engine = engine
        self._loaded_name = wanted
        self._loaded_for = asked
        self.note(f"{ENGINE_LOG_NAME} plays with {engine.name} (depth {self.depth})")
        return engine


def engine_main(conn: Connection, evaluator: str | None, seed: int | None, stochastic: bool, depth: int,
                control: Any) -> None:
    """The engine process (``multiprocessing``, spawned: nothing of the parent's threads)."""
    with contextlib.suppress(OSError, AttributeError):   # the protocol process comes first for the CPU
        os.nice(5)
    with contextlib.suppress(KeyboardInterrupt):   # Ctrl-C reaches the whole group: the parent reports
        EngineWorker(conn, evaluator, seed, stochastic, depth, control).run()


class EngineLink:
    """The protocol process's side: requests to the engine process (started on first need,
    restarted after it dies with the options ``start_args`` gives then), its replies, and
    what they tell: whether the engine is loaded, what a decision costs, the last decision's
    candidates. Notices go to ``info``."""

    def __init__(self, info: Callable[[str], None],
                 start_args: Callable[[], tuple[str | None, int | None, bool, int]],
                 *, engine_process: bool, line: Callable[[str], None] | None = None) -> None:
        self.info = info
        self.line = line or info                     # a search's own ``info`` lines, sent as they are
        self.start_args = start_args                 # (evaluator, seed, stochastic, depth) for a new engine process
        self.engine_process = engine_process         # False: the worker runs on a thread of this process
        self.control = shared_control(multiprocessing.get_context("spawn") if engine_process else multiprocessing)
        self._search_id = 0
        self._wanted: set[int] = set()               # requests whose replies are kept until taken (keep)
        self._kept: dict[int, tuple[str, Any]] = {}
        self._conn: Connection | None = None
        self._proc: Any = None                       # the engine process (multiprocessing.Process)
        self._next_id = 0
        self.ready = False                           # the engine process has the engine loaded
        self.loading = False                         # a load is requested and not answered yet
        self._cost = DecisionCost()                  # seconds a decision takes: the median of the last few
        self.previous_order: list[chess.Move] = []   # the last decision's candidates, best first
        self.last_line: str | None = None            # the current search's last finished iteration (info line)

    def post(self, op: str, *args: Any) -> int:
        """Send a request to the engine process (started on first need); its id."""
        if self._conn is None or self._proc is None or not self._proc.is_alive():
            if self.engine_process:
                ctx = multiprocessing.get_context("spawn")
                self._conn, child = ctx.Pipe()
                self._proc = ctx.Process(target=engine_main, name="knights-uci-engine", daemon=True,
                                         args=(child, *self.start_args(), self.control))
                self._proc.start()
                child.close()
            else:
                self._conn, child = multiprocessing.Pipe()
                worker = EngineWorker(child, *self.start_args(), self.control, own_process=False)
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
        if rid in self._kept:
            self._wanted.discard(rid)
            return self._kept.pop(rid)
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._conn is not None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:   # a zero timeout still takes in what has arrived (pump)
                if not self._conn.poll(left):
                    return None
                got, kind, payload = self._conn.recv()
            except (EOFError, OSError):
                self.info("the engine process has ended; it restarts at the next request")
                self.close()
                return None
            if got == rid:
                self._wanted.discard(rid)
                self._absorb(kind, payload, awaited=True)
                return kind, payload
            if got in self._wanted:             # a reply the protocol takes when it looks (take)
                self._kept[got] = (kind, payload)
            self._absorb(kind, payload, awaited=got in self._wanted)
        return None

    def _absorb(self, kind: str, payload: Any, *, awaited: bool) -> None:
        if kind == "info":
            self.info(payload)
        elif kind == "line":
            sid, text = payload
            if sid == self._search_id:      # a search that has been stopped or replaced stays quiet
                self.last_line = text
                self.line(text)
        elif kind == "say":                 # a notice held for this search's info lines
            sid, text = payload
            if sid == self._search_id:
                self.info(text)
        elif kind == "loaded":
            self.ready, self.loading = True, False
            self._note_cost(payload)
        elif kind == "broken":              # the load answered: the evaluator cannot be used, and why
            self.ready, self.loading = True, False
            self.info(f"error: {payload}")
        elif kind == "decision":
            self.ready = True
            self._note_cost(payload["cost"])
            self.previous_order = [chess.Move.from_uci(m) for m in payload["order"]]
        elif kind == "error" and not awaited:
            self.info(f"error: {payload}")

    @property
    def cost(self) -> float | None:
        """Seconds a decision takes: the median of the last few (:class:`~knights.engine.clock.DecisionCost`)."""
        return self._cost.seconds

    def _note_cost(self, seconds: float | None) -> None:
        self._cost.note(seconds)

    def pump(self) -> None:
        """Take in whatever the engine process has sent (notices, lines, kept replies) without waiting."""
        self.wait(-1, 0.0)

    def pump_within(self, timeout: float | None) -> None:
        """Wait until the engine process sends something, at most ``timeout`` seconds, and take it in."""
        if self._conn is None:
            return
        try:
            ready = self._conn.poll(timeout)
        except (EOFError, OSError):     # it has gone: pump says so
            ready = True
        if ready:
            self.pump()

    def waitables(self) -> list[Connection]:
        """The pipe from the engine, for a caller that waits on it beside its input."""
        return [] if self._conn is None else [self._conn]

    @property
    def alive(self) -> bool:
        """Whether the engine process (or thread) is there to answer."""
        return self._conn is not None

    def drain(self) -> None:
        """Wait until the engine process has done every request so far (tests; ``isready``)."""
        if self._conn is not None:
            self.wait(self.post("ping"), None)

    def state(self) -> dict[str, Any]:
        """The engine process's evaluator, engine name and options (tests)."""
        reply = self.wait(self.post("state"), None)
        return reply[1] if reply else {}

    def close(self) -> None:
        """End the engine process (a search still running is stopped first)."""
        self.stop_search()
        conn, proc, self._conn, self._proc = self._conn, self._proc, None, None
        if conn is not None:
            conn.close()
        if proc is not None:
            proc.join(timeout=0.5)   # it ends at the end of its current request
            if proc.is_alive() and hasattr(proc, "terminate"):
                proc.terminate()
                proc.join(timeout=2)

    def keep(self, rid: int) -> None:
        """Keep the reply to request ``rid`` when it comes, until :meth:`take`."""
        self._wanted.add(rid)

    def has_answer(self, rid: int) -> bool:
        """Whether the reply to the kept request ``rid`` has come."""
        return rid in self._kept

    def take(self, rid: int) -> tuple[str, Any] | None:
        """The kept reply to ``rid`` if it has come; either way it is no longer kept."""
        self._wanted.discard(rid)
        return self._kept.pop(rid, None)

    def begin_search(self, soft: float = NO_DEADLINE, hard: float = NO_DEADLINE) -> int:
        """A new search id with its deadlines (``time.monotonic()`` seconds): any search still
        running stops, as its id is no longer the current one."""
        self._search_id += 1
        self.last_line = None
        with self.control.get_lock():
            self.control[:] = [float(self._search_id), soft, hard, 0.0]
        return self._search_id

    def retire_search(self) -> None:
        """The search in flight has been answered (or given up): it stops, and its ``info`` lines
        still on their way are dropped, so that none reaches the GUI after the next ``go``
        (python-chess reads such a line against the new position)."""
        self.begin_search()
        self.control[3] = 1.0

    def set_deadlines(self, soft: float, hard: float) -> None:
        """New deadlines for the running search (``ponderhit``)."""
        with self.control.get_lock():
            self.control[1], self.control[2] = soft, hard

    def stop_search(self) -> None:
        """Ask the running search to stop now (``stop``); it answers with its best move so far."""
        self.control[3] = 1.0

    def start_loading(self) -> None:
        """Load the engine in the background unless it is loaded or loading."""
        if not self.ready and not self.loading:
            self.post("load")
            self.loading = True
