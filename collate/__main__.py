"""`python -m collate COMMAND ...`, the same as the `collate` console script."""

import sys

from collate.cli import main

sys.exit(main())
