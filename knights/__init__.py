"""Knights and Kernels: one-ply chess evaluators (CNNs, classical learners and their
ensemble) trained on Stockfish-labelled positions, and the bot that plays with them."""

__version__ = "0.1.0"
