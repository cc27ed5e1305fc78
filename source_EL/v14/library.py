"""EL V14 (ours, beyond the original): EL V10's network, learned in win-probability space.

Not a version of the original. V10 is the best of the dense networks on the test letters
(j) and the quickest of the deep ones to train, so it is the one retrained when the
target changed: the same inputs (six piece planes, turn, check, piece counts, attack
maps and capture gains) and the same two 3x3 convolutions and 256-wide head, but the
loss is the squared error of the win probability (``knights.learn.targets``) instead of
L1 in pawns, as EL V13 learns. Unlike V13 it trains on every position, quiet or not: its
attack inputs see what a capture would win, and the one-ply bot asks it about positions
where the opponent may have a capture. Comparing it with V10 measures what the target
space alone buys for the same network.

Training: Adam at 0.002 lowered along a cosine, a random half of every batch mirrored to
the other colour, the best validation epoch kept; the same letters as V10, but 8 epochs
instead of 20 (about 40 minutes on one CPU core, 99 s on one H200). Its best epoch was
the last, so more epochs may help; that was not measured.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six", scalars=("turn", "check"), counts=True, attacks=True, gains=True)
TARGET = "win_probability"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=8, batch_size=4096,
                    schedule="cosine", keep_best=True, mirror=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(32, 3), (32, 3)], hidden=[256], n_extra=INPUTS.n_extra)
