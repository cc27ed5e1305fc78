"""Data: the CSSLab CSV format, dataset generation and conversion, chunks, targets, cache."""
