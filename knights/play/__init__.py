"""Core stage play: an evaluator chooses a move, players play a game.

The one-ply engine (:mod:`~knights.play.engine`) and the search built on it
(:mod:`~knights.play.search`: alpha-beta with iterative deepening, keyed by the
Zobrist hashes of :mod:`~knights.play.zobrist`), over the rules they need: the
positions after every move (:mod:`~knights.board.children`, in the board layer, as training compares them too),
how the game ends (:mod:`~knights.play.rules`) and checked input (:mod:`~knights.play.user_input`);
and its front ends: the terminal (:mod:`~knights.play.terminal`) and the UCI
protocol (:mod:`~knights.play.uci`), which lichess-bot and chess GUIs speak, with its
engine worker (:mod:`~knights.play.worker`), clock (:mod:`~knights.play.clock`) and
start-up option list (:mod:`~knights.play.quick_names`); both read input with
:mod:`~knights.play.stdin`.
The players and the one game loop that makes games of their moves
(:mod:`~knights.play.players`, :mod:`~knights.play.openings`, :mod:`~knights.play.game`)
serve the arena and the benchmarks alike.
"""
