"""`python -m evaluate.demo`: kept as an entry point; the command lives in collate/demo.py."""

from collate.demo import entry

if __name__ == "__main__":
    entry()  # main(), then the process ends with its code (at once after Ctrl-C)
