"""`python -m evaluate.run`: kept as an entry point; the command lives in collate/run.py."""

from collate.run import entry, main

__all__ = ["main"]  # evaluate.run.main(argv): how scripts and tests have called it

if __name__ == "__main__":
    entry()
