"""Sibling ranking: teach a value network to order a position's moves as Stockfish does (EL V26).

A one-ply player asks its evaluator about every child of the position and plays the move to the
best one, so what it needs from a network is the *order* of siblings, not the level of any one of
them. The win-probability loss (:class:`knights.learn.training.WinProbTask`) never compares two
positions: a network can be right about material to within a pawn and still not know which of two
quiet moves is better, because both children have the same material. Here each training step also
takes a batch of *parents*, positions where Stockfish chose the move (data/sound2's games after the
opening, :data:`MIN_PLY`), and scores every child the network would be asked about in play::

    child i of parent p:   s_i = -z_i * exp(log_scale)        (z_i: the child's mover's logit)
    loss_p = -log softmax(s)_played                           (cross-entropy toward Stockfish's move)
    loss   = win-probability loss of the batch + weight * mean_p loss_p

The children compared are the quiet ones (:func:`knights.features.attacks.quiet`: the opponent
is not in check and has no capture that wins material), because the others are not the network's
to judge in play: the capture search (``+quiesce``) resolves them first. A parent whose played move
leads to a position that is not quiet, or that has fewer than two quiet children, is left out.
``log_scale`` is a temperature, learned beside the network and not part of the shipped weights. It starts where the
starting network's own verdicts predict Stockfish's moves best (:func:`fitted_scale`): at Adam's small rates it
moves little, and started anywhere else the loss is lowered most cheaply by widening or narrowing every verdict,
not by ordering them (a first EL/v26 started at 10, three times the fitted value, and mostly pulled its values
toward level).

>>> import chess
>>> board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
>>> family = siblings_of([(board, chess.Move.from_uci("f1b5"))])
>>> len(family), int(family.first[1]) > 20          # one parent, its quiet children
(1, True)
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import numpy as np
import torch
from torch import nn

from knights.board.children import expand
from knights.board.positions import Positions
from knights.data.chunks import Encoded
from knights.features.attacks import quiet
from knights.features.sparse import MAX_PIECES, SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import WinProbTask

MIN_PLY = 20
"""Parents from this ply on: before it a sound game's players draw among plausible moves
(:data:`knights.data.generate.SOUND_PLIES`), after it they play Stockfish's best."""
MAX_LOSS = 0.3
"""A parent whose played move lost more than this many pawns (the data's ``cp_loss``) is left out: after the
opening a sound player plays a random move 2% of the time (:data:`knights.data.generate.SOUND_EPSILON`)."""


@dataclass(frozen=True)
class Ranking:
    """A version's ``RANKING``: the sibling loss's ``weight`` and the folders whose games give the parents (their
    training letters; folders of Stockfish's own moves, as data/sound2: data/full's movers are partly random)."""

    weight: float = 0.01
    folders: tuple[str, ...] = ("data/sound2",)
    parents: int = 300_000
    """At most this many played positions are read, the files in order (about 70% of them become parents)."""


@dataclass
class Siblings:
    """Parents and their quiet children as the network reads them: the children's feature lists
    (``stm``: the child's mover's, ``other``: the parent's mover's; int16, one row a child), parent ``p``'s
    children in rows ``first[p]:first[p + 1]``, which of them Stockfish played (``played[p]``), and each child's
    move as its place in its parent's ``board.legal_moves`` (``move_index``, int16: to name the moves)."""

    stm: np.ndarray
    other: np.ndarray
    first: np.ndarray
    played: np.ndarray
    move_index: np.ndarray

    def __len__(self) -> int:
        return len(self.played)

    def batch(self, parents: np.ndarray) -> tuple[torch.Tensor, ...]:
        """The children of ``parents`` (ascending rows of each), how many each has, and the played one's place."""
        starts, ends = self.first[parents], self.first[parents + 1]
        lens = ends - starts
        rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
        return (torch.from_numpy(self.stm[rows].astype(np.int64)), torch.from_numpy(self.other[rows].astype(np.int64)),
                torch.from_numpy(lens), torch.from_numpy(self.played[parents]))


