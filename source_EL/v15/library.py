"""EL V15 (ours, beyond the original): EL/v13's network and recipe, trained on data/full and the grown data/more together.

Not a version of the original. Everything but the data is EL/v13's: the 768 sparse
piece-square features seen from each side, the 128-wide accumulator, the 32-32 head,
the squared error of the win probability, quiet positions only, Adam with a cosine
schedule. The one change is ``MORE``: the training and validation letters of
``data/more`` join those of ``data/full`` (the test letters stay data/full's ``j``, so
V15 is measured on the same rows as every other version). The shipped weights learned from
the data/more that ``make more-data MORE_POSITIONS=1000000`` grows. data/more holds positions from
three other generator styles (``make more-data``, ``knights.data.grow``): odd openings
followed by players of mixed strength, near-perfect Stockfish games that reach endgames,
and material-odds games, so V15 sees unbalanced material and long endgames that data/full
rarely has. The ablation table (``knights ablation``, variant ``quiet_wp_more``) is this
version, beside the same recipe on a half and a quarter of data/full.
"""  # noqa: E501 - the first line is the one-line description in the metadata
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
