"""`python -m programs.sandbox`: kept as an entry point; the command lives in collate/sandbox.py."""

import sys

from collate.sandbox import main

if __name__ == "__main__":
    sys.exit(main())