def siblings_of(chosen: Iterable[tuple[chess.Board, chess.Move]], spec: SparseSpec | None = None) -> Siblings:
    """The quiet children of each board, ``move``'s child marked; a board whose move leads to a position that is not
    quiet, or with fewer than two quiet children, is left out. The children of all boards are judged quiet at once."""
    spec = spec or SparseSpec()
    squares, checks, whites, counts, played = [], [], [], [], []
    for board, move in chosen:
        kids = expand(board)
        if move not in kids.moves:
            raise ValueError(f"{move.uci()} is not a legal move in {board.fen()}")
        squares.append(kids.squares)
        checks.append(kids.check)
        whites.append(np.full(len(kids), not board.turn, dtype=np.int8))       # the children's mover
        counts.append(len(kids))
        played.append(kids.moves.index(move))
    if not counts:
        empty = np.zeros((0, MAX_PIECES), np.int16)
        return Siblings(empty, empty, np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int16))
    everyone = Positions(np.concatenate(squares), np.concatenate(whites), np.concatenate(checks).astype(np.int8),
                         np.zeros(sum(counts), np.int8))
    calm = quiet(everyone.squares, everyone.white, everyone.check)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    quiet_counts = np.add.reduceat(calm, starts)
    kept = calm[starts + np.asarray(played)] & (quiet_counts >= 2)
    rows = calm & np.repeat(kept, counts)
    # the played child's place among its parent's quiet children
    before = np.cumsum(calm) - calm
    place = (before[starts + np.asarray(played)] - before[starts])[kept]
    first = np.concatenate([[0], np.cumsum(quiet_counts[kept])])
    stm, other, _ = spec.encode(Positions(everyone.squares[rows], everyone.white[rows], everyone.check[rows],
                                          everyone.capture[rows]))
    move_index = np.arange(len(calm)) - np.repeat(starts, counts)         # each child's move among its parent's
    return Siblings(stm.astype(np.int16), other.astype(np.int16), first.astype(np.int64), place.astype(np.int64),
                    move_index[rows].astype(np.int16))


def played_positions(files: Sequence[Path], *, min_ply: int = MIN_PLY,
                     max_loss: float = MAX_LOSS) -> Iterable[tuple[chess.Board, chess.Move]]:
    """Every (position, move played) of the chunk files from ``min_ply`` on whose move lost at most ``max_loss``."""
    for path in files:
        with open(path, newline="") as fh:
            for i, row in enumerate(csv.DictReader(fh), start=2):
                try:
                    if int(row["move_ply"]) < min_ply or float(row["cp_loss"] or 0) > max_loss:
                        continue
                    yield chess.Board(row["board"]), chess.Move.from_uci(row["move"])
                except (KeyError, ValueError) as exc:
                    raise ValueError(f"{path}, row {i}: not a played position ({exc})") from exc


def gather(files: Sequence[Path], limit: int | None = None, *, progress: bool = True) -> Siblings:
    """:func:`siblings_of` the first ``limit`` played positions of ``files`` (all by default)."""
    from itertools import islice

    from tqdm.auto import tqdm

    pairs = tqdm(islice(played_positions(files), limit), total=limit, desc="positions and their children",
                 unit="position", disable=not progress, mininterval=2)
    return siblings_of(pairs)


def fitted_scale(net: SparseNet, family: Siblings, parents: int = 4096, seed: int = 0) -> float:
    """The temperature (of 60 between 0.3 and 30) whose softmax over ``net``'s verdicts gives Stockfish's moves the
    lowest mean cross-entropy on ``parents`` parents of ``family`` drawn from ``seed``."""
    if not len(family):
        return 1.0
    chosen = np.sort(np.random.default_rng(seed).choice(len(family), min(parents, len(family)), replace=False))
    stm, other, lens, played = family.batch(chosen)
    was = net.training
    net.eval()
    with torch.inference_mode():
        z = -net.logit(stm, other)
    net.train(was)
    best, best_loss = 1.0, float("inf")
    for scale in np.geomspace(0.3, 30, 60):
        with torch.inference_mode():
            loss = float(RankedNet.softmax_loss(z * float(scale), lens, played).mean())
        if loss < best_loss:
            best, best_loss = float(scale), loss
    return best


