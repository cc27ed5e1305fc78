"""Stage 4, evaluate: a model becomes an evaluator.

Every judge of positions (a network, a classical learner, the democracy ensemble,
counting material, each optionally with the threat term) is an
:class:`~knights.evaluate.base.Evaluator`: positions in, pawns from White's side out,
batched. :mod:`~knights.evaluate.names` is the one place that turns a name such as
``"democracy+threats"`` into one.
"""
