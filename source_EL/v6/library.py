"""EL V6: a second convolution (16 -> 32, 3x3), continued from V5.

Original: Conv2d(6,16,k5) + Conv2d(16,32,k3) -> FC(1152,512,1), Adam lr 0.006,
50 epochs, train a-d / validate e,f, started from the previous checkpoint. The
layers V6 shares with V5 (the first convolution) start from V5's weights; the new
ones start fresh.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six")
TRAIN = TrainConfig(optimizer="adam", lr=0.006, epochs=50, batch_size=25_000)
DATA = {"train": "a-d", "val": "e,f"}
PARENT = "EL/v5"


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5), (32, 3)], hidden=[512], n_extra=INPUTS.n_extra)
