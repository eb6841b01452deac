"""The command line: `collate <command>` for every entry point, and `ask`, which needs every layer.

The top of the dependency order (signatures, retrievers -> programs -> evaluate -> optimize -> collate):
a command here may load datasets the way evaluate does, which programs/ may not.
"""
