"""The scripts that turn what the repository holds into the report's figures, tables
and numbers. ``python report/build.py`` runs them all (``make report`` does).

Modules:

* :mod:`sources`: the **only** code that reads ``report/results/*`` and model
  metadata; every schema the report depends on is interpreted there.
* :mod:`repo`: facts read from the source tree without importing it (version
  libraries, the Makefile's data recipe, the engine's opening table), by parsing.
* :mod:`datastats`: statistics of a folder of CSSLab chunk files (stdlib + NumPy).
* :mod:`tex`: number macros, booktabs tables and placeholders.
* :mod:`figures`, :mod:`tables`: one function per figure / table.
* :mod:`build`: runs everything and records what was produced.

Nothing here imports ``knights`` or ``torch``: the report builds in seconds.
"""
