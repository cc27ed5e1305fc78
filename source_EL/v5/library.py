"""EL V5: six planes and nothing else.

Original: V4's network without the scalar inputs, Adam lr 0.006, 50 epochs, train
a-d / validate e,f. Without side to move, 16 x 6 x 6 = 576 features feed FC(576,512,1)
(the paper's table says "as V4"; with no scalars the width is 576, not 578).
"""
from knights.features.inputs import InputSpec
from knights.learn.nets import ConvNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="six")
TRAIN = TrainConfig(optimizer="adam", lr=0.006, epochs=50, batch_size=25_000)
DATA = {"train": "a-d", "val": "e,f"}
PARENT = None


def build_model() -> ConvNet:
    return ConvNet(INPUTS.n_planes, convs=[(16, 5)], hidden=[512], n_extra=INPUTS.n_extra)
