"""Stage 5, play: an evaluator chooses a move.

The one-ply engine (:mod:`~knights.play.engine`) over the rules it needs: the
positions after every move (:mod:`~knights.play.children`), how the game ends
(:mod:`~knights.play.rules`) and checked input (:mod:`~knights.play.user_input`);
and its front ends: the terminal (:mod:`~knights.play.terminal`) and the UCI
protocol (:mod:`~knights.play.uci`), which lichess-bot and chess GUIs speak.
:mod:`~knights.play.settings` writes the settings the report quotes
(``knights settings``), as data.
"""
