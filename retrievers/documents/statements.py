"""The lines that head a financial table: statement titles, unit lines, column headers (fiscal years or
short labels such as "股权登记日 除权除息日 派息日" / "Record date Payment date Amount").

In a real filing these sit far above the row that answers a question ("Capital spending (5,207)
(4,625) (4,240)" is 30 lines under "Consolidated Statement of Cash Flows", "(in millions)" and
"2022 2021 2020"), so the chunker carries them into every chunk of the table (retrievers/chunking.py).

Statement names are the standard ones of US GAAP and IFRS, not any one filer's: a filing prints one
name ("Consolidated Statements of Operations", "Statement of Financial Position") and a reader asks
with another ("income statement", "balance sheet"); a chunk of a statement therefore also carries the
usual names of its kind, which every filing's reader uses alike.
"""

from __future__ import annotations

import re

from retrievers.documents.labels import label_header

# The usual names of each primary statement (US GAAP / IFRS wording), matched on the printed title,
# and the textbook analysis measures computed from it (liquidity ratios from the balance sheet, margins
# from the income statement, capital expenditure and free cash flow from the cash flow statement): a
# reader asks for "the quick ratio" or "operating margin", a filing prints the statement those come from.
_KINDS = (
    (re.compile(r"comprehensive (income|loss)", re.I), "statement of comprehensive income"),
    (
        re.compile(r"balance sheets?|financial (position|condition)", re.I),
        "balance sheet, statement of financial position; working capital, current ratio, quick ratio, "
        "liquidity, debt, leverage",
    ),
    (
        re.compile(r"cash flows?", re.I),
        "cash flow statement, statement of cash flows; operating cash flow, capital expenditure (capex), "
        "free cash flow, depreciation and amortization",
    ),
    (
        re.compile(
            r"(stock|share)holders'?’?\s*(equity|deficit)|changes in (equity|net assets)|\bequity\b", re.I
        ),
        "statement of shareholders' equity",
    ),
    (
        re.compile(r"\b(operations|income|earnings|profit or loss|loss)\b", re.I),
        "income statement, statement of operations, profit and loss; revenue growth, gross margin, "
        "operating income, operating margin, net income, EBITDA",
    ),
)

_TITLE = re.compile(
    r"^(?=[A-Z])(condensed\s+)?(consolidated\s+)?(combined\s+)?"
    r"(statements?\s+of\s+[A-Za-z ,'’()/-]+|balance\s+sheets?(?P<filer>(\s+[\w.,&'’-]+)*?))"
    r"(\s*\((continued|unaudited)\))*$",
    re.I,
)
_UNIT = re.compile(
    r"^\(?\s*(\$|dollars|amounts|in)?\s*(in\s+)?(millions|thousands|billions)\b"
    r"|^[（(]?\s*(货币)?单位[：:]"
    r"|^[（(]\s*(in|amounts in|dollars in|expressed in)\s",
    re.I,
)
_YEAR = re.compile(r"^(fy)?(19|20)\d\d[,.年]?$", re.I)
# 1,234 / 12.5 / (5,207) / (12) / 15% / $3: an amount; "(1)" is a footnote mark, not one
_AMOUNT = re.compile(r"\d[\d,]*\.\d|\d,\d{3}|^\(\d[\d,.]*\d|%$|^\$\d")
# a whole number as a table prints it: 758 / (12) / $ 19 / -4; what _AMOUNT leaves out are those under 1,000
_WHOLE = re.compile(r"^[$€£¥]?\s*\(?[-−]?\d{1,3}\)?$")
# a date a row states: 2022-06-15 / 2023/5/11 / 2022年6月15日 / 2022 年06 月15 日 / 6/15/2022 / June 15, 2022
_DATE = re.compile(
    r"(19|20)\d\d\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2}(?!\d)"
    r"|(19|20)\d\d\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日"
    r"|(?<![\d/])\d{1,2}/\d{1,2}/((19|20)\d\d|\d\d)(?![\d/])"
    r"|\b(January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2},?\s+(19|20)\d\d\b"
)
MAX_HEADER_WORDS = 16
_CLAUSE = re.compile(r"[，。；]")  # Chinese prose; a table row has none
MAX_ROW_LOWER = 2  # "Balance at January 1, 2020 ..." is a row; "as of December 25, 2021 and ..." is prose


