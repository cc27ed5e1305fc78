"""The scripts that turn what the repository holds into the report's figures, tables
and numbers. ``python report/build.py`` runs them all (``make report`` does).

Modules:

* :mod:`sources`: the **only** code that reads ``report/results/*`` and model
  metadata; every schema the report depends on is interpreted there. What the
  report quotes from the code (version libraries, the generator's and the engine's
  constants) is among those results: ``settings.json``, which ``knights settings``
  writes by importing the live values. The report never reads source code.
* :mod:`datastats`: statistics of a folder of CSSLab chunk files (stdlib + NumPy).
* :mod:`tex`: number macros, booktabs tables and placeholders.
* :mod:`figures`, :mod:`tables`: one function per figure / table.
* :mod:`predictions`: the best network's evaluation of every position of the
  independent sets (for the predicted-against-Stockfish figure and the example
  positions), cached beside the figures.
* :mod:`build`: runs everything, records what was produced and, with ``--strict``,
  refuses any value left unmeasured or contradicted.
* :mod:`readme`: the generated results block of ``README.md``.

Only :mod:`predictions` imports ``knights`` (and so ``torch``), inside the one function
that needs it and only when its cache misses; everything else reads JSON, so the report
builds in seconds. ``report/check_pdf.py`` checks the built PDF (CI runs it).
"""
