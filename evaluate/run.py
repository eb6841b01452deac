"""`python -m evaluate.run`: kept as an entry point; the command lives in collate/run.py."""

from collate.run import entry

if __name__ == "__main__":
    entry()
