"""US Stock Annual Report (10-K style): cover, Items 1-7 with MD&A prose, Item 8 statements and notes.

Statement amounts are in thousands or millions (per company) with the prior year beside them; the MD&A
restates revenue and net income rounded in millions or billions, a same-metric-other-unit distractor.
Goodwill sits next to intangible assets, total current liabilities next to total liabilities, and
"Total liabilities and stockholders' equity" repeats total assets. The revenue split (main vs. other)
is a note table in some reports and prose only in others.

As in real 10-Ks (see data/synth/style.py): the unit line sits in the title, on its own line or in the
header row; "$" cells stand before the first and the total figures; section captions ("Current assets:")
have no figures; a statement may run over a page break with its column header on the first page only;
about one company-year in five is a loss, printed in parentheses; the MD&A results table prints decreases
as "(10.9%)"; some MD&A state total assets and total liabilities (rounded) on one line.
"""

from __future__ import annotations

from . import fmt
from .page import Page
from .writer import mark

ASSETS = ("value_total_assets_usd", "value_debt_to_assets_ratio", "value_intangible_to_total_assets_ratio")
LIAB = ("value_total_liabilities_usd", "value_debt_to_assets_ratio")
REVENUE = ("value_operating_revenue_usd", "value_gross_profit_margin")
COST = ("value_operating_costs_usd", "value_gross_profit_margin")
MAIN = ("value_main_business_revenue_usd", "value_other_business_revenue_ratio")
OTHER = ("value_other_business_revenue_usd", "value_other_business_revenue_ratio")


def _rounded(value_units: int, scale: int) -> str:
    dollars = abs(value_units) * scale
    return f"${dollars / 1e9:.2f} billion" if dollars >= 1e9 else f"${dollars / 1e6:.1f} million"


def _change(now: float, before: float, parens_inside: bool) -> str:
    """Year-over-year change as MD&A tables print it: "12.3%", and a decrease in parentheses, "(10.9%)" or "(10.9)%"."""
    if not before:
        return "n/m"
    pct = (now / before - 1) * 100 if before > 0 else (now - before) / abs(before) * 100
    if pct >= 0:
        return f"{pct:.1f}%"
    return f"({-pct:.1f})%" if parens_inside else f"({-pct:.1f}%)"


