"""Stage 2, features: what a model sees of a position.

Board planes and piece counts (:mod:`~knights.features.planes`), attack maps and
capture gains computed for a whole batch with bitboards (:mod:`~knights.features.attacks`),
and the :class:`~knights.features.inputs.InputSpec` by which a version declares its
inputs once, for training and for play alike.
"""
