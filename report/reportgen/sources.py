"""Where the results are, for callers that name a results folder (tests, the README rows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Sources:
    def __init__(self, root: Path, results_dir: Path | None = None, models: dict[str, Path] | None = None):
        self.root, self.models = Path(root), models or {}
        self.results_dir = Path(results_dir) if results_dir else self.root / "report" / "results"

    def independent_sets(self) -> list[dict[str, Any]]:
        return list(json.loads((self.results_dir / "independent.json").read_text())["sets"])
