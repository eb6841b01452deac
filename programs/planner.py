"""Planner: question + catalog summary -> sub-queries with metadata restrictions and fields.

Restrictions are applied BY CODE against the catalog. A sub-query whose restriction matches nothing
in scope is fed back to the LM for one re-plan; if it still matches nothing it is reported as a
warning (never silently empty). Which documents a sub-query reaches is never left to the LM.
"""

from __future__ import annotations

import logging
import re

import dspy

from programs.steps import arun_steps, run_steps
from signatures.planner import PlanQuestion
from signatures.types import Document, FieldSpec, Plan, Restriction, SubQuery

logger = logging.getLogger(__name__)

# ChainOfThought's prompt with a flat predictor, so the saved key stays `planner.plan` (pinned).
PlanWithReasoning = PlanQuestion.prepend("reasoning", dspy.OutputField(desc="${reasoning}"), str)


class Planner(dspy.Module):
    def __init__(self, resources):
        super().__init__()
        self.resources = resources
        self.plan = dspy.Predict(PlanWithReasoning)

    def forward(self, question: str, scope: list[str] | None = None) -> dspy.Prediction:
        return run_steps(self.steps(question, scope))

    async def aforward(self, question: str, scope: list[str] | None = None) -> dspy.Prediction:
        return await arun_steps(self.steps(question, scope))

    def steps(self, question: str, scope: list[str] | None):
        """Plan, and re-plan once with the problems as feedback (LM calls yielded: programs.steps)."""
        summary = self.resources.store.catalog.summary(within=scope)
        plan = (yield self.plan, {"question": question, "catalog": summary, "feedback": ""}).plan
        problems = self.check(plan, scope)
        if problems:
            logger.info("re-planning: %s", "; ".join(problems))
            plan = (yield self.plan, {"question": question, "catalog": summary, "feedback": "\n".join(problems)}).plan
        return self.assign(plan, scope)

    def check(self, plan: Plan, scope: list[str] | None) -> list[str]:
        """Problems a re-plan can fix: empty plans and restrictions that match no document in scope."""
        plan = tidy_plan(plan)
        if not plan.subqueries:
            return ["the plan has no sub-queries; give at least one with the fields the question needs"]
        catalog = self.resources.store.catalog
        problems = []
        for i, sq in enumerate(plan.subqueries):
            if not sq.fields:
                problems.append(f"sub-query {i + 1} ({sq.query!r}) asks for no fields")
            if not catalog.select(sq.restriction, within=scope):
                problems.append(
                    f"sub-query {i + 1} ({sq.query!r}) restriction {describe(sq.restriction)} matches no document; "
                    f"available: {available(catalog, scope)}"
                )
        return problems

    def assign(self, plan: Plan, scope: list[str] | None) -> dspy.Prediction:
        """Apply restrictions by code: document id -> the sub-queries that reach it."""
        plan = tidy_plan(plan)
        catalog = self.resources.store.catalog
        warnings = [f"planner: {p}" for p in self.check(plan, scope)]
        assignments: dict[str, list[SubQuery]] = {}
        documents: dict[str, Document] = {}
        for sq in plan.subqueries:
            for doc in catalog.select(sq.restriction, within=scope):
                assignments.setdefault(doc.id, []).append(sq)
                documents[doc.id] = doc
        if not assignments:
            warnings.append("planner: no document in scope matches any sub-query")
        for w in warnings:
            logger.warning(w)
        return dspy.Prediction(plan=plan, assignments=assignments, documents=documents, warnings=warnings)


def tidy_plan(plan: Plan) -> Plan:
    """Field names become safe snake_case columns; restrictions lose empty lists (empty = no filter)."""
    subqueries = []
    for sq in plan.subqueries:
        fields = [f.model_copy(update={"name": column_name(f.name)}) for f in sq.fields]
        r = sq.restriction
        restriction = Restriction(
            doctypes=r.doctypes or None, years=r.years or None, symbols=[str(s) for s in r.symbols] if r.symbols else None
        )
        subqueries.append(SubQuery(query=sq.query, restriction=restriction, fields=fields))
    return Plan(subqueries=subqueries)


def column_name(name: str) -> str:
    cleaned = re.sub(r"\W+", "_", name.strip().lower()).strip("_")
    reserved = {"id", "symbol", "year", "doctype"}
    cleaned = cleaned or "value"
    return f"value_{cleaned}" if cleaned in reserved or cleaned[0].isdigit() else cleaned


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
