"""Issue 13: every fact held against its page by code; one repair round; unverified facts flagged, left out
of the computation by default, and named in the answer's coverage."""

from __future__ import annotations

import pytest

from programs.analyst import build_program
from programs.facts import repair_history
from programs.facts.store import FactStore
from tests.programs.conftest import PAGES, TinyStore


class PagedStore(TinyStore):
    """TinyStore that can also say what each page prints, as IndexStore does."""

    def page_texts(self, doc_id: str) -> dict[int, str]:
        return dict(PAGES[doc_id])


def reply(car: str, car_quote: str, car_page: int, revenue: str, rev_quote: str, rev_page: int) -> dict:
    return {
        "values": [
            {
                "field": "capital_adequacy_ratio",
                "disclosed": True,
                "value": car,
                "unit": "%",
                "quote": car_quote,
                "page": car_page,
            },
            {
                "field": "revenue",
                "disclosed": True,
                "value": revenue,
                "unit": None,
                "quote": rev_quote,
                "page": rev_page,
            },
        ]
    }


FABRICATED = reply(
    "14.00%", "资本充足率 13.00%", 2, "(1,234)", "营业收入 (1,234) 元", 5
)  # a value not on the page
REPLIES = {
    # the repair call carries the check's reason as feedback: the LM insists on the invented value
    "does not print the value": {"values": [FABRICATED["values"][0]]},
    "(id doc-a)": reply("15.44%", "资本充足率为15.44%", 3, "3,239,006 万元", "营业收入 3,239,006 万元", 4),
    "(id doc-b)": reply(
        "12.10%", "资本充足率 12.10%", 9, "1.5亿元", "营业收入 1.5亿元", 8
    ),  # page 9: wrong, it is 7
    "(id doc-c)": FABRICATED,
}


@pytest.fixture
def run(settings, use_lm, tmp_path):
    def go(**changes):
        lm = use_lm(**REPLIES)
        store = PagedStore()
        program = build_program(
            settings.replace(**changes), store, facts=FactStore(tmp_path / "facts.sqlite")
        )
        return program(question="哪家公司资本充足率最高？"), lm

    return go


def test_facts_get_verdicts_pages_are_corrected_and_one_repair_call_is_made(run):
    pred, lm = run()
    verdicts = {(f.doc_id, f.field): (f.verdict, f.page) for f in pred.facts}
    assert verdicts[("doc-a", "capital_adequacy_ratio")] == ("verified", 3)
    assert verdicts[("doc-b", "capital_adequacy_ratio")] == ("page_corrected", 7)  # cited 9, printed on 7
    assert verdicts[("doc-c", "capital_adequacy_ratio")][0] == "value_not_in_quote"
    assert verdicts[("doc-c", "revenue")] == ("verified", 5)
    repairs = [e for e in lm.history if "does not print the value" in e["messages"][-1]["content"]]
    assert (
        len(repairs) == 1 and pred.trace["extract"]["repair_calls"] == 1
    )  # at most one extra call per document
    assert "capital_adequacy_ratio" in repairs[0]["messages"][-1]["content"]


def test_the_store_keeps_which_documents_the_model_was_asked_again(run, tmp_path):
    """What a later quote expects of this model's repairs (programs/facts/repair_history.py)."""
    _, lm = run()
    history = repair_history.read(tmp_path / "facts.sqlite", lm.model)
    assert (history.documents, history.repaired) == (3, 1)  # doc-c's fabricated ratio was asked again
    assert repair_history.read(tmp_path / "facts.sqlite", "another/model") is None


def test_an_unverified_fact_is_flagged_left_out_of_the_result_and_named_in_the_coverage(run):
    pred, _ = run()
    c = next(r for r in pred.records if r["id"] == "doc-c")
    assert (
        c["capital_adequacy_ratio"] == 14.0 and c["unverified"] == "capital_adequacy_ratio"
    )  # kept, flagged
    coded = pred.trace["code"]["attempts"][0]
    assert coded["ok"] and '"top": "600001"' in pred.result
    assert pred.coverage["documents_in_scope"] == 3 and pred.coverage["documents_used"] == 3
    assert [(u["symbol"], u["status"]) for u in pred.coverage["unverified"]] == [
        ("600003", "value_not_in_quote")
    ]
    # doc-c's revenue, (1,234) 元, is verified but 13,000,000x below the others': named as a units question
    assert pred.coverage_line == (
        "依据：3份文件中的3份；1项未经核实：600003（引文中无此数值）；"
        "单位存疑：600003的revenue约为其余2份的13,000,000分之一。"
    ).replace("（", " (").replace("）", ")")


