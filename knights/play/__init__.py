"""Stage 5, play: an evaluator chooses a move.

The one-ply engine (:mod:`~knights.play.engine`) and the search built on it
(:mod:`~knights.play.search`: alpha-beta with iterative deepening, keyed by the
Zobrist hashes of :mod:`~knights.play.zobrist`), over the rules they need: the
positions after every move (:mod:`~knights.play.children`), how the game ends
(:mod:`~knights.play.rules`) and checked input (:mod:`~knights.play.user_input`);
and its front ends: the terminal (:mod:`~knights.play.terminal`) and the UCI
protocol (:mod:`~knights.play.uci`), which lichess-bot and chess GUIs speak, with its
engine worker (:mod:`~knights.play.worker`), clock (:mod:`~knights.play.clock`) and
start-up option list (:mod:`~knights.play.quick_names`); both read input with
:mod:`~knights.play.stdin`.
:mod:`~knights.settings` writes the settings the report quotes
(``knights settings``), as data.
"""