class RankedNet(nn.Module):
    """A value network (:class:`knights.learn.nnue.SparseNet`) with the temperature the ranking loss learns.
    ``forward(mover, other, white)`` is the network's; given a batch of siblings too (in train mode), the
    output is the values followed by each parent's cross-entropy."""

    def __init__(self, net: SparseNet, scale: float = 10.0) -> None:
        super().__init__()
        self.net = net
        self.log_scale = nn.Parameter(torch.tensor(float(np.log(scale))))

    def forward(self, mover: torch.Tensor, other: torch.Tensor, white: torch.Tensor,
                kid_stm: torch.Tensor | None = None, kid_other: torch.Tensor | None = None,
                lens: torch.Tensor | None = None, played: torch.Tensor | None = None) -> torch.Tensor:
        values: torch.Tensor = self.net(mover, other, white)
        if not self.training or kid_stm is None or lens is None or played is None or kid_other is None:
            return values
        return torch.cat([values, self.cross_entropy(kid_stm, kid_other, lens, played).to(values.dtype)])

    def cross_entropy(self, kid_stm: torch.Tensor, kid_other: torch.Tensor, lens: torch.Tensor,
                      played: torch.Tensor) -> torch.Tensor:
        """Each parent's cross-entropy of the softmax over its children's scores toward the played one."""
        return self.softmax_loss(-self.net.logit(kid_stm, kid_other) * self.log_scale.exp(), lens, played)

    @staticmethod
    def softmax_loss(scores: torch.Tensor, lens: torch.Tensor, played: torch.Tensor) -> torch.Tensor:
        """Each parent's cross-entropy toward its played child (its children's ``scores`` in a row)."""
        parents = len(lens)
        row = torch.repeat_interleave(torch.arange(parents, device=lens.device), lens)
        starts = torch.cumsum(lens, 0) - lens
        col = torch.arange(len(scores), device=lens.device) - torch.repeat_interleave(starts, lens)
        table = scores.new_full((parents, int(lens.max())), float("-inf")).index_put((row, col), scores)
        return nn.functional.cross_entropy(table, played, reduction="none")


@dataclass(frozen=True)
class SiblingTask(WinProbTask):
    """:class:`WinProbTask` for a :class:`RankedNet`, each batch with ``per_batch`` parents drawn from
    ``siblings`` (a fresh draw every batch, from ``seed``); the loss adds ``weight`` x their mean cross-entropy.
    Validation batches are the value loss alone (the network is in eval mode)."""

    siblings: Siblings = field(default=None, repr=False)  # type: ignore[assignment]
    weight: float = 0.01
    per_batch: int = 1024
    seed: int = 0
    _rng: np.random.Generator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rng", np.random.default_rng(self.seed))

    def key(self) -> dict[str, object]:
        """What of the ranking a checkpoint must agree on (:func:`knights.learn.training.config_key`)."""
        return {"ranking_weight": self.weight, "parents_per_batch": self.per_batch, "ranking_seed": self.seed,
                "parents": len(self.siblings), "children": int(self.siblings.first[-1])}

    def inputs(self, block: Encoded, device: torch.device) -> tuple[torch.Tensor, ...]:
        values = super().inputs(block, device)
        if not len(self.siblings):
            return values
        parents = np.sort(self._rng.choice(len(self.siblings), min(self.per_batch, len(self.siblings)), replace=False))
        return values + tuple(t.to(device, non_blocking=True) for t in self.siblings.batch(parents))

    def loss(self, output: torch.Tensor, block: Encoded, device: torch.device) -> torch.Tensor:
        n = len(block)
        value = super().loss(output[:n], block, device)
        return value + self.weight * output[n:].mean() if len(output) > n else value
