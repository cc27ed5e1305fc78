"""Move networks (source_SL): what the legal moves are, how a move guess is scored.

A move network outputs 4096 numbers per position, a 64 x 64 grid indexed
``from * 64 + to`` in python-chess square numbers (a1 = 0), the same index as the
``move`` column of :class:`knights.data.chunks.Encoded`. Promotions are one cell
(the four promotion pieces share their from/to pair).

- :func:`legal_mask` marks, for each cached position, the cells of its legal moves,
  from python-chess's move generator on the exactly rebuilt board.
- :class:`MoveTask` is the training task (see :mod:`knights.learn.training`): MSE against
  the one-hot of the move played, plus ``penalty`` x the squared positive output on
  illegal cells::

      loss = 1/(R*4096) * sum_r sum_k [ (y_rk - t_rk)^2 + penalty * illegal_rk * relu(y_rk)^2 ]

  over the R rows that have a move (rows whose move is -1 are left out). Per cell,
  a positive output on an illegal move costs ``1 + penalty`` times what the same
  error on a legal one does; negative outputs on illegal moves cost only the MSE
  (they never win the argmax).
- :func:`move_metrics` asks the only questions that matter for a move network: is
  its top move legal, and is it the move that was played?

Legal moves are computed once per distinct position and kept in a
:class:`LegalMoveCache` (a dict from the position's 67 bytes to its from/to
indices), so epochs after the first, and validation, only look them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from knights.board.arrays import boards_from_arrays
from knights.data.chunks import Encoded
from knights.features.inputs import InputSpec

if TYPE_CHECKING:
    import chess

N_MOVES = 4096


def boards(block: Encoded) -> list[chess.Board]:
    """python-chess boards of the cached positions."""
    return boards_from_arrays(block.squares, block.white, block.castling, block.ep)


def _keys(block: Encoded) -> list[bytes]:
    """One 67-byte key per row: squares, side to move, castling, en passant."""
    n = len(block.squares)
    rows = np.empty((n, 67), np.uint8)
    rows[:, :64] = np.asarray(block.squares).view(np.uint8)
    rows[:, 64] = np.asarray(block.white)
    rows[:, 65] = np.asarray(block.castling).view(np.uint8)
    rows[:, 66] = np.asarray(block.ep).view(np.uint8)
    # fixed-width byte strings: equal after numpy's trailing-NUL strip iff equal rows
    keys: list[bytes] = rows.view("S67")[:, 0].tolist()
    return keys


class LegalMoveCache:
    """Legal from/to indices per distinct position, computed on first sight.

    Values are the indices as int16 bytes (compact); ``max_entries`` bounds the
    memory (about 300 bytes an entry): when full, the cache starts again empty.
    """

    def __init__(self, max_entries: int = 2_000_000) -> None:
        self.max_entries = max_entries
        self._moves: dict[bytes, bytes] = {}
        self.computed = 0

    def __len__(self) -> int:
        return len(self._moves)

    def clear(self) -> None:
        self._moves.clear()

    def lookup(self, block: Encoded) -> tuple[np.ndarray, np.ndarray]:
        """Ragged legal moves of ``block``: ``(counts (N,), indices (sum counts,))``,
        indices ``from * 64 + to``, each row's indices sorted and distinct."""
        keys = _keys(block)
        found = self._moves
        missing: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k not in found and k not in missing:
                missing[k] = i
        if missing:
            if len(found) + len(missing) > self.max_entries:
                found.clear()
                missing = {k: i for i, k in reversed(list(enumerate(keys)))}
            todo = block.take(np.fromiter(missing.values(), dtype=np.int64, count=len(missing)))
            for k, b in zip(missing, boards(todo), strict=True):
                idx = {m.from_square * 64 + m.to_square for m in b.generate_legal_moves()}
                found[k] = np.array(sorted(idx), dtype=np.int16).tobytes()
            self.computed += len(missing)
        values = [found[k] for k in keys]
        counts = np.fromiter((len(v) // 2 for v in values), dtype=np.int64, count=len(values))
        indices = np.frombuffer(b"".join(values), dtype=np.int16).astype(np.int64)
        return counts, indices


DEFAULT_CACHE = LegalMoveCache()


def legal_mask(block: Encoded, cache: LegalMoveCache | None = None) -> torch.Tensor:
    """``(N, 4096)`` bool: True where ``from * 64 + to`` is a legal move of row n."""
    counts, indices = (DEFAULT_CACHE if cache is None else cache).lookup(block)
    mask = np.zeros((len(counts), N_MOVES), dtype=bool)
    mask[np.repeat(np.arange(len(counts)), counts), indices] = True
    return torch.from_numpy(mask)


def _with_moves(block: Encoded) -> np.ndarray:
    return np.flatnonzero(np.asarray(block.move) >= 0)


@dataclass(frozen=True)
class MoveTask:
    """The move networks' training task: see the module docstring for the loss."""

    spec: InputSpec
    penalty: float

    def inputs(self, block: Encoded, device: torch.device) -> tuple[torch.Tensor, ...]:
        return self.spec.tensors(block, device)

    def terms(self, output: torch.Tensor, block: Encoded, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mse, illegal)``, each a mean per cell over the rows that have a move."""
        keep = _with_moves(block)
        if len(keep) == 0:
            zero = output.sum() * 0.0
            return zero, zero
        y = output[torch.from_numpy(keep).to(output.device)] if len(keep) < len(block) else output
        sub = block.take(keep) if len(keep) < len(block) else block
        target = torch.zeros_like(y)
        played = torch.from_numpy(np.asarray(sub.move, dtype=np.int64)).to(y.device)
        target[torch.arange(len(keep), device=y.device), played] = 1.0
        mse = nn.functional.mse_loss(y, target)
        legal = legal_mask(sub).to(y.device)
        illegal = torch.relu(y).square().masked_fill(legal, 0.0).mean()
        return mse, illegal

    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor:
        mse, illegal = self.terms(output, block, device)
        return mse + self.penalty * illegal


def move_metrics(model: nn.Module, spec: InputSpec, data: Encoded, batch: int = 4096) -> dict[str, Any]:
    """How the model's top move (argmax of its 4096 outputs) fares on ``data``.

    ``legal_share``: share of positions where it is legal; ``top1_played``: share of
    the positions with a recorded move where it is the move played; ``rows``:
    positions scored; ``rows_with_move``: those with a recorded move.
    """
    model.eval()
    n = len(data)
    legal = played = with_move = 0
    with torch.inference_mode():
        for start in range(0, n, batch):
            block = data.take(slice(start, start + batch))
            out = model(*spec.tensors(block)).float().cpu()
            top = out.argmax(dim=1)
            mask = legal_mask(block)
            legal += int(mask[torch.arange(len(block)), top].sum())
            move = torch.from_numpy(np.asarray(block.move, dtype=np.int64))
            has = move >= 0
            with_move += int(has.sum())
            played += int((top[has] == move[has]).sum())
    return {"rows": n, "rows_with_move": with_move,
            "legal_share": legal / n if n else float("nan"),
            "top1_played": played / with_move if with_move else float("nan")}
