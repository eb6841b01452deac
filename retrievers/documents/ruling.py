"""Ruled tables (a grid of lines both ways) found from pdfium's path objects, cell text read by position.

Why not pdfplumber: its `find_tables` interprets each page's content stream a second time in Python.
On real SEC filings it cost 98% of parse time (one 160-page 10-K: 106 s) and ran on most pages, because
filled row shading and cell backgrounds count as rules for it; the tables it then returned on those
pages had no header row (the fiscal years sit above the shading), so "86,392 | Cost of sales | 40,576"
was rendered with a value as column header. Here only lines count: thin paths (stroked or filled, as
rules are drawn both ways) and the edges of stroked rectangles; filled shading is not a rule. A page of
real 10-K statements is then read as text lines (retrievers.documents.pdf) and a true grid, as Chinese reports
draw them, as cells. Reading a cell is one FPDFText_GetBoundedText call on the page's text.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import pypdfium2.raw as pdfium_c

# Points: a rule is thinner than THICKNESS and longer than LENGTH.
RULE_THICKNESS, RULE_LENGTH = 4.0, 8.0
SNAP = 2.0  # rules within this distance are one line; a rule ending this close to another meets it
MIN_LINES = 3  # a grid needs at least 3 lines each way (2 rows x 2 columns)


@dataclass
class PageShapes:
    """What the page's path and image objects say: rules both ways and the image count."""

    horizontal: list[tuple[float, float, float]]  # (x0, x1, y)
    vertical: list[tuple[float, float, float]]  # (y0, y1, x)
    images: int = 0


def page_shapes(page) -> PageShapes:
    """Rules and images of a page, through the raw API without per-object wrappers."""
    shapes = PageShapes([], [])
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    for i in range(pdfium_c.FPDFPage_CountObjects(page)):
        obj = pdfium_c.FPDFPage_GetObject(page, i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            shapes.images += 1
            continue
        if kind != pdfium_c.FPDF_PAGEOBJ_PATH or not pdfium_c.FPDFPageObj_GetBounds(
            obj, left, bottom, right, top
        ):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        width, height = x1 - x0, y1 - y0
        if height < RULE_THICKNESS and width > RULE_LENGTH:
            shapes.horizontal.append((x0, x1, (y0 + y1) / 2))
        elif width < RULE_THICKNESS and height > RULE_LENGTH:
            shapes.vertical.append((y0, y1, (x0 + x1) / 2))
        elif width > RULE_LENGTH and height > RULE_LENGTH:
            # a box or a grid drawn as one path: its outline is a rule only when stroked
            pdfium_c.FPDFPath_GetDrawMode(obj, ctypes.byref(fill), ctypes.byref(stroke))
            if stroke.value:
                shapes.horizontal += [(x0, x1, y0), (x0, x1, y1)]
                shapes.vertical += [(y0, y1, x0), (y0, y1, x1)]
    return shapes


def may_hold_grid(shapes: PageShapes) -> bool:
    return len(shapes.horizontal) >= MIN_LINES - 1 and len(shapes.vertical) >= MIN_LINES - 1


def _levels(values: list[float]) -> list[float]:
    """Distinct positions, values within SNAP of each other merged."""
    out: list[float] = []
    for v in sorted(values):
        if out and v - out[-1] <= SNAP:
            continue
        out.append(v)
    return out


def _components(h, v) -> list[tuple[list, list]]:
    """Groups of horizontal and vertical rules that touch each other: one group per table."""
    parent = list(range(len(h) + len(v)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (x0, x1, y) in enumerate(h):
        for j, (y0, y1, x) in enumerate(v):
            if x0 - SNAP <= x <= x1 + SNAP and y0 - SNAP <= y <= y1 + SNAP:
                parent[find(i)] = find(len(h) + j)
    groups: dict[int, tuple[list, list]] = {}
    for i, rule in enumerate(h):
        groups.setdefault(find(i), ([], []))[0].append(rule)
    for j, rule in enumerate(v):
        groups.setdefault(find(len(h) + j), ([], []))[1].append(rule)
    return list(groups.values())


def _covered(rules, position: float, start: float, end: float) -> bool:
    """Does some rule at `position` span [start, end] (the middle of it, allowing for small gaps)?"""
    middle = (start + end) / 2
    return any(abs(p - position) <= SNAP and a - SNAP <= middle <= b + SNAP for a, b, p in rules)


def grid_tables(shapes: PageShapes, textpage, page_height: float):
    """[(bbox, rows)] for each ruled grid: bbox as (x0, top, x1, bottom) from the page's top-left,
    rows top to bottom, each a cell per grid column with None where a merged cell continues."""
    tables = []
    for h, v in _components(shapes.horizontal, shapes.vertical):
        ys = _levels([y for _a, _b, y in h])[::-1]  # top to bottom
        xs = _levels([x for _a, _b, x in v])
        if len(ys) < MIN_LINES or len(xs) < MIN_LINES:
            continue
        rows = []
        for top, bottom in zip(ys, ys[1:], strict=False):
            row: list[str | None] = []
            start = 0
            for j in range(1, len(xs)):
                # a column boundary without a rule through this row belongs to a merged cell
                if j < len(xs) - 1 and not _covered(v, xs[j], bottom, top):
                    continue
                text = textpage.get_text_bounded(left=xs[start], bottom=bottom, right=xs[j], top=top)
                row += [text.strip()] + [None] * (j - start - 1)
                start = j
            rows.append(row)
        bbox = (xs[0], page_height - ys[0], xs[-1], page_height - ys[-1])
        tables.append((bbox, rows))
    return tables
