"""SL V2: mini-batches, and a 64-channel convolution that keeps the 8x8 board.

Original: "batched, input 64*8*8+2"; otherwise as V1 (penalty 5000, SGD lr 0.001
momentum 0.9, 10 epochs). We read "64*8*8+2" the way V4 is written ("64+2": 64
convolution features + 2 scalars): 64 channels x 8 x 8 squares = 4096 features
plus side to move and in check, i.e. Conv2d(1,64,k3, padding 1) on the signed
plane -> FC(4098,1024,2048,4096). Kernel 3 with the project's padding 1 is the
smallest that sees neighbouring squares and keeps 8x8; the original's kernel is
not known. (The other reading, a batch of 64 inputs of 8*8+2 = 66, would make V2
the same network as V1; no 4096-wide encoding of a position is named anywhere
else.) "Batched": mini-batches of 64 (our choice; V1 took one position a step).
Penalty as in V1 (penalty x squared positive output on illegal cells).
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="signed", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.001, momentum=0.9, epochs=10, batch_size=64, eval_batch_size=2048)
DATA = {"train": "a", "val": "b"}
PARENT = None
PENALTY = 5000.0


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(64, 3)], hidden=[1024, 2048], n_extra=INPUTS.n_extra, out=4096)
