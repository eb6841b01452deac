"""One extraction for many questions: each document asked once for every field any question needs of it.

Questions are placed in their order. A (document, field) goes to the first round whose call for that
document either does not ask that field name yet or asks it the same way: same type and unit, and
the same description or one the FieldMatcher takes for the same value (the fact store's own rule
for reuse). A field that shares its name with another question's but not its meaning (another unit,
another value) goes to the next round: one more call for that document, never a wrong merge. Runs
seen so far need one round. Each question then reads its own fields back, under its own
descriptions, from its documents' facts; a merge across wordings is reported like a fact-store merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from programs.facts.store import Merge
from programs.stages.cascade import cascade_part
from programs.stages.extraction import Extraction
from programs.stages.planner import Planned, fields_of
from signatures.types import DocumentFailure, Fact, FieldSpec, Restriction, SubQuery


@dataclass
class Placement:
    """Where one question's field of one document is asked: the round, and how it matched the spec asked."""

    round: int
    how: str = ""  # why code took a reworded description for the one asked ("" = asked as this one)


@dataclass
class Call:
    """One document's call in one round: its sub-queries in order (query -> restriction, fields asked)."""

    subqueries: dict[str, tuple[Restriction, list[FieldSpec]]] = field(default_factory=dict)
    asked: dict[str, FieldSpec] = field(default_factory=dict)  # field name -> the spec the call asks

    def subquery(self, sq: SubQuery) -> list[FieldSpec]:
        return self.subqueries.setdefault(sq.query, (sq.restriction, []))[1]


class SharedExtraction:
    def __init__(self, matcher=None):
        """matcher: a FieldMatcher deciding which reworded descriptions one call serves (None: exact only)."""
        self.matcher = matcher
        self.rounds: list[dict[str, Call]] = []  # round -> document id -> its call
        self.placements: dict[tuple[int, str, str], Placement] = {}  # (question, document, field) -> where

    def add(self, question: int, planned: Planned) -> None:
        """Place every field the question's plan needs of each of its documents."""
        for doc_id, subqueries in planned.assignments.items():
            own = {f.name: f for f in fields_of(subqueries)}  # the question's spec of each name (first wins)
            for sq in subqueries:
                if not self.rounds:
                    self.rounds.append({})
                self.rounds[0].setdefault(doc_id, Call()).subquery(sq)  # every sub-query is shown once
                for spec in sq.fields:
                    key = (question, doc_id, spec.name)
                    if key in self.placements or own[spec.name] != spec:
                        continue
                    self.placements[key] = self.place(doc_id, sq, spec)

    def place(self, doc_id: str, sq: SubQuery, spec: FieldSpec) -> Placement:
        for number, calls in enumerate(self.rounds):
            call = calls.get(doc_id)
            asked = call.asked.get(spec.name) if call is not None else None
            if asked is None:
                break
            same, how = self.same(asked, spec)
            if same:
                return Placement(number, how)
        else:
            number = len(self.rounds)
            self.rounds.append({})
        call = self.rounds[number].setdefault(doc_id, Call())
        call.asked[spec.name] = spec
        call.subquery(sq).append(spec)  # only the spec that opens a name: the extractor asks the first
        return Placement(number)

    def same(self, asked: FieldSpec, spec: FieldSpec) -> tuple[bool, str]:
        """One call's answer to `asked` serves `spec`: same type and unit, and the same meaning."""
        if asked.type != spec.type or asked.unit != spec.unit:
            return False, ""
        if asked.description == spec.description:
            return True, ""
        if self.matcher is None:
            return False, ""
        return self.matcher.same_meaning(spec.description, asked.description)

    def assignments(self, number: int) -> dict[str, list[SubQuery]]:
        """What the extractor is given in round `number`: each document's merged sub-queries, in order."""
        return {
            doc_id: [
                SubQuery(query=query, restriction=restriction, fields=fields)
                for query, (restriction, fields) in call.subqueries.items()
            ]
            for doc_id, call in self.rounds[number].items()
        }

    def split(self, question: int, planned: Planned, extractions: list[Extraction]) -> Extraction:
        """The question's own extraction: its fields of its documents, in plan order, under its descriptions."""
        facts_of = [{(f.doc_id, f.field): f for f in e.facts} for e in extractions]
        failures_of = [{f.doc_id: f for f in e.failures} for e in extractions]
        facts: list[Fact] = []
        failures: list[DocumentFailure] = []
        merges: list[Merge] = []
        passages: dict[str, list[str]] = {}
        asked: list[str] = []
        repaired: list[str] = []
        for doc_id, subqueries in planned.assignments.items():
            rounds: list[int] = []
            for spec in fields_of(subqueries):
                placed = self.placements[(question, doc_id, spec.name)]
                rounds += [] if placed.round in rounds else [placed.round]
                fact = facts_of[placed.round].get((doc_id, spec.name))
                if fact is None:  # the document's call failed: its failure says why
                    continue
                if fact.description != spec.description:
                    merges.append(
                        Merge(
                            doc_id, spec.name, spec.description, fact.description, placed.how or "same call"
                        )
                    )
                    fact = fact.model_copy(update={"description": spec.description})
                else:
                    merges += [
                        m
                        for m in extractions[placed.round].merges
                        if (m.doc_id, m.field, m.asked) == (doc_id, spec.name, spec.description)
                    ]
                facts.append(fact)
            for number in rounds or [0]:
                extraction = extractions[number]
                failure = failures_of[number].get(doc_id)
                if failure is not None and doc_id not in {f.doc_id for f in failures}:
                    failures.append(failure)
                passages.setdefault(doc_id, []).extend(extraction.passages.get(doc_id, []))
                asked += [doc_id] if doc_id in extraction.asked and doc_id not in asked else []
                repaired += [doc_id] if doc_id in extraction.repaired and doc_id not in repaired else []
        return Extraction(
            facts=facts,
            failures=failures,
            lm_documents=len(asked),
            passages=passages,
            merges=merges,
            repair_calls=len(repaired),
            asked=asked,
            repaired=repaired,
            escalated={d: why for e in extractions for d, why in e.escalated.items() if d in asked},
            cascade=cascade_part([e.cascade for e in extractions], asked),
        )
