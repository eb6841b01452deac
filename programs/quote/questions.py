"""Quote answering questions with the Analyst: calls per stage from the catalog, tokens from the prompts.

Calls, as the run makes them (programs/batch.py): plan 1 per question; extraction 1 per DISTINCT
document across all the questions (a document several questions read is asked once, for all their
fields: programs/shared_extraction.py); normalize (only for values the rules cannot parse), code and
answer per question. A question's documents are its doc_ids (a dataset item's) or, without them, the
whole catalog: then the plan usually reads fewer and the quote is an upper bound. Not counted: a
re-plan, a fact repair, a normalizer re-ask, code fix rounds and retried requests; the demo's 40
questions made 1 of them in 175 calls (a fact repair; bench/estimate_accuracy.py, 2026-12-06), and each
adds calls when it does. Fact repairs are priced as a ceiling beside the total (one more call for every
document): whether a fact fails the check is known only from the reply (the FinanceBench filings with the
any-filing reader: 4-8 of 22 documents repaired, 15-22% of a command's tokens). Once the fact store holds
MINIMUM_HISTORY documents the extractor's model was asked (programs/facts/repair_history.py), the total
counts the share of them it repaired as expected repair calls, and says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import dspy

from programs.facts.repair_history import RepairHistory
from programs.lm.endpoint import SchemaJSONAdapter, structured_mode
from programs.lm.prices import price_for
from programs.quote import sizes
from programs.quote.prompts import StagePrompts, Tokens
from programs.quote.quote import Quote, dollars
from programs.quote.tokens import TokenCounter, counter_for

# Documents rendered per group of equally-read documents; the rest are priced at the group's mean
# (a 5,000-filing catalog is quoted in seconds, not by loading every index).
SAMPLE_DOCUMENTS = 24
# Documents of a model's history before its repair share is counted: below it one repair is a 10% swing.
MINIMUM_HISTORY = 10
NOT_COUNTED = (
    "not counted: re-plans, {repairs}normalizer re-asks, code fix rounds (up to {rounds} per question) and "
    "retried requests; the demo's 40 questions made 1 in 175 calls, each adds calls when it does"
)
REPAIRS_NOT_COUNTED = "fact repairs (a second extraction call when a fact fails the check against its page), "


def quote_adapter(settings) -> dspy.Adapter:
    """The adapter configure() would choose for these settings (programs.lm.endpoint)."""
    mode = structured_mode(settings)
    if mode in ("json_schema", "json_object"):
        return SchemaJSONAdapter(spelling=mode)
    current = dspy.settings.adapter
    return current if isinstance(current, dspy.ChatAdapter) else dspy.ChatAdapter()


def begin(
    program, store, settings, what: str, counter: TokenCounter | None, demos: int
) -> tuple[StagePrompts, Quote]:
    """The prompts as the run would render them, and an empty quote counted with the same tokenizer."""
    counter = counter or counter_for(settings)
    prompts = StagePrompts(program, store, quote_adapter(settings), counter, settings, settings.k, demos)
    return prompts, Quote(what=what, documents=0, tokenizer=counter.name)


def quote_questions(
    program,
    store,
    settings,
    questions: Sequence[tuple[str, list[str] | None]],
    what: str,
    counter: TokenCounter | None = None,
    demos: int = 0,
    reused_facts: str | None = None,
    history: RepairHistory | None = None,
) -> Quote:
    """The quote of answering `questions` ((question, doc ids or None) pairs) as one run.

    demos: few-shot demos an optimizer will have added per predictor; reused_facts: the fact store the
    run reuses facts from (named in a note: the quote does not subtract them); history: how often the
    extractor's model needed a fact repair in that store (counted once it holds MINIMUM_HISTORY documents)."""
    prompts, quote = begin(program, store, settings, what, counter, demos)
    counted = history is not None and history.documents >= MINIMUM_HISTORY and settings.repair_facts
    share = history.share if counted and history is not None else 0.0  # COLLATE_REPAIR_FACTS=false: none
    catalog = program.catalog
    readers: Counter[str] = Counter()
    asked: dict[str, list[str]] = {}  # document -> the questions that read it
    whole_catalog = False
    for question, doc_ids in questions:
        docs = catalog.select(None, within=doc_ids)
        whole_catalog |= doc_ids is None
        readers.update(d.id for d in docs)
        for d in docs:
            asked.setdefault(d.id, []).append(question)
        quote.stage("planner").add(1, *prompts.planner(question, doc_ids, docs))
        quote.stage("extractor")  # in stage order; counted per document below
        values = round(sizes.FIELDS_PER_QUESTION * len(docs))
        quote.stage("normalizer").add(sizes.NORMALIZE_SHARE, *prompts.normalizer(question, values))
        quote.stage("coder").add(1, *prompts.coder(question, docs))
        quote.stage("answer").add(1, *prompts.answer(question, docs))
    extraction = quote.stage("extractor")
    low = high = 0.0  # the extraction's tokens at either end of the passages' range
    for reads, doc_ids in grouped(readers).items():
        sampled = spread_ids(doc_ids, SAMPLE_DOCUMENTS)
        per_call = mean([prompts.extractor(catalog.get(d), reads, tuple(asked[d])) for d in sampled])
        extraction.add(len(doc_ids), *per_call)
        if share:  # a repair shows the same passages, fewer fields and the check's reason: about one call
            extraction.add(len(doc_ids) * share, *per_call)
            quote.expected_repairs += len(doc_ids) * share * sum(per_call)
        for beyond in (0, prompts.k):
            ends = mean([prompts.extractor(catalog.get(d), reads, tuple(asked[d]), beyond) for d in sampled])
            if beyond:
                high += len(doc_ids) * sum(ends)
            else:
                low += len(doc_ids) * sum(ends)
    quote.documents = len(readers)
    others = sum(s.tokens_in + s.tokens_out for name, s in quote.stages.items() if name != "extractor")
    quote.span, quote.repairs = (others + low, others + high), high
    if whole_catalog:
        quote.notes.append(
            "an upper bound on documents and extraction calls: without a dataset item's documents the scope "
            "is the whole catalog, and the plan usually restricts it to fewer (by doctype, year, symbol)"
        )
    if reused_facts:
        quote.notes.append(
            f"facts already in {reused_facts} are reused without a call: not subtracted (an upper bound)"
        )
    quote.notes.append(
        f"normalizer: {sizes.NORMALIZE_SHARE:g} calls per question expected (the rules parse the values; "
        "an LM call only for what they cannot, about one per question at most)"
    )
    quote.notes.append(
        NOT_COUNTED.format(repairs="" if share else REPAIRS_NOT_COUNTED, rounds=settings.code_rounds)
    )
    if extraction.calls:
        quote.notes.append(
            f"extraction passages: each document's questions' own top {prompts.k} (searched now, as the "
            f"extractor searches its sub-queries) and {sizes.PASSAGES_BEYOND_QUESTIONS:g} more per field "
            "for the fields' own searches (measured on the demo; the plan writes them)"
        )
        documents = quote.documents
        quote.notes.append(
            f"fact repairs: at most one more call per document, {documents:,} calls and about "
            f"{quote.repairs:,.0f} tokens if every document's facts failed the check (known only from the replies)"
        )
        quote.notes.append(repairs_note(history, share, documents, quote.expected_repairs))
    escalation_note(quote, settings)
    return quote.priced(settings)


