"""EL V20 (ours, beyond the original): EL/v19 with endings added to its data.

Not a version of the original. Everything is EL/v19's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule, the training and validation letters of data/full and
data/more) and one more folder: data/endings (``make endings-data``), games begun from the
start position with only the kings and a few men left on their home squares, so that
rook, minor-piece and pawn endings, rare in the other generators' games, are seen by
the hundred thousand. Their men are never put on random squares, as the independent
``endgames`` set's are: that set stays a generator no training data uses.

The test letters stay data/full's ``j``, so V20 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_endings_flip_256``.
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
MORE = ("data/more", "data/endings")
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
