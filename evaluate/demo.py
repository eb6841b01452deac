"""`python -m evaluate.demo`: kept as an entry point; the command lives in collate/demo.py."""

import sys

from collate.demo import main

if __name__ == "__main__":
    sys.exit(main())
