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
* :mod:`build`: runs everything and records what was produced.

Nothing here imports ``knights`` or ``torch``: the report builds in seconds.
"""
