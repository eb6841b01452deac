"""`python -m evaluate.run`: kept as an entry point; the command lives in collate/run.py."""

import sys

from collate.run import main

if __name__ == "__main__":
    sys.exit(main())
