"""`python -m optimize.compile`: kept as an entry point; the command lives in collate/compile.py."""

import sys

from collate.compile import main

if __name__ == "__main__":
    sys.exit(main())
