"""Application arena: games become ratings (the games come from :mod:`knights.lab.arena.game`).

Parallel matches saved as PGN, the strength ladder with maximum-likelihood Elo, and move
quality judged by Stockfish. The players and the one game loop they play through are core
(:mod:`knights.lab.arena.players`, :mod:`knights.lab.arena.openings`, :mod:`knights.lab.arena.game`): the
benchmarks use them too.

In the order the modules build on each other:

==============  ====================================================================
``specs``       players named by strings (``"ours:EL/v8"``, ``"search:EL/v10@1000"``, ``"ab2"``,
                ``"sf-elo:1350"``)
``matches``     pairings scheduled into games, played in worker processes, saved
``scores``      per-pairing results of the saved games
``elo``         ratings by maximum likelihood, anchored on Stockfish
``report``      the rating report: JSON, CSV, Markdown table, plot, targets
``quality``     every move judged by Stockfish (ACPL, accuracy, blunders)
``ladder``      what ``knights strength`` plays, and playing it
``commands``    ``knights match``, ``knights strength``, ``knights quality``
``testsets``    the independent test sets' games and tactics, played by players the
                training generator never uses (``knights data independent``)
==============  ====================================================================
"""
