"""``python -m rlfound`` runs the ``rlfound`` command (see :mod:`rlfound.cli`)."""

import sys

from rlfound.cli import main

if __name__ == "__main__":
    sys.exit(main())
