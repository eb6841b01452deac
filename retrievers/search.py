"""`python -m retrievers.search`: kept as an entry point; the command lives in collate/search.py."""

import sys

from collate.search import main

if __name__ == "__main__":
    sys.exit(main())
