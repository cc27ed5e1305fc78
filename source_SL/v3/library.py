"""SL V3: V2 with a tanh hidden layer and a higher learning rate.

Original: lr 0.003, tanh in one hidden layer; the rest as V2 (penalty 5000, SGD
momentum 0.9, 10 epochs). Which hidden layer is not known: ours is the first
(1024 wide); the other keeps LeakyReLU. Network otherwise V2's: Conv2d(1,64,k3,
padding 1) on the signed plane -> FC(4098,1024,2048,4096), batches of 64.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="signed", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.003, momentum=0.9, epochs=10, batch_size=64, eval_batch_size=2048)
DATA = {"train": "a", "val": "b"}
PARENT = None
PENALTY = 5000.0


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(64, 3)], hidden=[1024, 2048], n_extra=INPUTS.n_extra, out=4096,
                   tanh_layer=0)
