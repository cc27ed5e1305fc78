"""Core stage engine: a bot named by a spec chooses a move.

The way in is :func:`knights.engine.build.build`: a :class:`~knights.engine.spec.BotSpec` (parsed once by
:func:`~knights.engine.spec.parse`) becomes an engine whose ``choose(board)`` returns a decision. Behind it:

- :mod:`~knights.engine.one_ply` — the paper's bot: every legal move's position judged in one batched call;
- :mod:`~knights.engine.search` — alpha-beta with iterative deepening over any evaluator (Python);
- :mod:`~knights.engine.compiled_search` — the same search compiled (numba), with its board
  (:mod:`~knights.engine.compiled_board`), arrays (:mod:`~knights.engine.compiled_arrays`), functions
  (:mod:`~knights.engine.compiled`), accumulators (:mod:`~knights.engine.incremental`) and a network judged
  where the captures end (:mod:`~knights.engine.judged`);
- :mod:`~knights.engine.constants` (every score and margin, once), :mod:`~knights.engine.zobrist` (hashes),
  :mod:`~knights.engine.rules` (how a game ends), :mod:`~knights.engine.clock` (time per move) and
  :mod:`~knights.engine.user_input` (a FEN, a move, checked).

The front ends that call it live in :mod:`knights.frontends`; the arena and the measurements in :mod:`knights.lab`.
"""
