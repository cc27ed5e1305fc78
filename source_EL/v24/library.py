"""EL V24 (ours, beyond the original): EL/v23 with the sound games grown to 700,000 played.

Not a version of the original. Everything is EL/v23's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule and a batch of 4,096, the training and validation
letters of data/full, data/more, data/endings, data/shallow, the three style sets and
data/sound) and one change: ``data/sound`` grown on from 300,044 played positions to
700,000 (``make style-data SET=sound``, now its default; the same games first, then more).
EL/v23's 114,203 more quiet rows of these games lowered ``games``' quiet-level error from
EL/v22's 0.793 to 0.752, the largest step one folder has made there, and ``endgames``' from
0.830 to 0.736; V24 asks whether more of them go on helping.

The test letters stay data/full's ``j``, so V24 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_endings_shallow_styles_sound700k_flip_256_b4096``.
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
MORE = ("data/more", "data/endings", "data/shallow", "data/again", "data/chaos", "data/cold", "data/sound")
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
