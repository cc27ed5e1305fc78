"""EL V23 (ours, beyond the original): EL/v22 with the sound games added.

Not a version of the original. Everything is EL/v22's (the 768 sparse piece-square
features seen from each side, a 256-wide accumulator, the 32-32 head, the squared error of
the win probability, quiet positions only, files mirrored on half the rows that cannot
castle, Adam with a cosine schedule and a batch of 4,096, the training and validation
letters of data/full, data/more, data/endings, data/shallow and the three style sets) and
one change, measured on data/full first (``knights ablation``, report/results/ablation.json):

* one more folder, the sound games' first 300,044 played positions (203,160 new), ``data/sound300k``: ``make
  style-data SET=sound300k`` puts it together from data/sound's parts (it was data/sound then; EL/v24 trained on that
  folder grown on to 700,000): games of Stockfish against
  itself from the start position with no random plies, the first 20 plies each the move its
  labelling search ranked first after a drawn iteration. Every other style opens with random
  plies; the independent ``games`` set's largest gap to Stockfish at depth 1 was in games
  between two Stockfish players, which do not. On data/full (variant ``quiet_wp_sound_flip_256``
  against the control ``quiet_wp_again_flip_256``, the same amount of data/full's own style)
  it lowered ``games``' quiet-level error from 1.005 to 0.933 with fewer new rows (203,160
  against 266,030), more than two training seeds differ there (1.023, 0.980), and the error on
  ``j``, ``tactics`` and ``endgames`` as well.

The test letters stay data/full's ``j``, so V23 is measured on the same rows as every other
version. Its ablation row is ``quiet_wp_more_4500k_endings_shallow_styles_sound_flip_256_b4096``.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.002, epochs=30, batch_size=4096, schedule="cosine", keep_best=True,
                    flip_files=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/more", "data/endings", "data/shallow", "data/again", "data/chaos", "data/cold", "data/sound300k")
PARENT = None


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
