"""The stage table (programs/lm/stages.py) and the settings it names hold to each other, and every
reader of a stage's model, price, limit and endpoint goes through a row ("escalate" included)."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from programs.lm.cost_report import cost_figures, price_setting
from programs.lm.prices import price_for
from programs.lm.settings import Settings, build_lm, has_own_lm
from programs.lm.stages import ANALYST_STAGES, PROGRAM_STAGES, STAGES

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {f.name for f in fields(Settings)}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_setting_a_row_names_is_a_setting(stage):
    row = STAGES[stage]
    named = {row.model, row.tokens_field, row.timeout_field, row.retries_field, *row.price_fields}
    named |= set(row.endpoint_fields or ())
    assert named <= FIELDS, sorted(named - FIELDS)


def test_every_per_stage_setting_has_its_row():
    """A setting spelled per stage (lm_X, price_in_X, api_base_X, ...) belongs to a row of the table."""
    per_stage = {
        name
        for name in FIELDS
        if name.startswith(
            (
                "lm_",
                "price_in_",
                "price_out_",
                "max_tokens_",
                "api_base_",
                "api_key_",
                "timeout_",
                "num_retries_",
            )
        )
        and name != "lm_progress_every"
    }
    named = {
        n
        for row in STAGES.values()
        for n in (row.model, row.tokens_field, row.timeout_field, row.retries_field, *row.price_fields)
    } | {n for row in STAGES.values() for n in row.endpoint_fields or ()}
    assert per_stage <= named, sorted(per_stage - named)


def test_the_analyst_stages_and_the_program_stages():
    assert ANALYST_STAGES == ["planner", "extractor", "normalizer", "coder", "answer"]
    assert PROGRAM_STAGES == [*ANALYST_STAGES, "escalate"]


def test_escalate_is_a_row_like_any_other():
    settings = Settings(
        lm="openai/main",
        lm_extractor="openai/cheap",
        lm_extractor_escalate="openai/strong",
        max_tokens_extractor=300,
        price_in_escalate=2.0,
        price_out_escalate=8.0,
        api_base_escalate="http://127.0.0.1:9/v1",
        api_key_escalate="strong-key",
    )
    assert settings.model_for("escalate") == "openai/strong"
    assert settings.max_tokens_for("escalate") == 300  # asked what the extractor was, limited as it is
    assert settings.endpoint_for("escalate") == ("http://127.0.0.1:9/v1", "strong-key")
    assert settings.endpoint_for("extractor") == (None, None)
    assert price_for(settings, "escalate").usd_in == 2.0
    lm = build_lm(settings, "escalate")
    assert (lm.model, lm.kwargs.get("api_base"), lm.kwargs.get("api_key")) == (
        "openai/strong", "http://127.0.0.1:9/v1", "strong-key"
    )  # fmt: skip
    assert Settings(lm="openai/main").model_for("escalate") is None  # no cascade unless named
    assert price_setting("escalate", own_model=True) == "COLLATE_PRICE_IN_ESCALATE/_OUT_ESCALATE"
    figures = cost_figures(
        {"escalate": {"calls": 1, "unpriced_calls": 1}}, settings=Settings(lm="x", lm_extractor_escalate="y")
    )
    assert figures["unpriced_models"] == {"COLLATE_PRICE_IN_ESCALATE/_OUT_ESCALATE": "y"}


def test_a_stage_with_its_own_base_keeps_the_shared_key_unless_it_names_one():
    settings = Settings(lm="openai/m", api_base="http://a/v1", api_key="shared", api_base_judge="http://b/v1")
    assert settings.endpoint_for("judge") == ("http://b/v1", "shared")
    assert settings.endpoint_for("planner") == ("http://a/v1", "shared")
    assert settings.own_endpoints() == {"judge": "http://b/v1"}


def test_every_key_is_masked_in_the_params():
    params = Settings(
        lm="m", api_key="k1", api_key_escalate="k2", api_base_escalate="http://b/v1"
    ).as_params()
    assert params["api_key"] == params["api_key_escalate"] == "***"
    assert params["api_base_escalate"] == "http://b/v1" and params["api_key_judge"] is None


def test_the_environment_sets_a_stage_endpoint():
    settings = Settings.from_env(
        environ={
            "COLLATE_LM": "m",
            "COLLATE_API_BASE_EXTRACTOR": "http://c/v1",
            "COLLATE_API_KEY_EXTRACTOR": "c",
        }
    )
    assert settings.endpoint_for("extractor") == ("http://c/v1", "c")


def test_no_reader_names_escalate_but_the_table():
    """The readers of the table (settings, prices, cost report, preflight, the quote) spell no stage."""
    readers = ["programs/lm/settings.py", "programs/lm/prices.py", "programs/lm/cost_report.py",
               "programs/lm/preflight.py", "programs/quote/quote.py"]  # fmt: skip
    spelled = []
    for relative in readers:
        tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in ("escalate", "_escalate"):
                spelled.append(f"{relative}:{node.lineno}")
    assert not spelled, spelled


def test_a_stage_s_own_timeout_and_retries_reach_its_lm_and_no_other():
    settings = Settings(
        lm="openai/m", timeout=120, num_retries=3, timeout_extractor=600, num_retries_extractor=0
    )
    extractor, planner = build_lm(settings, "extractor"), build_lm(settings, "planner")
    assert (extractor.kwargs["timeout"], extractor.num_retries) == (600, 0)  # 0 is its own, not "unset"
    assert (planner.kwargs["timeout"], planner.num_retries) == (120, 3)
    assert has_own_lm(settings, "extractor") and not has_own_lm(settings, "planner")
    params = settings.as_params()  # the block logged whole (MLflow params, run.json)
    assert params["timeout_extractor"] == 600 and params["num_retries_extractor"] == 0


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("COLLATE_TIMEOUT_EXTRACTOR", "0"),
        ("COLLATE_NUM_RETRIES_ESCALATE", "99"),
        ("COLLATE_TIMEOUT_JUDGE", "slow"),
    ],
)
def test_a_bad_stage_timeout_or_retries_names_its_variable(variable, raw):
    with pytest.raises(ValueError, match=variable):
        Settings.from_env(environ={"COLLATE_LM": "openai/m", variable: raw})
