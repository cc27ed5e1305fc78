"""EL V2: V1's network on half the data (train a, validate b).

Original: same model and optimiser as V1 (SGD lr 0.035 momentum 0.9, 200 epochs),
trained on chunk a alone and validated on b: the run that showed V1's data was not
the bottleneck.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="signed", scalars=("turn", "check"))
TRAIN = TrainConfig(optimizer="sgd", lr=0.035, momentum=0.9, epochs=200, batch_size=25_000)
DATA = {"train": "a", "val": "b"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 6)], hidden=[128], n_extra=INPUTS.n_extra)
