"""Reports of a finished run: the retrain report (``report``), its markdown and plots (``markdown``, ``plots``) and the LR-validation report (``lr_validation``)."""
