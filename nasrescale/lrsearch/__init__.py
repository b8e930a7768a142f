"""The base-LR grid search (``search``), its selection rule (``select``) and the validation of the LR rule against measured maximal LRs (``validation``)."""
