"""`python -m data.synth`: kept as an entry point; the command lives in collate/synth.py."""

import sys

from collate.synth import main

if __name__ == "__main__":
    sys.exit(main())
