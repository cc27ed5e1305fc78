"""EL V18 (ours, beyond the original): EL/v17 with a 256-wide accumulator, on data/more grown to 3M positions.

Not a version of the original. Everything is EL/v17's (the 768 sparse piece-square
features seen from each side, the 32-32 head, the squared error of the win probability,
quiet positions only, files mirrored on half the rows that cannot castle, Adam with a
cosine schedule, the training and validation letters of data/full and data/more) but
two things, each measured first on its own in the ablation table (``knights ablation``):

* the data: data/more grown from 2,000,000 to 3,000,000 played positions
  (``make more-data MORE_POSITIONS=3000000``: the same three styles and seeds, so the first
  two million are the games EL/v16 and EL/v17 saw, re-cut into new chunks);
* the accumulator: 256 sums per side instead of 128 (variant ``quiet_wp_more_2m_flip_256``
  on EL/v17's data). Twice the columns to add and subtract when a piece moves in the
  search, and twice the first layer of the head.

The test letters stay data/full's ``j``, so V18 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_3m_flip_256``.
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
MORE = ("data/more",)
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
