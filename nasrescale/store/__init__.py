"""The results store of a run: writing rows and meta (``write``) and reading them back (``read``)."""
