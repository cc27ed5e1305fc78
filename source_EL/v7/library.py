"""EL V7: V6 continued on (nearly) all the data.

Original: V6's network and weights, Adam lr 0.006, 50 more epochs on chunks a-p,
validated on every 4th chunk (which were also trained on). Ours trains on every
chunk except the test letter and every 4th chunk, and validates on those 4th chunks.
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six")
TRAIN = TrainConfig(optimizer="adam", lr=0.006, epochs=50, batch_size=25_000)
DATA = {"train": "a-i except every 4th", "val": "every 4th except j"}
PARENT = "EL/v6"


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5), (32, 3)], hidden=[512], n_extra=INPUTS.n_extra)
