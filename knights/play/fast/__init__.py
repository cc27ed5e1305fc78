"""The compiled search core: a numba board (:mod:`.board`), the alpha-beta search over it
(:mod:`.search`) with EL/v13 evaluated incrementally (:mod:`knights.play.incremental`),
and the driver that speaks python-chess (:mod:`.engine`)."""
