"""The report's machinery: :mod:`data` reads the results (strictly), :mod:`render` fills
``report/report.tex.j2`` and ``report/readme.md.j2`` with Jinja2 and checks them,
:mod:`figures` draws the figures, :mod:`readme` places README.md's generated block and
:mod:`datastats` computes the dataset statistics (``report/data_stats.py``)."""
