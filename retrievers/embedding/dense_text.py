"""What MiniLM reads of a chunk: the words of the chunks that state figures. BM25 reads every chunk whole.

Why: once parsing got fast, MiniLM was the whole cost of a real-filings build (~670 word pieces a page,
~170 CPU ms a page on int8 onnxruntime, more than pdfplumber spends reading the page). Where the dense
side earns its cost is tables and figure-quoting prose: few words, labels that differ from the question
("capital expenditure" vs "Purchases of property and equipment"). Plain prose shares many words with a
question and BM25 ranks it (with the planner's search terms beside the description). And the amounts
themselves are word-piece noise to MiniLM ("1,234,567" is five pieces, no meaning), while BM25 keeps
them searchable and the fact check reads the chunk's own text.

Measured 2026-12-03 on a quiet machine (MiniLM int8): the 22 FinanceBench dev filings (3,482 pages, 38
questions, page-level hit, the question as the query) and the synthetic corpus's 8 English 10-Ks (136
truth rows, the field description as the query):

    what MiniLM embeds                          chunks  pieces/page  real hybrid @5/@10  real dense @5/@10  synth en @5
    every chunk as printed (before)              100%      671       0.684 / 0.737       0.553 / 0.816      0.978
    every chunk, amounts left out                100%      577       0.711 / 0.763       0.579 / 0.737      0.985
    chunks with >= 2 amount lines, as printed     32%      271       0.684 / 0.789       0.684 / 0.842      0.978
    same, amounts left out  (default "figures")   32%      193       0.711 / 0.789       0.658 / 0.816      0.993
    chunks that are mostly amount lines           12%      106       0.711 / 0.816       0.632 / 0.684      0.949 rejected
    static token vectors distilled from MiniLM   100%       ~0       0.526 / 0.684       0.263 / 0.316        -   rejected

Only the chosen chunks have a dense vote in the hybrid fusion (retrievers/index.py: fuse), so a chunk that
states figures can rise on both sides and plain prose on BM25 alone: a prior toward figures, which is
what the extractor looks for. Taking the missing vote at the chunk's BM25 rank instead (neutral to prose)
measured 0.605 @5 on the real questions with the default row's vectors; the prior costs prose questions:
"why did PepsiCo raise full-year guidance" (page-1 prose, BM25's first three chunks) leaves the top 5.

"Mostly amount lines" lost small tables inside prose chunks and amounts stated in sentences on the
synthetic corpus; static vectors (model2vec-style, every vocabulary piece run through MiniLM once) cost
nothing but ranked worse than BM25 alone. `--dense-chunks all` embeds every chunk (amounts still left out)
for collections whose questions are about prose.
"""

from __future__ import annotations

import re

from retrievers.documents.statements import is_year, states_amounts

DENSE_CHUNKS = ("figures", "all")
# Recorded in each index's meta and part of the build cache key: a change here re-embeds, never mixes.
DENSE_TEXT_VERSION = 1

# a whole token that is a figure: 1,234 / (5,207) / $3.5 / 12.3% / -0.4 / (1); or a lone $ % or dash
_FIGURE = re.compile(r"^[(\[$€£¥]*[-−]?[\d,.]*\d[\d,.]*%?[)\]]*[,;:]?$|^[$%—–-]+$")


def dense_text(text: str) -> str:
    """`text` without its figures (years kept: they name periods), line by line; "" when nothing is left."""
    lines = []
    for line in text.split("\n"):
        words = [t for t in line.split() if is_year(t) or not _FIGURE.match(t)]
        if words:
            lines.append(" ".join(words))
    return "\n".join(lines)


def chosen(texts: list[str], policy: str) -> list[int]:
    """The indices of the texts MiniLM embeds under `policy` ("figures" or "all")."""
    return [i for i, _ in readings(texts, policy)]


def readings(texts: list[str], policy: str) -> list[tuple[int, str]]:
    """(index, what MiniLM reads) of each text it embeds under `policy`: each text read once."""
    if policy not in DENSE_CHUNKS:
        raise ValueError(f"dense chunks {policy!r}: use one of {', '.join(DENSE_CHUNKS)}")
    picked = (t for t in enumerate(texts) if policy == "all" or states_amounts(t[1].split("\n")))
    return [(i, read) for i, text in picked if (read := dense_text(text))]
