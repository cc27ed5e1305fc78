"""The democracy's lab: the study that chooses it and the trainer of the original democracy.

* :mod:`~knights.lab.ensemble.study` (``make democracy``): when a democracy beats its best member, chosen on the
  selection sets and reported once on the final test set, with the members of :mod:`.study_members`, the bag of
  :mod:`.bagging`, the one-ply play of :mod:`.play` and the notebook of :mod:`.notebook`; its democracy is
  :class:`knights.evaluate.ensemble.Democracy` (``ensemble/democracy/democracy.json``).
* :mod:`~knights.lab.ensemble.train` (``knights ensemble``, with :mod:`.plan`, :mod:`.members` and :mod:`.results`):
  trains the original's classical learners (KNN, random forest, SVR, linear) and fits the ``democracy`` evaluator's
  weights (:mod:`knights.evaluate.democracy`, ``ensemble/models/``), which the learner notebooks still build on.
"""
