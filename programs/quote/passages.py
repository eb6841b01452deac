"""The passages one extraction call shows, reproduced before any plan exists.

The extractor (programs/stages/extractor.py `passages`) searches the document k deep once per sub-query
and once per field (its description, helped by its search terms) and shows the union, best first. Before
the plan, the quote knows the questions, not the planner's wording. So it takes each question as its
sub-query (the any-filing reader sends exactly that; the demo reader writes a shorter one, 33 characters
where its questions have 67) and searches the document with it, as the extractor would. A field's own
search is a text only the plan writes: per field, the quote adds the passages measured beyond the
questions' own top k on the demo (sizes.PASSAGES_BEYOND_QUESTIONS), taken from the questions'
next-ranked passages (the same part of the filing, at retrieved chunks' lengths: statements' tables rank
first and are longer than a filing's mean chunk). The range the quote prints runs from none beyond (the
fields' searches find what the questions' did) to k per field (they find nothing the questions' did).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Retrieval:
    """What the questions retrieve from one document: their own top k (deduplicated, best first) and,
    after those, their next-ranked passages (rank by rank across the questions), the stand-ins for what
    the plan's field searches add."""

    own: list[str]
    further: list[str]
    spread_further: bool = False  # no question known: `further` is the document's other chunks, spread

    def shown(self, beyond: int) -> list[str]:
        """The passages of a call whose field searches add `beyond` passages to the questions' own."""
        more = spread(self.further, beyond) if self.spread_further else self.further[:beyond]
        return self.own + more


def retrieved(store, doc_id: str, questions: tuple[str, ...], k: int, depth: int) -> Retrieval:
    """The questions' own top k from the document and up to `depth` next-ranked passages after them."""
    ranked: list[list[str]] = []
    for question in dict.fromkeys(questions):
        try:
            found = store.search(doc_id, question, k=k + depth)
        except Exception:  # an unindexed document, or a store that cannot search: no retrieval to show
            found = []
        ranked.append([f"[page {p.page}] {p.text}" for p in found])
    own = list(dict.fromkeys(p for passages in ranked for p in passages[:k]))
    taken = set(own)
    further: list[str] = []
    for rank in range(k, k + depth):  # rank by rank: each question's next passage before any one's next two
        for passages in ranked:
            if rank < len(passages) and passages[rank] not in taken:
                taken.add(passages[rank])
                further.append(passages[rank])
    return Retrieval(own, further)


def spread_retrieval(chunks: list[str], k: int) -> Retrieval:
    """No question known (an extractor-stage compile's documents): k chunks spread over the document stand
    for the sub-query's top k, the others for what the fields add."""
    own = spread(chunks, k)
    chosen = set(own)
    return Retrieval(own, [c for c in chunks if c not in chosen], spread_further=True)


def spread(chunks: list[str], count: int) -> list[str]:
    """`count` chunks spread evenly over the document (all of them when it has fewer)."""
    if count >= len(chunks):
        return list(chunks)
    return [chunks[(i * len(chunks)) // count] for i in range(count)]
