"""EL V4: six piece-type planes replace the signed plane.

Original: Conv2d(6,16,k5) -> FC(578,512,1), inputs six planes + side to move +
capture, Adam lr 0.006, 25 epochs, train a-d / validate d-g (ours: e-g, no overlap).
Planes hold +-1 (the paper); the shipped code wrote the piece code +-1..6 instead.
"capture" says whether the move played from the position captures: known in the
data, unknown (0) when the engine evaluates a position, a leak we reproduce and measure.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six", scalars=("turn", "capture"))
TRAIN = TrainConfig(optimizer="adam", lr=0.006, epochs=25, batch_size=25_000)
DATA = {"train": "a-d", "val": "e-g"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5)], hidden=[512], n_extra=INPUTS.n_extra)
