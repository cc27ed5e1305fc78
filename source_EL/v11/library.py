"""EL V11 (ours, beyond the original): a residual CNN with global pooling over twelve piece planes and V10's attack inputs.

Not a version of the original. V1-V10 flatten the convolutions' output into one
long vector, so the head learns a weight for every (channel, square) pair and the
convolutions stay shallow (two layers: a piece sees two squares around it). V11
follows the residual design of the "cockfish" blog instead: a stem and three residual
blocks of 32 channels (seven 3x3 layers, so information crosses the whole board),
then the average and the maximum of each channel over the 64 squares, the extras,
and a small head. The inputs are V10's with one change: a 0/1 plane per colour and
piece type (twelve planes) instead of six signed ones.

Training: AdamW at 0.002 with a cosine schedule, mirrored halves of every batch
and the best validation epoch kept, as V10, but for 9 epochs (an epoch of 812,350
rows takes about 11 minutes on one core of a 2-core laptop); same letters as V10.
"""  # noqa: E501 - the first line is the one-line description in the metadata
from knights.features.inputs import InputSpec
from knights.learn.nets import PooledResNet
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="twelve", scalars=("turn", "check"), counts=True, attacks=True, gains=True)
TRAIN = TrainConfig(optimizer="adamw", lr=0.002, weight_decay=1e-4, epochs=9, batch_size=4096,
                    schedule="cosine", keep_best=True, mirror=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
PARENT = None


def build_model() -> PooledResNet:
    return PooledResNet(INPUTS.n_planes, channels=32, blocks=3, hidden=[128], n_extra=INPUTS.n_extra)
