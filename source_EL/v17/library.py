"""EL V17 (ours, beyond the original): EL/v16 with every position that cannot castle also seen in a mirror, files a-h reversed.

Not a version of the original. Everything is EL/v16's (the 768 sparse piece-square
features seen from each side, the 128-wide accumulator, the 32-32 head, the squared
error of the win probability, quiet positions only, Adam with a cosine schedule, the
training and validation letters of data/full and of data/more grown to 2M positions)
but one setting: ``flip_files``. Chess is the same game reflected left to right except
for castling, so a position in which neither side may castle is worth what its mirror
image is worth. In every batch, half of those rows, drawn afresh, are reflected
(:meth:`knights.data.chunks.Encoded.file_flipped`): the network sees up to twice as
many distinct positions for the same labelled data, at no labelling cost. The colour
mirror the dense versions use would add nothing here, as the features already look the
same from either side. The ablation table (``knights ablation``, variant
``quiet_wp_more_2m_flip``) is this version beside EL/v16.
"""  # noqa: E501 - the first line is the one-line description in the metadata
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
    return SparseNet(hidden=128, head=(32, 32))
