"""``python -m nasrescale`` runs the command-line interface."""

import sys

from nasrescale.cli.main import main

sys.exit(main())
