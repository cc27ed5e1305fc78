"""Stage 6, arena: moves become games, games become ratings.

Players (ours and the reference opponents), the one game loop, parallel matches saved
as PGN, the strength ladder with maximum-likelihood Elo, and move quality judged by
Stockfish.

In the order the modules build on each other:

==============  ====================================================================
``players``     the ``Player`` protocol; random, greedy, alpha-beta, Stockfish, any
                UCI engine, and our one-ply engine or search as a player
``openings``    the twenty book lines every pairing walks through
``game``        the one game loop (``play_game``), its ``Settings`` and ``GameRecord``
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
