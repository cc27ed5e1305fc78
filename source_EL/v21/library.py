"""EL V21 (ours, beyond the original): EL/v20 with the shallow style's games added to its data.

Not a version of the original. Everything is EL/v20's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule, the training and validation letters of data/full,
data/more and data/endings) and one more folder: data/shallow (``make shallow-data``),
games in which Stockfish plays the move its depth-8 labelling search ranked first after
iteration 1-4, against the same or Stockfish-eps. The aim was the plausible mistakes of a
short search, which the other generators' players (nearly best moves, or uniformly random
ones) do not make; as generated (the hash is kept through a game), these moves are closer to
the deep search's choice than a fresh short search's would be.
The independent ``games`` set's players (softmax over Stockfish's scores at node limits,
material alpha-beta, a one-ply material counter) are still used by no training data.

The test letters stay data/full's ``j``, so V21 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_endings_shallow_flip_256``.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=30, batch_size=16384, schedule="cosine", keep_best=True,
                    flip_files=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/more", "data/endings", "data/shallow")
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
