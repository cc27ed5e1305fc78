"""EL V3: a 5x5 convolution, a wider head, and Adam.

Original: Conv2d(1,16,k5) -> FC(578,512,1) (16 x 6 x 6 + 2 scalars), Adam lr 0.006,
40 epochs, train a-d / validate d-g. The original's validation letters overlapped
training (d); ours do not: validate on e-g.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="signed", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="adam", lr=0.006, epochs=40, batch_size=25_000)
DATA = {"train": "a-d", "val": "e-g"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5)], hidden=[512], n_extra=INPUTS.n_extra)
