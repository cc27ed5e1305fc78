"""Stage 1, data: labelled positions as rows and arrays.

The CSSLab CSV format (:mod:`~knights.data.csslab`), generating it with real Stockfish
(:mod:`~knights.data.generate`, through the client in :mod:`~knights.data.stockfish`),
labelling in shards that merge into the same file (:mod:`~knights.data.shards`),
the independent test sets' Stockfish labels, endgames and de-duplication
(:mod:`~knights.data.independent`), converting other sources into it
(:mod:`~knights.data.convert`), and reading chunk
files into :class:`~knights.data.chunks.Encoded` arrays through an on-disk cache.
Imports only :mod:`knights.board`.
"""
