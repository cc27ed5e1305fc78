"""Stage 3, learn: data becomes a model.

The network family (:mod:`~knights.learn.nets`), the one training loop
(:mod:`~knights.learn.training`, run by several processes through
:mod:`~knights.learn.distributed`), the registry of versions and their safe model files
(:mod:`~knights.learn.registry`, :mod:`~knights.learn.modelfile`, :mod:`~knights.learn.store`),
the classical learners (:mod:`~knights.learn.learners`), experiments and held-out
results (:mod:`~knights.learn.experiment`, :mod:`~knights.lab.results.tables`). The notebooks
that drive them are an application (:mod:`knights.lab.notebooks`).
"""