def statement_title(line: str) -> bool:
    """ "Consolidated Statement of Cash Flows", "CONDENSED BALANCE SHEETS (Unaudited)": a title, so it
    starts with a capital and does not run on into a sentence ("... statements of operations and")."""
    line = line.strip()
    words = line.split()
    m = _TITLE.match(line)
    # "Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies": the filer's name beside
    # the title, in capitals, not a sentence ("Balance sheet data are shown below")
    filer = (m.group("filer") or "").split() if m else []
    return (
        m is not None
        and len(words) <= 10
        and words[-1].lower() not in ("and", "of", "the", "in", "to", "for")
        and all(w[:1].isupper() or w in ("and", "of", "&") for w in filer)
    )


def amount_line(line: str) -> bool:
    """A row that states amounts: a label or not, and at least one number like 1,234 / (5.6) / 12.3%; or
    whole numbers under a thousand where a row prints them: a cell of a ruled table ("Other revenue | 19")
    or two or more closing a line ("Other revenue 19 50"). A year is no amount, nor "Note 3" or "Item 7".
    Without the second kind, a filer reporting in millions had tables the embedder never read (synthetic
    corpus: English recall@5 0.982 -> 0.993 over seeds 0-4, bench/README.md)."""
    tokens = line.split()
    if any(_AMOUNT.search(t) for t in tokens):
        return True
    if "|" in line and any(_WHOLE.match(c.strip()) and not is_year(c.strip()) for c in line.split("|")):
        return True
    closing = 0
    for token in reversed(tokens):
        if not _WHOLE.match(token) or is_year(token):
            break
        closing += 1
    return 2 <= closing < len(tokens)


def dated_row(line: str) -> bool:
    """A table row of dates: two or more ("A股 2023/5/11 2023/5/12 2023/5/12", "March 1, 2022 March 15,
    2022 $0.25") and not prose (at most MAX_ROW_LOWER words in lower case, no Chinese clause marks). On the
    22 FinanceBench dev filings 253 label-like lines stood over a line with a date that is no such row: a
    signer over his signature line, a subheading over its first sentence ("Verizon Media Divestiture" /
    "On May 2, 2021, Verizon entered"), a title over "Date: February 14, 2020"; none was a table's head.
    22 stood over a dated row, all heads of tables ("Period Principal Amount" / "Beginning on August 1,
    2015 through July 31, 2016 103.875%", "Three months ended" / "June 30, 2022 March 31, 2022")."""
    words = line.split()
    return (
        len(_DATE.findall(line)) >= 2
        and sum(1 for w in words if w[:1].islower()) <= MAX_ROW_LOWER
        and not _CLAUSE.search(line)  # "本行将于2022年6月15日至2022年6月20日暂停办理…，H股股权登记日为…"
    )


def states_amounts(lines: list[str]) -> bool:
    """Lines that state figures (two or more amount rows): a table, or prose that quotes numbers."""
    return sum(map(amount_line, lines)) >= 2


def is_year(token: str) -> bool:
    """ "2022", "FY2021", "2022," or "2024年": a period, not an amount."""
    return bool(_YEAR.match(token))


def statement_kind(title: str) -> str:
    """The usual names of the statement a title names, or "" when it names none."""
    if not statement_title(title):
        return ""
    for pattern, names in _KINDS:
        if pattern.search(title):
            return names
    return ""


def unit_line(line: str) -> bool:
    """ "(In millions, except per share data)", "（货币单位：人民币百万元）"."""
    line = line.strip()
    return len(line) <= 80 and bool(_UNIT.match(line))


def period_header(line: str) -> bool:
    """A line of column headings naming periods: "2022 2021 2020", "Fiscal years ended December 31, 2022,
    December 25, 2021". At least one year, no amount, few words, not a sentence."""
    tokens = line.replace("|", " ").split()
    if not tokens or len(tokens) > MAX_HEADER_WORDS or line.rstrip().endswith("."):
        return False
    if any(_AMOUNT.search(t) for t in tokens):
        return False
    years = sum(1 for t in tokens if _YEAR.match(t))
    words = sum(1 for t in tokens if t[:1].isalpha())
    return years >= 2 or (years == 1 and words <= 6)


def column_header(line: str, after: str = "") -> bool:
    """A line of column headings: periods (period_header), or a row of short labels (label_header) over
    `after`, the line under it, when that line is a row of dates (dated_row). Without the row under it a
    line of labels is no header: by its form alone "Critical Accounting Estimates" could be one."""
    return period_header(line) or (label_header(line) and dated_row(after))
