"""`python -m evaluate.score`: kept as an entry point; the command lives in collate/score.py."""

import sys

from collate.score import main

if __name__ == "__main__":
    sys.exit(main())
