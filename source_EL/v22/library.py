"""EL V22 (ours, beyond the original): EL/v21 with the three style sets added and a batch of 4,096.

Not a version of the original. Everything is EL/v21's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule, the training and validation letters of data/full,
data/more, data/endings and data/shallow) and two changes, each measured on data/full first
(``knights ablation``, report/results/ablation.json):

* three more folders, the style experiment's sets (``make style-data SET=cold``, ``chaos``,
  ``again``): Stockfish's fresh short searches, games with random moves at 20-50%, and
  data/full's own style from another seed. Together on data/full they lowered the error over
  whole sets and on ``j``'s quiet positions by more than two seeds differ (variant
  ``quiet_wp_styles_flip_256`` against ``quiet_wp_flip_256``); on ``games``' quiet positions
  the change was within that spread;
* a batch of 4,096 instead of 16,384: four times the steps for the same rows, which lowered the
  whole sets' error on data/full (``quiet_wp_flip_256_b4096``, and with the styles
  ``quiet_wp_styles_flip_256_b4096``).

The test letters stay data/full's ``j``, so V22 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_endings_shallow_styles_flip_256_b4096``.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=30, batch_size=4096, schedule="cosine", keep_best=True,
                    flip_files=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/more", "data/endings", "data/shallow", "data/again", "data/chaos", "data/cold")
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
