"""SL V4: three planes, one board-sized 8x8 convolution, a lower penalty and a huge learning rate.

Original: Conv2d(3,64,k8) + FC(64+2,1024,2048,4096), penalty 250, SGD lr 0.75
momentum 0.9 (epochs not stated: V1's 10 kept). The three planes are White's
codes, Black's codes and empty squares; with no padding the 8x8 kernel covers the
whole board once, leaving 64 features, + side to move and in check = 66.
Batches of 64 as V2 (our choice). Penalty term as in V1 (penalty x squared
positive output on illegal cells).
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="three", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.75, momentum=0.9, epochs=10, batch_size=64, eval_batch_size=2048)
DATA = {"train": "a", "val": "b"}
PARENT = None
PENALTY = 250.0


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(64, 8)], hidden=[1024, 2048], n_extra=INPUTS.n_extra, out=4096,
                   padding=0)
