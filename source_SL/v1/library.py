"""SL V1: a fully connected move network on the 64 signed squares, one position at a time.

Original: FC(66,1024,2048,4096): the 64 signed piece codes, side to move and in
check in; a 64 x 64 (from, to) grid out. Loss: MSE against the move played plus
a penalty of 5000 for output on illegal moves; SGD lr 0.001 momentum 0.9, 10
epochs. V2 is the version that is "batched", so V1 trained position by position:
batch size 1 here. That is slow: about 0.13 s a step, 4-5 hours a 130k-row epoch
on a busy 2-core CPU; pass the notebook a batch_size (e.g. 64) to run it there.
Our choices: the penalty term is penalty x the squared positive output on illegal
from/to cells (knights/learn/moves.py); train on chunk a, validate on b (the original's
chunks are not known; 4096 outputs make larger runs slow).
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="none", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.001, momentum=0.9, epochs=10, batch_size=1, eval_batch_size=2048)
DATA = {"train": "a", "val": "b"}
PARENT = None
PENALTY = 5000.0


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[], hidden=[1024, 2048], n_extra=INPUTS.n_extra, out=4096)
