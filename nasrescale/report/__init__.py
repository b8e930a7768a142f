"""Reports of finished runs, one room per pipeline kind: ``retrain``, ``trend``, ``calibration``,
``lr_validation``, ``landscape``, over ``common`` (Markdown, figures, provenance, verdicts, the
section machinery and the readers several kinds share); ``kind_reports`` maps a stored kind to its
room's writer, ``results_index`` and ``readme_table`` read across runs."""
