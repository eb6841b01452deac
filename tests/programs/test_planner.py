"""Restrictions are applied by code; one that matches nothing is fed back once, then warned about."""

from __future__ import annotations

from programs.stages.planner import Planner, column_name


def plan_with(restriction: dict, name: str = "ratio") -> dict:
    return {
        "subqueries": [
            {
                "query": "q",
                "restriction": restriction,
                "fields": [{"name": name, "description": "资本充足率", "type": "percent", "unit": "percent"}],
            }
        ]
    }


def test_restriction_matching_nothing_is_replanned_with_feedback(store, use_lm):
    lm = use_lm(
        **{
            "matches no document": {"reasoning": "fixed", "plan": plan_with({"doctypes": ["A股年报"]})},
            "[[ ## catalog ## ]]": {"reasoning": "typo", "plan": plan_with({"doctypes": ["A股年度报告"]})},
        }
    )
    out = Planner(store.catalog)(question="q")
    assert len(lm.history) == 2
    feedback = lm.history[1]["messages"][-1]["content"]
    assert "A股年度报告" in feedback and "A股年报" in feedback  # names the bad value and the real ones
    assert sorted(out.assignments) == ["doc-a", "doc-b", "doc-c"] and out.warnings == []


def test_restriction_still_matching_nothing_becomes_a_warning(store, use_lm):
    lm = use_lm(**{"[[ ## catalog ## ]]": {"reasoning": "", "plan": plan_with({"years": [1999]})}})
    out = Planner(store.catalog)(question="q")
    assert len(lm.history) == 2  # one re-plan, no more
    assert out.assignments == {}
    assert any("matches no document" in w for w in out.warnings)
    assert any("no document in scope" in w for w in out.warnings)


def test_scope_limits_what_restrictions_reach(store, use_lm):
    use_lm(**{"[[ ## catalog ## ]]": {"reasoning": "", "plan": plan_with({"symbols": [600001]}, name="ID")}})
    out = Planner(store.catalog)(question="q", scope=["doc-a", "doc-b", "doc-esg"])
    assert sorted(out.assignments) == ["doc-a", "doc-esg"]  # symbol as int still matches, by code
    assert out.plan.fields()[0].name == "value_id"  # never collides with identity columns


def test_column_names_are_safe():
    assert column_name("Total Assets (USD)") == "total_assets_usd"
    assert column_name("2023 revenue") == "value_2023_revenue"
    assert column_name("year") == "value_year"
