"""The final test set: the one module that reads ``data/final/``.

``data/final/final.csv`` (5,000 positions of games between Stockfish players at random Skill Levels, labelled at
depth 12; ``knights data final`` made it once) is frozen by the SHA-256 that its sidecar ``final.json`` records.
Nothing is chosen on it: every weight, meta-learner, hyper-parameter and the shipped democracy is fixed on the
selection sets (``data/independent/``) and written to a file first; this set is read only to report
(:mod:`knights.lab.ensemble.study`, ``--final``). A test (``tests/test_democracy_study.py``) checks that no other
module names the folder.

:func:`read_final` checks the file's bytes against the recorded checksum before parsing a line and refuses a changed
file, naming it, rather than report on another set under the same name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knights.data.chunks import Encoded, read_chunk
from knights.learn import registry
from knights.learn.store import sha256_file

FINAL_FOLDER = registry.REPO_ROOT / "data" / "final"
"""Where the final test set lives (the builder, :mod:`knights.lab.arena.testsets`, writes it there once)."""
FINAL_CSV = "final.csv"
FINAL_SIDECAR = "final.json"


class FinalSetChanged(ValueError):
    """The final test set's bytes are not those its sidecar froze (or either file is missing or unreadable)."""


def final_sidecar(folder: str | Path = FINAL_FOLDER) -> dict[str, Any]:
    """The final set's sidecar (``final.json``: how it was made, its rows and the SHA-256 that freezes it)."""
    side = Path(folder) / FINAL_SIDECAR
    try:
        doc = json.loads(side.read_text())
    except FileNotFoundError:
        raise FinalSetChanged(f"{side}: the final set's sidecar is missing (it records the checksum that freezes "
                              f"{FINAL_CSV}); nothing is read without it") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FinalSetChanged(f"{side}: not valid JSON ({exc})") from None
    digest = doc.get("sha256") if isinstance(doc, dict) else None
    if not isinstance(digest, str) or len(digest) != 64:
        raise FinalSetChanged(f"{side}: records no SHA-256 of {FINAL_CSV}")
    return dict(doc)


def read_final(folder: str | Path = FINAL_FOLDER) -> tuple[Encoded, dict[str, Any]]:
    """The final test set's rows (:func:`knights.data.chunks.read_chunk`) and its sidecar (with ``path``, the file
    read), once the file's SHA-256
    equals the one the sidecar recorded when the set was frozen; a changed, missing or short file is refused
    (:class:`FinalSetChanged`, naming the file). A malformed row is refused too: the frozen set has none, and
    a skipped row would change what every figure is measured on."""
    folder = Path(folder)
    doc = final_sidecar(folder)
    csv = folder / str(doc.get("file") or FINAL_CSV)
    if not csv.is_file():
        raise FinalSetChanged(f"{csv}: the final test set is missing")
    digest = sha256_file(csv)
    if digest != doc["sha256"]:
        raise FinalSetChanged(f"{csv}: changed since it was frozen (SHA-256 {digest[:12]}..., "
                              f"{FINAL_SIDECAR} records {doc['sha256'][:12]}...); the final set is never remade "
                              "or edited: restore it (git checkout -- data/final)")
    data, report = read_chunk(csv)
    if report.total_skipped or ("rows" in doc and len(data) != doc["rows"]):
        raise FinalSetChanged(f"{csv}: {len(data)} rows read and {report.total_skipped} skipped, "
                              f"{FINAL_SIDECAR} records {doc.get('rows')}")
    return data, {**doc, "path": registry.repo_relative(csv)}
