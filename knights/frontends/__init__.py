"""Application: the front ends a person plays through.

The terminal (:mod:`~knights.frontends.terminal`), the UCI protocol that GUIs and lichess-bot speak
(:mod:`~knights.frontends.uci`, its engine process :mod:`~knights.frontends.uci_worker` and the input reader
:mod:`~knights.frontends.stdin`), and the web page (:mod:`knights.frontends.web`). Each builds its bot with
:func:`knights.engine.build.build`; lichess-bot's homemade engine (``lichess_bot/homemade.py``) does the same.
"""
