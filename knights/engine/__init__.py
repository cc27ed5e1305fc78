"""Core stage play: an evaluator chooses a move, players play a game.

The one-ply engine (:mod:`~knights.engine.one_ply`) and the search built on it
(:mod:`~knights.engine.search`: alpha-beta with iterative deepening, keyed by the
Zobrist hashes of :mod:`~knights.engine.zobrist`), over the rules they need: the
positions after every move (:mod:`~knights.board.children`, in the board layer, as training compares them too),
how the game ends (:mod:`~knights.engine.rules`) and checked input (:mod:`~knights.engine.user_input`);
and its front ends: the terminal (:mod:`~knights.frontends.terminal`) and the UCI
protocol (:mod:`~knights.frontends.uci`), which lichess-bot and chess GUIs speak, with its
engine worker (:mod:`~knights.frontends.uci_worker`), clock (:mod:`~knights.engine.clock`) and
start-up option list (:mod:`~knights.engine.quick_names`); both read input with
:mod:`~knights.frontends.stdin`.
The players and the one game loop that makes games of their moves
(:mod:`~knights.lab.arena.players`, :mod:`~knights.lab.arena.openings`, :mod:`~knights.lab.arena.game`)
serve the arena and the benchmarks alike.
"""