def _statement(
    p: Page, title: str, unit: str, rows: list[list], totals: set[int], dollar_rows: set[int], note: str = ""
) -> None:
    """A primary statement as the document's style sets it: unit line placement, "$" cells, a page break
    with the header on the first page only."""
    w, st, rng = p.w, p.style, p.spec.rng
    unit_text = f"(In {unit}{note})"
    if st.unit_place == "title":
        w.paragraph(f"{title} {unit_text.lower()}", indent=False)
    else:
        w.paragraph(title, indent=False)
        if st.unit_place == "line":
            w.aside(unit_text, align="center")
        else:  # the unit sits in the header row, above the labels, as in many 10-Ks
            rows = [[unit_text, *rows[0][1:]], *rows[1:]]
    widths = [0.5, 0.25, 0.25]
    if st.dollar_signs:  # "$" in its own cell before the first row's and the grand totals' figures
        rows = [
            [r[0], "$" if i in dollar_rows else "", r[1], "$" if i in dollar_rows else "", r[2]]
            if i
            else [r[0], "", r[1], "", r[2]]
            for i, r in enumerate(rows)
        ]
        widths = [0.5, 0.03, 0.22, 0.03, 0.22]
    body = len(rows) - 1
    break_after = rng.randint(max(3, body // 3), max(4, body - 3)) if st.split else None
    w.table(
        rows,
        widths,
        by_column=rng.random() < 0.3,
        totals=tuple(totals),
        repeat_header=not st.split,
        break_after=break_after,
    )
    w.paragraph(
        "See accompanying Notes to Consolidated Financial Statements.", indent=False, size=w.size - 1.5
    )


def write_us(p: Page) -> None:
    w, s, rng = p.w, p.spec, p.spec.rng
    f, prior, c, year = s.facts, s.prior, s.company, s.year
    unit = "thousands" if f["scale"] == 1000 else "millions"
    end, prior_end = fmt.date_en(f["fiscal_end"]), fmt.date_en(prior["fiscal_end"])
    w.centered("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", 13, gap=60)
    w.centered("Washington, D.C. 20549", 10)
    w.centered("FORM 10-K", 18, gap=24)
    w.centered(
        "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934", 9, gap=14
    )
    w.centered(f"For the fiscal year ended {end}", 11, gap=14)
    w.centered(c.name, 16, gap=30)
    w.centered(f"(Exact name of registrant as specified in its charter)  {c.domicile}", 9)
    w.centered(f"Trading symbol: {c.symbol}    Headquarters: {c.headquarters}", 10, gap=14)
    w.new_page()
    sections = [_business, _mdna, _balance_sheet, _income_statement, _notes]
    for i, section in enumerate(sections):
        section(p, f, prior, c, rng, year, unit, end, prior_end)
        p.section_done(i, len(sections))


def _business(p, f, prior, c, rng, year, unit, end, prior_end):
    w = p.w
    w.heading("PART I  Item 1. Business")
    w.paragraph(
        f'{c.name} ("{c.short_name}", the "Company", "we") is a {c.domicile} corporation headquartered in '
        f"{c.headquarters}. We operate in the {c.industry.lower()} industry. As of {end}, we had approximately "
        f"{f['employees']:,} employees.",
        indent=False,
    )
    w.heading("Item 1A. Risk Factors", size=11.5)


def _mdna(p, f, prior, c, rng, year, unit, end, prior_end):
    w = p.w
    s = f["scale"]
    w.heading(
        "PART II  Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    )
    change = (f["revenue"] / prior["revenue"] - 1) * 100
    w.paragraph(
        f"Net sales for fiscal {year} were {_rounded(f['revenue'], s)}, "
        f"{'an increase' if change >= 0 else 'a decrease'} of {abs(change):.1f}% from {_rounded(prior['revenue'], s)} "
        f"in fiscal {year - 1}. Gross margin was {f['gross_profit'] / f['revenue'] * 100:.1f}% of net sales. "
        f"{'Net income' if f['net_income'] >= 0 else 'Net loss'} was {_rounded(f['net_income'], s)} compared with "
        f"{'net income' if prior['net_income'] >= 0 else 'a net loss'} of {_rounded(prior['net_income'], s)} in "
        "the prior year.",
        indent=False,
    )
    w.paragraph(
        f"{'Operating income' if f['operating_income'] >= 0 else 'Operating loss'} was "
        f"{_rounded(f['operating_income'], s)}. Selling, general and "
        f"administrative expenses were {f['sga'] / f['revenue'] * 100:.1f}% of net sales.",
        indent=False,
    )
    # Results in $ millions with the change beside them: decreases print in parentheses.
    inside = rng.random() < 0.5
    million = s / 1e6
    rows = [["(In millions)", f"Fiscal {year}", f"Fiscal {year - 1}", "Change"]]
    for label, key in (
        ("Net sales", "revenue"),
        ("Gross profit", "gross_profit"),
        ("Operating income (loss)", "operating_income"),
        ("Net income (loss)", "net_income"),
    ):
        rows.append(
            [
                label,
                fmt.accounting(f[key] * million, 1),
                fmt.accounting(prior[key] * million, 1),
                _change(f[key], prior[key], inside),
            ]
        )
    w.table(rows, [0.4, 0.2, 0.2, 0.2], by_column=rng.random() < 0.2)
    if p.style.paired:  # two balance-sheet metrics on one line, rounded: a same-metric-other-unit distractor
        w.paragraph(
            f"As of {end}, total assets were {_rounded(f['total_assets'], s)} and total liabilities were "
            f"{_rounded(f['liabilities'], s)}; total current assets were {_rounded(f['current_assets'], s)}.",
            indent=False,
        )


def _balance_sheet(p, f, prior, c, rng, year, unit, end, prior_end):
    w = p.w
    w.heading("Item 8. Financial Statements and Supplementary Data")

    def lines(x):
        receivables = round(x["current_assets"] * 0.3)
        other_current = x["current_assets"] - x["cash"] - receivables - x["inventory"]
        rest = x["total_assets"] - x["current_assets"] - x["goodwill"] - x["intangible"]
        ppe = round(rest * 0.7)
        lt_debt = round((x["liabilities"] - x["current_liabilities"]) * 0.6)
        common = round(x["total_assets"] * 0.001)
        apic = round(x["equity"] * 0.6)
        return {
            "cash": x["cash"],
            "recv": receivables,
            "inv": x["inventory"],
            "oca": other_current,
            "ca": x["current_assets"],
            "ppe": ppe,
            "gw": x["goodwill"],
            "ia": x["intangible"],
            "oa": rest - ppe,
            "ta": x["total_assets"],
            "cl": x["current_liabilities"],
            "ltd": lt_debt,
            "ol": x["liabilities"] - x["current_liabilities"] - lt_debt,
            "tl": x["liabilities"],
            "cs": common,
            "apic": apic,
            "re": x["equity"] - common - apic,
            "te": x["equity"],
        }

    a, b = lines(f), lines(prior)
    m = fmt.accounting

    def row(label, key, fields=()):
        return [label, mark(m(a[key]), *fields) if fields else m(a[key]), m(b[key])]

    rows = [
        ["", end, prior_end],
        ["Current assets:", "", ""],
        row("Cash and cash equivalents", "cash"),
        row("Accounts receivable, net", "recv"),
        row("Inventories", "inv", ("value_inventory_usd", "value_inventory_to_current_assets_ratio")),
        row("Prepaid expenses and other current assets", "oca"),
        row(
            "Total current assets",
            "ca",
            ("value_current_assets_usd", "value_inventory_to_current_assets_ratio"),
        ),
        row("Property and equipment, net", "ppe"),
        row("Goodwill", "gw"),
        row(
            "Intangible assets, net",
            "ia",
            ("value_intangible_assets_usd", "value_intangible_to_total_assets_ratio"),
        ),
        row("Other assets", "oa"),
        row("Total assets", "ta", ASSETS),
        ["Current liabilities:", "", ""],
        row("Total current liabilities", "cl"),
        row("Long-term debt, net of current portion", "ltd"),
        row("Other long-term liabilities", "ol"),
        row("Total liabilities", "tl", LIAB),
        ["Stockholders' equity:", "", ""],
        row("Common stock", "cs"),
        row("Additional paid-in capital", "apic"),
        row("Retained earnings (accumulated deficit)", "re"),
        row("Total stockholders' equity", "te", ("value_shareholders_equity_usd",)),
        ["Total liabilities and stockholders' equity", m(a["ta"]), m(b["ta"])],
    ]
    _statement(
        p,
        "CONSOLIDATED BALANCE SHEETS",
        unit,
        rows,
        totals={6, 11, 13, 16, 21, 22},
        dollar_rows={2, 11, 13, 22},
        note=", except per share data",
    )


def _income_statement(p, f, prior, c, rng, year, unit, end, prior_end):
    m = fmt.accounting
    loss = min(f["operating_income"], prior["operating_income"], f["net_income"], prior["net_income"]) < 0

    def row(label, key, fields=()):
        return [label, mark(m(f[key]), *fields) if fields else m(f[key]), m(prior[key])]

    def per_share(x, shares):
        return m(x["net_income"] * x["scale"] / shares, 2)

    shares = round(
        f["total_assets"] * f["scale"] / rng.uniform(20, 90)
    )  # weighted average shares (not asked)
    label = rng.choice(["Net sales", "Revenue", "Total revenues"])
    suffix = " (loss)" if loss else ""
    rows = [
        ["", f"Fiscal {year}", f"Fiscal {year - 1}"],
        row(label, "revenue", REVENUE),
        row("Cost of sales", "cost", COST),
        row("Gross profit", "gross_profit"),
        row("Selling, general and administrative", "sga"),
        row("Research and development", "rnd"),
    ]
    if f["impairment"] or prior["impairment"]:
        rows.append(
            [
                "Goodwill and asset impairment",
                m(f["impairment"]) if f["impairment"] else "—",
                m(prior["impairment"]) if prior["impairment"] else "—",
            ]
        )
    rows += [
        row(f"Operating income{suffix}", "operating_income", ("value_operating_profit_usd",)),
        ["Interest expense, net", m(-f["interest"]), m(-prior["interest"])],
        row(f"Income{suffix} before income taxes", "pretax"),
        row("Income tax expense", "tax"),
        row(f"Net income{suffix}", "net_income", ("value_net_profit_usd",)),
        [f"Basic earnings{suffix} per share", per_share(f, shares), per_share(prior, shares)],
    ]
    n = len(rows)
    _statement(
        p,
        "CONSOLIDATED STATEMENTS OF OPERATIONS",
        unit,
        rows,
        totals={3, n - 6, n - 2},
        dollar_rows={1, n - 2, n - 1},
        note=", except per share data",
    )


def _notes(p, f, prior, c, rng, year, unit, end, prior_end):
    w = p.w
    w.heading("NOTES TO CONSOLIDATED FINANCIAL STATEMENTS")
    w.paragraph("Note 3 - Revenue Recognition", indent=False)
    m = fmt.accounting
    if rng.random() < 0.6:
        w.paragraph(f"The following table disaggregates revenue by source (in {unit}):", indent=False)
        rows = [
            ["", f"Fiscal {year}", f"Fiscal {year - 1}"],
            [
                "Product and service revenue (main business)",
                mark(m(f["main_revenue"]), *MAIN),
                m(prior["main_revenue"]),
            ],
            ["Other revenue", mark(m(f["other_revenue"]), *OTHER), m(prior["other_revenue"])],
            ["Total revenue", m(f["revenue"]), m(prior["revenue"])],
        ]
        w.table(rows, [0.5, 0.25, 0.25], by_column=rng.random() < 0.3, totals=(3,))
    else:  # prose only
        w.paragraph(
            [
                f"In fiscal {year}, revenue from our main business of products and services was $",
                mark(m(f["main_revenue"]), *MAIN),
                f" {unit}, and other revenue, consisting of licensing, royalty and freight fees, was $",
                mark(m(f["other_revenue"]), *OTHER),
                f" {unit} (fiscal {year - 1}: $",
                m(prior["other_revenue"]),
                f" {unit}).",
            ],
            indent=False,
        )
