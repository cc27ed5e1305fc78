"""Application: the notebooks' helpers.

What the version and learner notebooks run: their templates and how they are written
and executed (:mod:`~knights.notebooks.build`), the plots and tables that teach
(:mod:`~knights.notebooks.teach`), and the recipe that trained the shipped models
through them (:mod:`~knights.notebooks.ship`, ``knights ship-models``).
"""
