"""Planner: question + catalog summary -> sub-queries with metadata restrictions and fields.

Restrictions are applied BY CODE against the catalog. A sub-query whose restriction matches nothing
in scope is fed back to the LM for one re-plan; if it still matches nothing it is reported as a
warning (never silently empty). Which documents a sub-query reaches is never left to the LM.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import dspy

from signatures.planner import PlanQuestion
from signatures.types import IDENTITY_FIELDS, Document, FieldSpec, Plan, Restriction, SubQuery

logger = logging.getLogger(__name__)

# ChainOfThought's prompt with a flat predictor, so the saved key stays `planner.plan` (pinned).
PlanWithReasoning = PlanQuestion.prepend("reasoning", dspy.OutputField(desc="${reasoning}"), str)


@dataclass
class Planned:
    """A plan with its restrictions applied: which sub-queries reach which documents."""

    plan: Plan
    assignments: dict[str, list[SubQuery]] = field(default_factory=dict)  # document id -> its sub-queries
    documents: dict[str, Document] = field(default_factory=dict)  # the documents the plan reaches
    warnings: list[str] = field(default_factory=list)


class Planner(dspy.Module):
    def __init__(self, catalog, facts=None):
        """catalog: what restrictions are applied against; facts: a FactStore whose known fields the
        planner is shown (None: none shown)."""
        super().__init__()
        self.catalog, self.facts = catalog, facts
        self.plan = dspy.Predict(PlanWithReasoning)

    def forward(self, question: str, scope: list[str] | None = None) -> Planned:
        """Plan, and re-plan once with the problems as feedback."""
        summary = self.catalog.summary(within=scope)
        known = self.facts.known_fields(scope) if self.facts is not None else []
        inputs = {"question": question, "catalog": summary, "known_fields": known}
        plan = tidy_plan(self.plan(**inputs, feedback="").plan)
        matches, problems = self.check(plan, scope)
        if problems:
            logger.info("re-planning: %s", "; ".join(problems))
            plan = tidy_plan(self.plan(**inputs, feedback="\n".join(problems)).plan)
            matches, problems = self.check(plan, scope)
        return assign(plan, matches, [f"planner: {p}" for p in problems])

    def check(self, plan: Plan, scope: list[str] | None) -> tuple[list[list[Document]], list[str]]:
        """The documents each sub-query reaches, and the problems a re-plan can fix: empty plans,
        sub-queries without fields and restrictions that match no document in scope."""
        if not plan.subqueries:
            return [], ["the plan has no sub-queries; give at least one with the fields the question needs"]
        matches, problems = [], []
        for i, sq in enumerate(plan.subqueries):
            docs = self.catalog.select(sq.restriction, within=scope)
            matches.append(docs)
            if not sq.fields:
                problems.append(f"sub-query {i + 1} ({sq.query!r}) asks for no fields")
            if not docs:
                problems.append(
                    f"sub-query {i + 1} ({sq.query!r}) restriction {describe(sq.restriction)} matches no document; "
                    f"available: {available(self.catalog, scope)}"
                )
        return matches, problems


def assign(plan: Plan, matches: list[list[Document]], warnings: list[str]) -> Planned:
    """Document id -> the sub-queries that reach it, from the documents each restriction matched."""
    planned = Planned(plan=plan, warnings=warnings)
    for sq, docs in zip(plan.subqueries, matches, strict=True):
        for doc in docs:
            planned.assignments.setdefault(doc.id, []).append(sq)
            planned.documents[doc.id] = doc
    if not planned.assignments:
        planned.warnings.append("planner: no document in scope matches any sub-query")
    for w in planned.warnings:
        logger.warning(w)
    return planned


def tidy_plan(plan: Plan) -> Plan:
    """Field names become safe snake_case columns; restrictions lose empty lists (empty = no filter)."""
    subqueries = []
    for sq in plan.subqueries:
        fields = [f.model_copy(update={"name": column_name(f.name)}) for f in sq.fields]
        r = sq.restriction
        restriction = Restriction(
            doctypes=r.doctypes or None,
            years=r.years or None,
            symbols=[str(s) for s in r.symbols] if r.symbols else None,
        )
        subqueries.append(SubQuery(query=sq.query, restriction=restriction, fields=fields))
    return Plan(subqueries=subqueries)


def column_name(name: str) -> str:
    cleaned = re.sub(r"\W+", "_", name.strip().lower()).strip("_")
    cleaned = cleaned or "value"
    return f"value_{cleaned}" if cleaned in IDENTITY_FIELDS or cleaned[0].isdigit() else cleaned


def describe(r: Restriction) -> str:
    parts = [f"{k}={v}" for k, v in r.model_dump().items() if v is not None]
    return "{" + ", ".join(parts) + "}" if parts else "{none}"


def available(catalog, scope: list[str] | None) -> str:
    return "; ".join(
        f"{field}s: " + ", ".join(map(str, list(catalog.distinct(field, within=scope))[:30]))
        for field in ("doctype", "year", "symbol")
    )


def fields_of(subqueries: list[SubQuery]) -> list[FieldSpec]:
    """Distinct fields (first definition wins) of the sub-queries that reach one document."""
    return Plan(subqueries=subqueries).fields() if subqueries else []