def test_a_setting_keeps_unverified_facts_in_the_computation(run, monkeypatch):
    seen = {}
    from programs.stages import code_writer

    real = code_writer.CodeWriter.forward

    def spy(self, question, columns, records):
        seen["records"] = records
        return real(self, question, columns, records)

    monkeypatch.setattr(code_writer.CodeWriter, "forward", spy)
    run()
    assert next(r for r in seen["records"] if r["id"] == "doc-c")["capital_adequacy_ratio"] is None
    run(use_unverified=True)
    assert next(r for r in seen["records"] if r["id"] == "doc-c")["capital_adequacy_ratio"] == 14.0


def test_the_verdict_is_kept_in_the_fact_store(run, tmp_path):
    run()
    stored = FactStore(tmp_path / "facts.sqlite").get("doc-b", "capital_adequacy_ratio", "资本充足率")
    assert stored.verdict == "page_corrected" and stored.page == 7 and "page 7" in stored.verdict_reason


def test_repair_can_be_turned_off(run):
    pred, lm = run(repair_facts=False)
    assert not [e for e in lm.history if "does not print the value" in e["messages"][-1]["content"]]
    assert pred.trace["extract"]["repair_calls"] == 0


def test_a_count_read_off_the_quoted_lines_is_checked_by_its_quote_only():
    from programs.stages.verification import checked
    from signatures.types import Fact

    pages = {2: "乔莉敏 副董事长、行长 女 50\n王芳 董事 女 45\n李娜 监事 女 41", 3: "其他"}
    count = Fact(
        doc_id="d",
        field="female_executive_count",
        value="3",
        unit="人",
        quote="乔莉敏 副董事长、行长 女 50",
        page=2,
        field_type="integer",
        field_unit="people",
    )
    assert checked(count, pages).verdict == "verified"
    assert checked(count.model_copy(update={"page": 3}), pages).verdict == "page_corrected"
    ratio = count.model_copy(update={"field_unit": "percent", "field_type": "percent"})
    assert checked(ratio, pages).verdict == "value_not_in_quote"  # any other unit: the value must be printed
    invented = count.model_copy(update={"quote": "共有女性高管3名"})
    assert checked(invented, pages).verdict == "quote_not_found"


def test_a_repair_the_budget_refuses_keeps_what_passed_and_fails_the_document(
    settings, use_lm, tmp_path, monkeypatch
):
    """The repair call refused (the run's budget is spent): the facts that passed the check are stored
    (paid for), the failing one is not (stored, a resume would reuse it unrepaired), and the question
    fails with the refusal, so a resume asks it again: only doc-c's failing field."""
    from programs.lm.spend import BudgetReached
    from programs.stages.extractor import DocumentExtractor

    first_ask = DocumentExtractor.ask

    def refuse_repairs(self, predictor, job, specs, tokens, feedback=""):
        if feedback:
            raise BudgetReached("the --max-calls budget of 4 LM requests is spent")
        return first_ask(self, predictor, job, specs, tokens, feedback)

    monkeypatch.setattr(DocumentExtractor, "ask", refuse_repairs)
    use_lm(**REPLIES)
    facts = FactStore(tmp_path / "facts.sqlite")
    program = build_program(settings, PagedStore(), facts=facts)
    with pytest.raises(BudgetReached, match="budget of 4"):
        program(question="哪家公司资本充足率最高？")
    assert facts.get("doc-c", "revenue", "营业收入") is not None  # verified: kept
    assert facts.get("doc-c", "capital_adequacy_ratio", "资本充足率") is None  # failed the check: asked again
    assert facts.get("doc-a", "capital_adequacy_ratio", "资本充足率") is not None
