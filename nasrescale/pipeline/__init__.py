"""Pipeline files and their execution: the spec (``spec``), its tables (``tables``), protocol entries (``protocols``) and the runner (``runner``)."""
