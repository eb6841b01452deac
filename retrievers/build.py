"""`python -m retrievers.build`: kept as an entry point; the command lives in collate/build.py."""

import sys

from collate.build import main

if __name__ == "__main__":
    sys.exit(main())
