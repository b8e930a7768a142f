"""The results store of a run: writing rows and meta (``sqlite_store``) and reading them back (``read``)."""
