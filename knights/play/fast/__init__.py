"""The compiled search core: a numba board (:mod:`.board`), the alpha-beta search over it
(:mod:`.search`) with a sparse network (EL/v24 by default) evaluated incrementally (:mod:`knights.play.incremental`),
and the driver that speaks python-chess (:mod:`.engine`)."""
