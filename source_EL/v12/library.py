"""EL V12 (ours, beyond the original): residual blocks feeding a transformer over the 64 squares, predicting a win probability over 128 buckets.

Not a version of the original. The design of the "Gigafish" write-up, sized for a
laptop CPU: a residual block of 24 channels reads the local patterns, then every
square becomes a token (a learned embedding per square added) and two pre-norm
transformer blocks (width 32, two heads) let any square attend to any other, a
pinned piece to its king or a rook to the far end of an open file, in one step.
(Four heads or width 64 cost two to three times as much on a CPU: attention over
64 squares is most of the time of a decision.)

The value is not regressed in pawns: the head predicts a distribution over 128
buckets of the win probability ``sigmoid(0.368 x pawns)`` and trains with
cross-entropy on HL-Gauss targets (``knights.learn.buckets``), as DeepMind's
searchless chess transformer does; the expectation is turned back into pawns for
the evaluator interface. Inputs as V11; training as V11 but for 3 epochs (an epoch
of 812,350 rows takes about 14 minutes on one core of a 2-core laptop); same letters
as V10.
"""  # noqa: E501 - the first line is the one-line description in the metadata
from knights.features.inputs import InputSpec
from knights.learn.buckets import BucketHead, WinBuckets
from knights.learn.nets import SquareTransformer
from knights.learn.training import TrainConfig

INPUTS = InputSpec(planes="twelve", scalars=("turn", "check"), counts=True, attacks=True, gains=True)
BUCKETS = WinBuckets(bins=128)
TRAIN = TrainConfig(optimizer="adamw", lr=0.002, weight_decay=1e-4, epochs=3, batch_size=4096,
                    schedule="cosine", keep_best=True, mirror=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
PARENT = None


def build_model() -> SquareTransformer:
    return SquareTransformer(INPUTS.n_planes, channels=24, blocks=1, d_model=32, layers=2, heads=2, ff=64,
                             hidden=[64], head=BucketHead(64, BUCKETS), n_extra=INPUTS.n_extra)
