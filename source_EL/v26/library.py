"""EL V26 (ours, beyond the original): EL/v25 taught to order a position's moves as Stockfish does.

Not a version of the original. The network is EL/v25's (the 768 sparse piece-square features seen from each side,
a 256-wide accumulator, the 32-32 head, the squared error of the win probability on quiet positions, files mirrored
on half the rows that cannot castle, Adam with a cosine schedule and a batch of 4,096), and it starts from EL/v25's
shipped weights (``PARENT``). What is new is a second loss (``RANKING``, :mod:`knights.learn.siblings`): every batch
also takes about 1,700 positions of data/sound2's games from ply 20 on, where Stockfish chose the move, and asks the
network about each of their quiet children, as the one-ply player does; the cross-entropy of a softmax over those
children toward Stockfish's move is added to the win-probability loss at ``RANKING.weight``.

Why: the win-probability loss never compares two positions, and two quiet moves lead to children with the same
material, so a network can be right about material and blind to which of them is better. The sibling loss is a
signal that only positional judgement can lower.

What it did, measured in first runs on the same data (1-4 min each, the network judged where the captures end, as
the one-ply player judges): it did not change the order of moves much (the network's best quiet child was
Stockfish's move on 44.1% of held-out sound2 positions against EL/v25's 44.9%, and the one-ply choice on 33.8%
against 33.9%), but it lowered the error on quiet positions near level of the games of other players. The weight
trades: the larger it is, the lower that error on ``games`` and ``tactics`` and the higher on ``j`` and in win
probability (weights 0.001, 0.01 and 0.1 for 2 epochs, then 0.003, 0.01 and 0.03 for 4). The weight and length
were chosen on a validation twin of the games set (the same generator from another seed, 2,000 positions labelled
at depth 12, 208 quiet and within a pawn: ``knights data independent --sets games --rows 2000 --seed 4243 --out
runs/validation``): 0.01 for 2 epochs erred 0.498 there (EL/v25 0.504, the same weight for 4 epochs 0.505), while
its win-probability error on data/sound2's validation letters rose 9% (0.0374 to 0.0409).

The data is EL/v25's (data/sound2's training letters, ``TRAIN_MAIN = False``), the rate EL/v25's, 2 epochs; the
kept epoch is the last (``keep_best=False``): the validation loss is the win-probability loss alone, which the
ranking trades a little of for the order of moves. The test letters stay data/full's ``j``.
"""
from knights.features.sparse import SparseSpec
from knights.learn.nnue import SparseNet
from knights.learn.siblings import Ranking
from knights.learn.training import TrainConfig

INPUTS = SparseSpec()
TARGET = "win_probability"
TRAIN_ON = "quiet"
TRAIN = TrainConfig(optimizer="adam", lr=0.0002, epochs=2, batch_size=4096, schedule="cosine", keep_best=False,
                    flip_files=True)
DATA = {"train": "a-i except every 10th", "val": "every 10th except j"}
MORE = ("data/sound2",)
TRAIN_MAIN = False      # data/full's training letters are left out (EL/v24 learned them); its validation letters stay
PARENT = "EL/v25"
RANKING = Ranking(weight=0.01, folders=("data/sound2",), parents=300_000)


def build_model() -> SparseNet:
    return SparseNet(hidden=256, head=(32, 32))
