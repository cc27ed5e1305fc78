"""Shared fixtures. Tests that need Stockfish use the real binary: on a user's machine
without it they skip with the install hint; under CI (CI=true) that is a failure."""

from __future__ import annotations

import os

import pytest

from knights.data.stockfish import INSTALL_HINT, StockfishMissing, find_stockfish


@pytest.fixture(scope="session")
def stockfish() -> str:
    """Path of the real Stockfish binary."""
    try:
        return find_stockfish()
    except StockfishMissing:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Stockfish is required under CI: {INSTALL_HINT}")
        pytest.skip(f"Stockfish not installed: {INSTALL_HINT}")
