"""A document's fiscal year as a catalog or dataset gives it: a whole number in a plausible range.

Python's int() takes True as 1, cuts 2022.7 to 2022 and raises OverflowError on an infinite float;
each of those is a typo in the user's file, and a wrong year silently selects the wrong documents.
"""

from __future__ import annotations

import math

# Filings on EDGAR start in 1993 and the A-share market in 1990; the range only has to catch typos
# (0, -5, 99999, a spreadsheet's serial date 44562), not to know which years have reports.
FIRST_YEAR, LAST_YEAR = 1900, 2100
_FIX = "give the fiscal year, e.g. 2022"


def fiscal_year(value: object) -> int:
    """The year `value` states; ValueError (its text says what is wrong and the fix) otherwise."""
    shown = _shown(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"year {shown} is not a number ({_FIX})") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):  # True is an int to Python
        raise ValueError(f"year {shown} is not a number ({_FIX})")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"year {shown} is not a number ({_FIX})")
        if not value.is_integer():
            raise ValueError(f"year {shown} is not a whole number ({_FIX})")
        value = int(value)
    if not FIRST_YEAR <= value <= LAST_YEAR:
        raise ValueError(f"year {shown} is not a fiscal year ({_FIX}; between {FIRST_YEAR} and {LAST_YEAR})")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."  # a 400-digit typo need not fill the screen
