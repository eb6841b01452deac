"""Draft a catalog row: a filing's identity read from its first pages, for what the rules could not find."""

import dspy


class DraftCatalogRow(dspy.Signature):
    """Name this filing's identity from its first pages: the issuer's stock symbol (a US ticker such as PEP, or a 6-digit A-share code), the year the document covers (a report or a distribution: the fiscal year, named by the calendar year it ends in, or the year before when it ends in the first days of January; a quarter's report or release: the fiscal year the quarter belongs to; a shareholder meeting: the year it is held; another announcement or an 8-K: its date's year), and its document type, one of the allowed doctypes. Copy the symbol and the year as the pages print them; leave a field empty when the pages do not state it rather than guess."""

    file_name: str = dspy.InputField(desc="the file's name; it may carry no meaning")
    first_pages: str = dspy.InputField()
    known: str = dspy.InputField(desc="fields already read from the pages by rules, for context")
    doctypes: list[str] = dspy.InputField(desc="the allowed document types")
    symbol: str = dspy.OutputField(desc="as printed, or empty")
    year: str = dspy.OutputField(desc="four digits, or empty")
    doctype: str = dspy.OutputField(desc="one of doctypes, or empty")
    company: str = dspy.OutputField(desc="the issuer's full name as printed, or empty")
