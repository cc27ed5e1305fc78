"""EL V16 (ours, beyond the original): EL/v15 on twice the grown data, the next point of the data curve.

Not a version of the original. Everything is EL/v15's (EL/v13's network and recipe: the
768 sparse piece-square features seen from each side, the 128-wide accumulator, the
32-32 head, the squared error of the win probability, quiet positions only, Adam with a
cosine schedule, the training and validation letters of data/full and data/more) but
the data: data/more grown from 1,000,000 to 2,000,000 played positions
(``make more-data MORE_POSITIONS=2000000``, the same three styles and seeds, so the first
million are the games EL/v15 saw, re-cut into new chunks). The test letters stay data/full's
``j``, so V16 is measured on the same rows as every other version. The ablation table
(``knights ablation``, variant ``quiet_wp_more_2m``) is this version, beside V15 and the same
recipe on a half and a quarter of data/full: one more step of the curve that asks whether
more positions still help.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=30, batch_size=16384, schedule="cosine", keep_best=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/more",)
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=128, head=(32, 32))
