#!/usr/bin/env python3
"""Plug the Knights and Kernels homemade engine into a lichess-bot checkout.

    python lichess_bot/install.py LICHESS_BOT_DIR [--config]

* saves ``homemade.py`` of this folder as ``LICHESS_BOT_DIR/knights_homemade.py``
  (only a file this script wrote before is replaced: an unrelated one stops it);
* appends one line to lichess-bot's own ``homemade.py`` (kept as it is: lichess-bot's
  tests import ``ExampleEngine`` from it)::

      from knights_homemade import KnightsKernels  # noqa: E402,F401

* creates ``engines/`` (lichess-bot checks that ``engine.dir`` exists);
* with ``--config``: copies this folder's ``config.yml`` there when it has none
  (an existing ``config.yml`` is never replaced).

Running it again changes nothing. Standard library only, so any Python runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

HERE = Path(__file__).resolve().parent
MODULE = "knights_homemade.py"
MARKER = "# Installed by knights-and-kernels lichess_bot/install.py; rerun it to update.\n"
IMPORT_LINE = "from knights_homemade import KnightsKernels  # noqa: E402,F401  (knights-and-kernels)\n"


class InstallError(Exception):
    """A problem the user must fix, said in one line."""


def install(target: Path, *, config: bool = False, out: TextIO | None = None) -> list[str]:
    """Install into the lichess-bot checkout ``target``; the list of what changed
    (each also written to ``out`` when given)."""

    def say(text: str) -> None:
        if out is not None:
            print(text, file=out)

    target = Path(target)
    if not target.is_dir():
        raise InstallError(f"{target}: no such directory (give the folder of a lichess-bot checkout)")
    homemade = target / "homemade.py"
    if not (target / "lichess-bot.py").is_file() or not homemade.is_file():
        raise InstallError(f"{target}: not a lichess-bot checkout (lichess-bot.py and homemade.py expected there)")
    changed: list[str] = []

    module = target / MODULE
    ours = MARKER + (HERE / "homemade.py").read_text(encoding="utf-8")
    if module.exists():
        current = module.read_text(encoding="utf-8", errors="replace")
        if not current.startswith(MARKER):
            raise InstallError(f"{module}: exists and was not written by this script; move it away, then rerun")
        if current != ours:
            module.write_text(ours, encoding="utf-8")
            changed.append(f"updated {module}")
    else:
        module.write_text(ours, encoding="utf-8")
        changed.append(f"wrote {module}")

    text = homemade.read_text(encoding="utf-8")
    if "from knights_homemade import KnightsKernels" not in text:
        with homemade.open("a", encoding="utf-8") as handle:
            handle.write(("" if text.endswith("\n") or not text else "\n") + "\n" + IMPORT_LINE)
        changed.append(f"added the import of KnightsKernels to {homemade}")

    engines = target / "engines"
    if not engines.is_dir():
        engines.mkdir()
        changed.append(f"created {engines}")

    if config:
        destination = target / "config.yml"
        if destination.exists():
            say(f"kept the existing {destination} (see {HERE / 'config.yml'} for the engine section)")
        else:
            destination.write_text((HERE / "config.yml").read_text(encoding="utf-8"), encoding="utf-8")
            changed.append(f"wrote {destination}")
    for line in changed:
        say(line)
    if not changed:
        say(f"{target}: already installed, nothing changed")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1].strip(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lichess_bot_dir", type=Path, help="the folder of a lichess-bot checkout")
    parser.add_argument("--config", action="store_true", help="also copy config.yml when it has none")
    args = parser.parse_args(argv)
    try:
        install(args.lichess_bot_dir, config=args.config, out=sys.stdout)
    except (InstallError, OSError, UnicodeDecodeError) as exc:
        print(f"install.py: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
