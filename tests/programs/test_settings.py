"""Settings precedence, the NoLMConfigured message, and the one place that builds LMs."""

from __future__ import annotations

import dspy
import pytest

from programs.analyst import build_program
from programs.lm.settings import NoLMConfigured, Settings, build_lm, configure


def test_defaults_then_environment_then_overrides(monkeypatch):
    monkeypatch.setenv("COLLATE_LM", "openai/from-env")
    monkeypatch.setenv("COLLATE_CONCURRENCY", "3")
    monkeypatch.setenv("COLLATE_TEMPERATURE", "0.5")
    monkeypatch.setenv("COLLATE_CACHE", "false")
    s = Settings.from_env()
    assert (s.lm, s.concurrency, s.temperature, s.cache, s.k) == ("openai/from-env", 3, 0.5, False, 5)
    s = Settings.from_env({"lm": "openai/from-flag", "concurrency": None, "k": 2})
    assert (s.lm, s.concurrency, s.k) == ("openai/from-flag", 3, 2)  # None = flag not given


def test_defaults_are_deterministic_and_concurrent():
    s = Settings.from_env({"lm": "openai/x"}, environ={})
    assert s.temperature == 0.0 and s.concurrency == 16 and s.num_retries == 3


def test_nothing_configured_names_the_variable_and_two_examples():
    with pytest.raises(NoLMConfigured) as info:
        Settings.from_env(environ={})
    message = str(info.value)
    assert "COLLATE_LM" in message and "openai/gpt-4.1-mini" in message and "OPENAI_API_KEY" in message
    assert "COLLATE_API_BASE=http://localhost:8000/v1" in message and "localhost:11434/v1" in message
    with pytest.raises(NoLMConfigured):
        build_lm(Settings(), "planner")


def test_bad_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("COLLATE_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="COLLATE_CONCURRENCY"):
        Settings.from_env({"lm": "openai/x"})
    monkeypatch.delenv("COLLATE_CONCURRENCY")
    with pytest.raises(ValueError, match="unknown settings"):
        Settings.from_env({"lm": "openai/x", "concurency": 2})


def test_build_lm_uses_stage_override_and_endpoint():
    s = Settings(lm="openai/base", lm_extractor="openai/small", api_base="http://127.0.0.1:9/v1", api_key="k")
    lm = build_lm(s, "extractor")
    assert lm.model == "openai/small" and lm.kwargs["temperature"] == 0.0
    assert lm.kwargs["api_base"] == "http://127.0.0.1:9/v1" and lm.num_retries == 3
    assert build_lm(s, "planner").model == "openai/base"
    with pytest.raises(ValueError, match="unknown stage"):
        build_lm(s, "summarizer")


def test_configure_sets_default_and_per_stage_lms(store):
    s = Settings(lm="openai/base", lm_coder="openai/coder", api_base="http://127.0.0.1:9/v1")
    program = build_program(s, store)
    configure(s, program)
    assert dspy.settings.lm.model == "openai/base"
    assert program.code_writer.write_code.lm.model == "openai/coder"
    assert program.code_writer.fix_code.lm.model == "openai/coder"
    assert program.planner.plan.lm is None  # falls back to the default LM


def test_as_params_is_flat_and_masks_the_key():
    params = Settings(lm="openai/x", api_key="secret").as_params()
    assert params["api_key"] == "***" and params["lm"] == "openai/x" and "concurrency" in params


def test_request_timeout_reaches_the_lm():
    from programs.lm.settings import build_lm

    lm = build_lm(Settings.from_env({"lm": "openai/x", "timeout": 7.5}, environ={}))
    assert lm.kwargs.get("timeout") == 7.5


def test_sandbox_limits_come_from_settings_and_reach_the_code_writer(store, monkeypatch):
    from programs.analyst import build_program

    monkeypatch.setenv("COLLATE_SANDBOX_MEMORY_MB", "2048")
    monkeypatch.setenv("COLLATE_SANDBOX", "off")
    settings = Settings.from_env({"lm": "dummy/x", "sandbox_timeout": 7.5})
    limits = build_program(settings, store).code_writer.sandboxes.limits
    # the sandbox is told, it reads no environment
    assert limits.memory_mb == 2048 and limits.allow_unisolated is True
    assert Settings().sandbox_limits().allow_unisolated is False  # the default refuses unisolated runs
    assert build_program(settings, store).code_writer.timeout == 7.5


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("k", 0),
        ("k", -1),
        ("concurrency", 0),
        ("sandbox_timeout", 1e9),
        ("sandbox_memory_mb", 100),
        ("timeout", 0),
    ],
)
def test_out_of_range_settings_are_refused_naming_the_range_and_the_variable(name, value):
    with pytest.raises(ValueError, match=rf"{name}={value} is out of range: use .* \(COLLATE_{name.upper()}"):
        Settings(lm="x", **{name: value})
