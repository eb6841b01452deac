"""Yes/no settings: the known words only, any case; anything else is refused with the variable named.

Before: a word outside 1/true/yes/on (say "enabled") was read as off without a word, so
COLLATE_SANDBOX_STRICT=enabled quietly ran hostile code without isolation.
"""

from __future__ import annotations

import dataclasses

import pytest

from programs.lm.settings import Settings
from signatures.env_flags import FALSE_WORDS, TRUE_WORDS, FlagError, env_flag, parse_flag

BOOLEAN_SETTINGS = [f.name for f in dataclasses.fields(Settings) if str(f.type).startswith("bool")]


@pytest.mark.parametrize("word", ["1", "true", "TRUE", "Yes", "on", " on "])
def test_the_yes_words_are_true_in_any_case(word):
    assert parse_flag("COLLATE_X", word, default=False) is True


@pytest.mark.parametrize("word", ["0", "false", "False", "NO", "off", "\toff\n"])
def test_the_no_words_are_false_in_any_case(word):
    assert parse_flag("COLLATE_X", word, default=True) is False


@pytest.mark.parametrize("word", [None, "", "   "])
def test_unset_or_blank_is_the_default(word):
    assert parse_flag("COLLATE_X", word, default=True) is True
    assert parse_flag("COLLATE_X", word, default=None) is None


@pytest.mark.parametrize("word", ["enabled", "disabled", "y", "2", "-1", "off!", "true false", "ja"])
def test_any_other_word_is_refused_naming_the_variable_the_word_and_the_words_it_knows(word):
    with pytest.raises(FlagError) as caught:
        parse_flag("COLLATE_SANDBOX_STRICT", word, default=False)
    message = str(caught.value)
    assert "COLLATE_SANDBOX_STRICT" in message and repr(word) in message
    assert all(w in message for w in TRUE_WORDS + FALSE_WORDS)
    assert isinstance(caught.value, ValueError)  # callers that catch ValueError for bad settings still do


def test_env_flag_reads_the_given_environment_only():
    assert env_flag("COLLATE_X", default=False, environ={"COLLATE_X": "on"}) is True
    assert env_flag("COLLATE_X", default=False, environ={}) is False
    with pytest.raises(FlagError, match="COLLATE_X"):
        env_flag("COLLATE_X", default=False, environ={"COLLATE_X": "enabled"})


def test_the_process_environment_is_read_when_none_is_given(monkeypatch):
    monkeypatch.setenv("COLLATE_X", "Off")
    assert env_flag("COLLATE_X", default=True) is False


def test_settings_have_yes_no_settings_to_check():
    assert {"use_unverified", "fact_reuse", "repair_facts", "sandbox"} <= set(BOOLEAN_SETTINGS)


@pytest.mark.parametrize("name", BOOLEAN_SETTINGS)
def test_every_yes_no_setting_refuses_a_word_it_does_not_know(name):
    variable = f"COLLATE_{name.upper()}"
    with pytest.raises(ValueError, match=variable) as caught:
        Settings.from_env(require_lm=False, environ={variable: "enabled"})
    assert "'enabled'" in str(caught.value) and "off" in str(caught.value)


@pytest.mark.parametrize("name", BOOLEAN_SETTINGS)
def test_every_yes_no_setting_reads_both_words_and_keeps_its_default_when_blank(name):
    variable = f"COLLATE_{name.upper()}"
    default = getattr(Settings(), name)
    assert getattr(Settings.from_env(require_lm=False, environ={variable: "YES"}), name) is True
    assert getattr(Settings.from_env(require_lm=False, environ={variable: "off"}), name) is False
    assert getattr(Settings.from_env(require_lm=False, environ={variable: " "}), name) is default


def test_use_unverified_enabled_is_refused_not_read_as_off():
    """The issue's example: COLLATE_USE_UNVERIFIED=enabled was silently False."""
    with pytest.raises(ValueError, match="COLLATE_USE_UNVERIFIED='enabled'"):
        Settings.from_env(require_lm=False, environ={"COLLATE_USE_UNVERIFIED": "enabled"})


def test_the_retired_strict_variable_refuses_unknown_words_too():
    with pytest.raises(ValueError, match="COLLATE_SANDBOX_STRICT='enabled'"):
        Settings.from_env(require_lm=False, environ={"COLLATE_SANDBOX_STRICT": "enabled"})
