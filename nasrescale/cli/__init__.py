"""Command-line interface: ``nasrescale <command>`` (see :func:`nasrescale.cli.main.main`)."""
