"""EL V19 (ours, beyond the original): EL/v18 on data/more grown to 4.5M positions.

Not a version of the original. Everything is EL/v18's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule, the training and validation letters of data/full and
data/more) but the data: data/more grown from 3,000,000 to 4,500,000 played positions
(``make more-data MORE_POSITIONS=4500000``: the same three styles and seeds, so the first
three million are the games EL/v18 saw, re-cut into new chunks). With data/full, that is
over five million labelled positions, the data size the ablation table's last row measures.

The test letters stay data/full's ``j``, so V19 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_flip_256``.
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
