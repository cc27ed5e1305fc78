"""Application: the notebooks' helpers.

What the version and learner notebooks run: their templates and how they are written
and executed (:mod:`~knights.lab.notebooks.build`), the plots and tables that teach
(:mod:`~knights.lab.notebooks.teach`), and the recipe that trained the shipped models
through them (:mod:`~knights.lab.notebooks.ship`, ``knights ship-models``).
"""
