"""EL V13 (ours, beyond the original): an efficiently updatable network (NNUE-style) over sparse piece-square features, learned in win-probability space.

Not a version of the original. V1-V12 read the board as dense planes through
convolutions, and on quiet, level positions they erred about as much as counting
material. V13 follows Stockfish's NNUE instead (``knights.learn.nnue``): each piece on
its square, seen from each side, is one of 768 features; the first layer adds one
learned column of 128 numbers per piece (the accumulator, kept per side), and a head of
two 32-wide layers turns both sides' sums into the mover's win-probability logit. A
move changes two to four features, so a search updates the accumulators instead of
recomputing them (``knights.engine.incremental``).

What it learns is new too: the squared error of the win probability
(``knights.learn.targets``), not L1 in pawns, so level positions, where every move
choice is made, weigh most, and the decided and mated ones little. And it learns only
from quiet positions (``TRAIN_ON``: not in check, no capture that wins material), as
Stockfish's trainer skips positions whose value hangs on a capture: a search resolves
those with its capture search, and a static network only adds noise by guessing them
(a 20-epoch pilot on data/full: MAE on quiet positions within a pawn of level 0.441 on j
against 0.507 when trained on every position). Adam at 0.002 with
a cosine schedule, batches of 16,384, the best validation epoch kept; the same letters
as V10-V12. Colour mirroring adds nothing here: the features are already seen from the
mover's side.
"""  # noqa: E501 - the first line is the one-line description in the metadata
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=30, batch_size=16384, schedule="cosine", keep_best=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=128, head=(32, 32))
