"""Issue 33 item 3: a dollar cap that cannot be priced is refused at the start, naming COLLATE_PRICE_IN/_OUT.

Before: `--max-usd 0.0001` with a model of unknown price capped nothing (its calls counted $0 toward
it) and said nothing, though the flag's help promised "the run says so"; the same for the compile.
"""

from __future__ import annotations

import pytest

from collate import compile as collate_compile
from collate import run as collate_run
from programs.lm.prices import check_usd_cap, unpriced
from programs.lm.settings import Settings
from signatures.errors import BadInput


def test_a_run_with_a_dollar_cap_on_a_model_of_unknown_price_is_refused_before_any_call(
    small_corpus, brain_server, tmp_path, capsys
):
    corpus, index = small_corpus
    code = collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(tmp_path / "run"),
         "--limit", "2", "--no-progress", "--no-autolog", "--no-judge", "--max-usd", "0.0001"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0  # before: exit 0, every question asked, nothing said
    assert err.startswith("error: --max-usd 0.0001 cannot be enforced") and "openai/" in err
    assert "COLLATE_PRICE_IN/_OUT" in err and "--max-tokens" in err
    assert brain_server.calls == 0 and not (tmp_path / "run" / "answers.jsonl").exists()


def test_a_compile_with_a_dollar_cap_on_a_model_of_unknown_price_is_refused_before_any_call(
    small_corpus, brain_server, tmp_path, capsys
):
    corpus, index = small_corpus
    code = collate_compile.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--optimizer", "bootstrap",
         "--out", str(tmp_path / "c.json"), "--limit", "2", "--no-autolog", "--max-usd", "0.0001"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--max-usd 0.0001 cannot be enforced" in err and "COLLATE_PRICE_IN/_OUT" in err
    assert brain_server.calls == 0 and not (tmp_path / "c.json").exists()


def test_the_refusal_names_the_setting_that_prices_each_unpriced_model():
    local = Settings(lm="openai/local-a", lm_extractor="openai/local-b")
    assert unpriced(local, ["planner", "extractor"]) == {
        "openai/local-a": ["COLLATE_PRICE_IN/_OUT"],
        "openai/local-b": ["COLLATE_PRICE_IN_EXTRACTOR/_OUT_EXTRACTOR"],
    }
    with pytest.raises(BadInput, match="COLLATE_PRICE_IN_EXTRACTOR/_OUT_EXTRACTOR"):
        check_usd_cap(local, ["planner", "extractor"], 1.0)
    priced = local.replace(price_in=1.0, price_out=2.0, price_in_extractor=0.1, price_out_extractor=0.2)
    check_usd_cap(priced, ["planner", "extractor"], 1.0)  # every model priced: accepted
    check_usd_cap(local, ["planner", "extractor"], None)  # no dollar cap: nothing to price
    cascade = priced.replace(lm_extractor_escalate="openai/local-strong")
    assert unpriced(cascade, ["extractor"]) == {
        "openai/local-strong": ["COLLATE_PRICE_IN_ESCALATE/_OUT_ESCALATE"]
    }
    assert unpriced(Settings(lm="openai/gpt-4.1-mini"), [None, "planner"]) == {}  # in DSPy's price table
