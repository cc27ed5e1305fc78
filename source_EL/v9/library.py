"""EL V9 (ours, beyond the original): V8's inputs plus side to move and check, 3x3 convolutions.

Not a version of the original. V5-V8 never saw whose move it is, yet a one-ply
evaluator judges positions where the opponent is to move: whether a piece hangs
depends on it. V9 keeps V8's six planes (+-1) and ten piece counts, adds side to
move and in-check, replaces the 5x5 + 3x3 convolutions by two 3x3 ones of 32
channels (the board stays 8x8 with padding 1), and trains with smaller batches
(4,096) at Adam lr 0.002 for more updates per epoch. Same data letters as V7/V8.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six", scalars=("turn", "check"), counts=True)
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=12, batch_size=4096)
DATA = {"train": "a-i except every 4th", "val": "every 4th except j"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(32, 3), (32, 3)], hidden=[256], n_extra=INPUTS.n_extra)
