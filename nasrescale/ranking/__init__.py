"""Ranking architectures from stored results: rank statistics (``rank``), text tables (``text``), comparisons (``compare``) and result sources (``sources``)."""
