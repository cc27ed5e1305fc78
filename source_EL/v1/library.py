"""EL V1: one plane of signed piece codes, one 6x6 convolution, SGD.

Original: Conv2d(1,16,k6) -> FC(402,128,1), inputs board + side to move + in check,
SGD lr 0.035 momentum 0.9, 200 epochs, trained on chunks a,b and validated on c,d.
With padding 1 the 6x6 kernel leaves 16 x 5 x 5 = 400 features, + 2 scalars = 402.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="signed", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.035, momentum=0.9, epochs=200, batch_size=25_000)
DATA = {"train": "a,b", "val": "c,d"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 6)], hidden=[128], n_extra=INPUTS.n_extra)
