"""EL V25 (ours, beyond the original): EL/v24 continued on new sound games.

Not a version of the original. The network is EL/v24's (the 768 sparse piece-square features
seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of the win
probability, quiet positions only, files mirrored on half the rows that cannot castle, Adam with
a cosine schedule and a batch of 4,096), and it starts from EL/v24's shipped weights
(``PARENT``): what EL/v24 learned from its 3.8 million rows stays, and V25 goes on learning from

* ``data/sound2`` (``make style-data SET=sound2``): 1,500,000 more positions played in EL/v24's
  best folder's style (Stockfish against itself from the start position, no random plies; a
  second seed; 900,759 new positions, 501,029 quiet training rows)

at a tenth of EL/v24's learning rate for 4 epochs, on ``data/sound2`` alone (``TRAIN_MAIN = False``: data/full's
training letters, which EL/v24 has learned, are left out; its validation letters stay). So V25 needs only data/full,
data/sound2 and EL/v24's shipped file, not the seven grown folders EL/v24 trained on.

Chosen by first runs on the sound2 games played so far (309,174 kept, runs of 17-40 s): with data/full's training
letters as well, the validation loss rose from the first epoch on (EL/v24 has learned those rows by heart: its
training loss was 0.00237 against 0.00376 on validation) and ``games``' quiet-level error fell only from 0.741 to
0.727; on the new games alone it fell to 0.692, at a rate of 0.0001, 0.0002 or 0.0005 alike (0.692-0.695). On all of
data/sound2, 8 epochs at 0.0002 or 0.0005 were no better than these 4 where it counts, judged where the captures end
with the mirrored twin (knights.engine.incremental.files_mirrored): 0.620 and 0.621 against 0.616.

The test letters stay data/full's ``j``, so V25 is measured on the same rows as every other
version. Its ablation row is ``v24_then_sound2``.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.0002, epochs=4, batch_size=4096, schedule="cosine", keep_best=True,
                    flip_files=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/sound2",)
TRAIN_MAIN = False      # data/full's training letters are left out (EL/v24 learned them); its validation letters stay
PARENT = "EL/v24"


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
