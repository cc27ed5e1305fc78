"""A value as a win probability over buckets, the way EL V12 predicts it.

A regression head gives one number and an L1 or L2 loss. A *distributional* head
instead splits the range of the target into ``K`` buckets and predicts a
probability for each, trained with cross-entropy; the value is then the
expectation over the buckets. Two choices make that work well for chess:

* **The target is a win probability, not pawns.** ``p = sigmoid(k * pawns)`` with
  ``k = 0.368`` per pawn (Lichess's accuracy formula: a centipawn advantage ``cp``
  is a win chance of ``1 / (1 + exp(-0.00368208 cp))``). One pawn matters a lot
  at 0 and hardly at +8, and the uniform buckets over ``p`` say exactly that.
* **HL-Gauss targets.** Rather than a one-hot bucket, the target is a Gaussian
  around ``p`` with ``sigma = 0.75`` bucket widths, integrated over each bucket
  (Imani and White's histogram loss, as DeepMind's searchless chess transformer
  uses it). Neighbouring buckets share the mass, so the loss knows that bucket 31
  is closer to 32 than bucket 2 is.

The network's answer, in pawns for the one evaluator interface, is the inverse:
``pawns = logit(E[p]) / k``, clipped to the targets' range (+-10).

>>> b = WinBuckets()
>>> t = b.targets(torch.tensor([0.0, 3.0, -10.0]))
>>> t.shape, [round(float(s), 4) for s in t.sum(dim=1)]
(torch.Size([3, 128]), [1.0, 1.0, 1.0])
>>> [round(float(x), 2) for x in b.pawns(torch.log(t + 1e-12))]   # the targets' own expectation
[0.0, 3.0, -10.0]

With fewer buckets the Gaussian of a mate score is cut at p = 0 and the
expectation moves inward: 64 buckets give back 9.93 for 10, 32 give 9.28.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from knights.learn.targets import MAX_PAWNS, PAWN_LOGIT


@dataclass(frozen=True)
class WinBuckets:
    """``bins`` uniform buckets over the win probability [0, 1], HL-Gauss targets."""

    bins: int = 128
    sigma_ratio: float = 0.75   # the Gaussian's sigma in bucket widths

    @property
    def edges(self) -> torch.Tensor:
        return torch.linspace(0.0, 1.0, self.bins + 1)

    @property
    def centers(self) -> torch.Tensor:
        e = self.edges
        return (e[:-1] + e[1:]) / 2

    def win_probability(self, pawns: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(PAWN_LOGIT * pawns.clamp(-MAX_PAWNS, MAX_PAWNS))

    def targets(self, pawns: torch.Tensor) -> torch.Tensor:
        """``(N, bins)`` HL-Gauss distributions around each row's win probability."""
        p = self.win_probability(pawns.float()).unsqueeze(1)
        sigma = self.sigma_ratio / self.bins
        cdf = torch.special.ndtr((self.edges.to(p.device).unsqueeze(0) - p) / sigma)
        mass: torch.Tensor = cdf[:, 1:] - cdf[:, :-1]
        return mass / mass.sum(dim=1, keepdim=True)

    def loss(self, logits: torch.Tensor, pawns: torch.Tensor) -> torch.Tensor:
        """Cross-entropy between the predicted buckets and the HL-Gauss targets (mean over rows)."""
        target = self.targets(pawns.to(logits.device))
        return -(target * torch.log_softmax(logits.float(), dim=1)).sum(dim=1).mean()

    def pawns(self, logits: torch.Tensor) -> torch.Tensor:
        """Pawns from White's side: the expected win probability turned back."""
        p = (torch.softmax(logits.float(), dim=1) * self.centers.to(logits.device)).sum(dim=1)
        lo = torch.sigmoid(torch.tensor(-PAWN_LOGIT * MAX_PAWNS))
        p = p.clamp(float(lo), float(1 - lo))
        return torch.logit(p) / PAWN_LOGIT


class BucketHead(nn.Module):
    """The last layer of a bucket network: logits while training, pawns otherwise.

    Every consumer of an evaluation network (the evaluator, the search, the
    metrics) calls ``model(planes, extra)`` in eval mode and gets pawns; only the
    training loop, in train mode, sees the logits its loss needs.
    """

    def __init__(self, width: int, buckets: WinBuckets) -> None:
        super().__init__()
        self.buckets = buckets
        self.linear = nn.Linear(width, buckets.bins)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.linear(x)
        return logits if self.training else self.buckets.pawns(logits)
