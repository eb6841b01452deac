"""`python -m evaluate.demo`: kept as an entry point; the command lives in collate/demo.py."""

from collate.demo import main
from collate.errors import exit_process

if __name__ == "__main__":
    exit_process(main())  # after Ctrl-C at once, not after the abandoned answering threads
