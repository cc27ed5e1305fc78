"""EL V8: six planes plus the ten piece counts, a narrower head.

Paper: Conv2d(6,16,k5) + Conv2d(16,30,k3) -> FC(1080,384,1), Adam lr 0.0065,
30 epochs, all data / every 4th. We follow the paper's layers and feed the piece
counts beside the 1080 convolution features (1090 -> 384 -> 1). The shipped code
differed: Conv(16,24,k3) and FC(24*6*6 + 10, 256, 1).
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six", counts=True)
TRAIN = TrainConfig(optimizer="adam", lr=0.0065, epochs=30, batch_size=25_000)
DATA = {"train": "a-i except every 4th", "val": "every 4th except j"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5), (30, 3)], hidden=[384], n_extra=INPUTS.n_extra)
