"""Shared fixtures. Tests that need Stockfish use the real binary: on a user's machine
without it they skip with the install hint; under CI (CI=true) that is a failure.

The suite's tensors are small (a batch of children, a few thousand sample rows): one
intra-op thread, as the engine itself uses for one ply (knights.frontends.uci_worker). With two,
on the two cores this suite shares with matches and training runs, each operation waits
for a thread that is not running: test_golden's democracy took 42 s instead of 1 s. The processes the
tests start (notebook kernels, engines, the command line) inherit the one thread from ``OMP_NUM_THREADS``:
a notebook's quick run of EL/v12 took 71 s with two threads beside another worker's kernel."""

from __future__ import annotations

import os

import pytest
import torch

from knights.data.stockfish import INSTALL_HINT, StockfishMissing, find_stockfish

os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def stockfish() -> str:
    """Path of the real Stockfish binary."""
    try:
        return find_stockfish()
    except StockfishMissing:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Stockfish is required under CI: {INSTALL_HINT}")
        pytest.skip(f"Stockfish not installed: {INSTALL_HINT}")