def repairs_note(history: RepairHistory | None, share: float, documents: int, tokens: float) -> str:
    """What the total expects of fact repairs, and from what."""
    if history is None or history.documents < MINIMUM_HISTORY:
        known = (
            f"{history.documents} document(s) of {history.model}" if history is not None else "no document"
        )
        return (
            f"fact repairs expected: none counted; the fact store holds {known} asked before, and the share "
            f"repaired is counted once it holds {MINIMUM_HISTORY}"
        )
    if not share:
        return (
            f"fact repairs expected: none, as {history.model} needed none for the {history.documents} "
            "documents it was last asked in this fact store"
        )
    return (
        f"fact repairs expected: {share:.0%} of the documents, {documents * share:,.1f} calls and about "
        f"{tokens:,.0f} tokens in the total, as {history.model} needed for {history.repaired} of the "
        f"{history.documents} documents it was last asked in this fact store"
    )


def escalation_note(quote: Quote, settings) -> None:
    """With a cascade (COLLATE_LM_EXTRACTOR_ESCALATE), what the strong model costs at most: one call per
    extracted document, each the size of its cheap call. Not in the total: how many documents fail the
    check is known only after the cheap model has answered (bench/cascade.py: 30% of the demo's
    documents with a cheap reader wrong on 20% of them, 16% with one that never errs)."""
    model = settings.model_for("escalate")
    extraction = quote.stages.get("extractor")
    if not model or extraction is None or not extraction.calls:
        return
    price = price_for(settings, "escalate")
    first = quote.documents / extraction.calls  # the documents' first calls, not the expected repairs
    tokens_in, tokens_out = extraction.tokens_in * first, extraction.tokens_out * first
    usd = "price unknown" if price is None else dollars(price.usd(tokens_in, tokens_out), "")
    quote.notes.append(
        f"cascade: {model} is asked only for the documents whose cheap facts fail the check; not in the "
        f"total: at most {quote.documents:,} calls, {tokens_in:,.0f} tokens in, "
        f"{tokens_out:,.0f} out, {usd} if every document escalated"
    )


def quote_extraction(
    program,
    store,
    settings,
    documents: Sequence[tuple[str, list[str] | None]],
    what: str,
    counter: TokenCounter | None = None,
    demos: int = 0,
) -> Quote:
    """The quote of extractions alone (an extractor-stage compile): one call per (_, [document]) pair."""
    prompts, quote = begin(program, store, settings, what, counter, demos)
    seen: set[str] = set()
    for _, doc_ids in documents:
        for doc in program.catalog.select(None, within=doc_ids):
            seen.add(doc.id)
            quote.stage("extractor").add(1, *prompts.extractor(doc, 1))
    quote.documents = len(seen)
    return quote.priced(settings)


def grouped(readers: Counter[str]) -> dict[int, list[str]]:
    """Readers per document -> the documents read that many times (in first-seen order)."""
    groups: dict[int, list[str]] = {}
    for doc_id, reads in readers.items():
        groups.setdefault(reads, []).append(doc_id)
    return groups


def spread_ids(ids: list[str], count: int) -> list[str]:
    if len(ids) <= count:
        return ids
    return [ids[(i * len(ids)) // count] for i in range(count)]


def mean(calls: list[Tokens]) -> Tokens:
    return sum(c[0] for c in calls) / len(calls), sum(c[1] for c in calls) / len(calls)
