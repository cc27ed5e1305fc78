"""Application: the lab, where everything is measured.

Games and ratings (:mod:`knights.lab.arena`), speed (:mod:`knights.lab.bench`), the results tables
(:mod:`knights.lab.results`), the classical learners' democracy trainer (:mod:`knights.lab.ensemble`), the
ablation and the seed spread (:mod:`~knights.lab.ablation`, :mod:`~knights.lab.seeds`), the notebooks' helpers
(:mod:`knights.lab.notebooks`) and the settings the report quotes (:mod:`~knights.lab.settings`). Every
measurement is written as JSON under ``report/results/``, which the README and the report read.
"""
