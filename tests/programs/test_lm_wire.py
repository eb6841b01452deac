"""What reaches a local OpenAI-compatible server (issue 16), read from the request bodies the fake
HTTP server received during a whole `collate ask`: the output-token limit under the name the
endpoint honours and per stage, response_format when structured output is on and not when off,
an LM timeout reported with the setting that fixes it, and a waiting line naming the stage.
"""

from __future__ import annotations

import json
import logging
import os
import signal

import dspy
import pytest

from collate import ask
from fakes.brain import Brain
from fakes.corpus import dataset_items
from fakes.server import FakeLMServer, Fault
from programs.lm.endpoint import engine_for, structured_mode, token_param
from programs.lm.settings import Settings, build_lm
from tests.sandbox.processes import runner_processes

STAGE_KINDS = ("plan", "extract", "normalize", "write_code", "answer")
LIMITS = {
    "COLLATE_MAX_TOKENS_PLANNER": "1111",
    "COLLATE_MAX_TOKENS_EXTRACTOR": "222",
    "COLLATE_MAX_TOKENS_NORMALIZER": "444",
    "COLLATE_MAX_TOKENS_CODER": "1555",
    "COLLATE_MAX_TOKENS_ANSWER": "333",
}
EXPECTED = {"plan": 1111, "extract": 222, "normalize": 444, "write_code": 1555, "answer": 333}


@pytest.fixture
def item(small_corpus):
    items = sorted(
        (i for i in dataset_items(small_corpus[0]) if len(i["metadata"]) >= 2),
        key=lambda i: len(i["metadata"]),
    )
    return items[0]


def local_env(server, monkeypatch, **settings):
    """COLLATE_* as a user of a local server sets them: the local defaults (auto), not the old suites' pins."""
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    for name in ("COLLATE_STRUCTURED", "COLLATE_TOKEN_PARAM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLLATE_CACHE", "false")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)


def run_ask(small_corpus, item, tmp_path, capsys):
    code = ask.main(
        [
            "--index",
            str(small_corpus[1]),
            "--dataset",
            str(small_corpus[0] / "dataset.json"),
            "--question-id",
            item["question_id"],
            "--json",
            "--no-progress",
            "--fact-store",
            str(tmp_path / "facts.sqlite"),
        ]
    )
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code in (0, 1) else None), captured.err  # 1: no answer


def test_each_stage_sends_its_own_limit_as_max_tokens_and_its_json_schema(
    small_corpus, item, monkeypatch, capsys, tmp_path
):
    with FakeLMServer(Brain()) as server:
        local_env(server, monkeypatch, **LIMITS)
        code, out, err = run_ask(small_corpus, item, tmp_path, capsys)
        sent = server.requests_by_kind()
    assert code == 0, err
    assert out["answer"].strip() and out["missing"] == []  # the fake brain still answers in JSON
    # the normalizer asks the LM only for values code could not read: it may make no call here
    assert set(STAGE_KINDS) - {"normalize"} <= set(sent), sent.keys()
    for kind in STAGE_KINDS:
        for request in sent.get(kind, []):
            assert "max_completion_tokens" not in request, (kind, request)
            assert request["max_tokens"] == EXPECTED[kind], (kind, request)
            assert request["response_format"]["type"] in ("json_schema", "json_object"), (kind, request)
    # the planner's and extractor's outputs are closed schemas: constrained decoding, not just JSON mode
    for kind in ("plan", "extract"):
        schema = sent[kind][0]["response_format"]
        assert schema["type"] == "json_schema" and schema["json_schema"]["schema"]["properties"], schema


@pytest.mark.parametrize("structured", ["json_schema", "off"])
def test_an_identical_question_asked_again_is_answered_by_the_cache(
    small_corpus, item, monkeypatch, capsys, tmp_path, structured
):
    """Before: with the JSON schema the planner's and extractor's calls were sent again on every rerun (LiteLLM
    rewrote the pydantic response_format inside the kwargs DSPy keys its cache on, so the key stored after a
    call never matched the key looked up before it); only the text-format stages were cached."""
    dspy.configure_cache(
        enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(tmp_path / "cache")
    )
    (tmp_path / "first").mkdir()
    (tmp_path / "again").mkdir()
    with FakeLMServer(Brain()) as server:
        local_env(server, monkeypatch, COLLATE_STRUCTURED=structured, COLLATE_CACHE="true")
        first = run_ask(small_corpus, item, tmp_path / "first", capsys)
        asked = {kind: len(sent) for kind, sent in server.requests_by_kind().items() if kind in STAGE_KINDS}
        server.reset_counts()
        again = run_ask(
            small_corpus, item, tmp_path / "again", capsys
        )  # a new fact store: extraction asked again
        resent = {kind: len(sent) for kind, sent in server.requests_by_kind().items() if kind in STAGE_KINDS}
    assert first[0] == again[0] == 0, (first[2], again[2])
    assert asked.get("plan") and asked.get("extract"), asked
    assert resent == {}, resent  # every stage's call came from the cache
    assert again[1]["answer"] == first[1]["answer"]
    assert again[1]["cost"]["tokens_in"] == 0 and again[1]["cost"]["usd"] in (0, 0.0, None)


def test_structured_off_sends_no_response_format_and_the_text_format_still_answers(
    small_corpus, item, monkeypatch, capsys, tmp_path
):
    with FakeLMServer(Brain()) as server:
        local_env(server, monkeypatch, COLLATE_STRUCTURED="off")
        code, out, err = run_ask(small_corpus, item, tmp_path, capsys)
        sent = server.requests_by_kind()
    assert code == 0, err
    assert out["answer"].strip() and out["missing"] == []
    requests = [r for kind in STAGE_KINDS for r in sent.get(kind, [])]
    assert requests and all("response_format" not in r for r in requests)
    assert all(r["max_tokens"] == Settings.max_tokens and "max_completion_tokens" not in r for r in requests)


def test_the_limit_name_follows_the_endpoint_or_the_setting():
    local = Settings(lm="openai/m", api_base="http://127.0.0.1:8080/v1")
    hosted = Settings(lm="openai/gpt-4.1-mini")
    assert token_param(local) == "max_tokens" and token_param(hosted) == "max_completion_tokens"
    assert (
        token_param(Settings(lm="openai/m", api_base="https://api.openai.com/v1")) == "max_completion_tokens"
    )
    assert token_param(local.replace(token_param="max_completion_tokens")) == "max_completion_tokens"
    assert structured_mode(local) == "json_schema" and structured_mode(hosted) == "off"
    assert structured_mode(local.replace(structured="off")) == "off"
    # DSPy's own local prefixes already send max_tokens natively; only openai/ ids change engine
    assert engine_for(local, "openai/m") == "litellm" and engine_for(local, "hosted_vllm/m") == "auto"
    assert engine_for(hosted, "openai/gpt-4.1-mini") == "auto"
    lm = build_lm(local.replace(max_tokens_planner=900), "planner")
    assert lm.model == "openai/m"  # the id facts and saved programs record does not change with the route
    with pytest.raises(ValueError, match="COLLATE_STRUCTURED"):
        Settings(structured="yes")
    with pytest.raises(ValueError, match="COLLATE_MAX_TOKENS_PLANNER"):
        Settings(max_tokens_planner=0)
    assert (
        Settings.from_env(environ={"COLLATE_MAX_TOKENS_CODER": "2000"}, require_lm=False).max_tokens_for(
            "coder"
        )
        == 2000
    )


def test_max_completion_tokens_is_sent_when_the_setting_asks_for_it():
    with FakeLMServer(Brain()) as server:
        settings = Settings(
            lm=f"openai/{server.model_name}",
            api_base=server.url,
            api_key="x",
            cache=False,
            token_param="max_completion_tokens",
            max_tokens=77,
        )
        build_lm(settings)("Say hi.")
        (request,) = [r.request for r in server.records]
    assert request["max_completion_tokens"] == 77 and "max_tokens" not in request


@pytest.fixture
def stop_warm_sandboxes():
    """The sandbox the Analyst warms up at a question's start waits for the next question when planning
    fails (by design in a long-lived process); a test that ends there stops it, so later tests that
    count sandbox processes (tests/programs/test_code_writer.py) see none of ours."""
    before = runner_processes()
    yield
    for pid in runner_processes() - before:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize(
    "settings, named",
    [
        ({"COLLATE_TIMEOUT": "2"}, "COLLATE_TIMEOUT / --timeout"),
        # the planner's own timeout bounds it: its messages name that one and its seconds, not the global's
        ({"COLLATE_TIMEOUT": "600", "COLLATE_TIMEOUT_PLANNER": "2"}, "COLLATE_TIMEOUT_PLANNER"),
    ],
)
def test_a_planner_timeout_names_the_setting_and_the_waiting_stage_is_reported(
    small_corpus, item, monkeypatch, capsys, tmp_path, caplog, stop_warm_sandboxes, settings, named
):
    hang = Fault("hang", when=lambda messages: "catalog" in json.dumps(messages))  # the planner's call
    # The hang outlasts any test (the server's stop() ends it): only the 2 s client timeout can end the
    # call, however late a loaded machine gets round to it (a 504 at the hang's end would be another error).
    with FakeLMServer(Brain(), faults=[hang], hang_seconds=600) as server:
        local_env(server, monkeypatch, **settings, COLLATE_NUM_RETRIES="0", COLLATE_LM_PROGRESS_EVERY="0.5")
        with caplog.at_level(logging.WARNING, logger="programs.lm.progress"):
            code, out, err = run_ask(small_corpus, item, tmp_path, capsys)
    assert code == 1, err  # an honest end: no answer (failed, not answered), every document accounted
    assert out["answer"].startswith("No answer: planning failed: the LM did not answer")
    assert out["error"].startswith("planning failed: the LM did not answer")
    assert f"raise {named} " in out["answer"] and "Timeouts(" not in out["answer"] + err
    assert {row["id"] for row in item["metadata"]} <= {m["doc_id"] for m in out["missing"]}
    assert all(f"raise {named} " in m["reason"] for m in out["missing"])
    waiting = [r.getMessage() for r in caplog.records if "waiting" in r.getMessage()]
    assert waiting and waiting[0].startswith("planner: waiting "), waiting
    assert f"gives up after 2 s ({named})" in waiting[0], waiting[0]


def test_parse_failures_are_counted_per_stage_and_the_document_is_accounted(
    small_corpus, item, monkeypatch, capsys, tmp_path
):
    from fakes.chat_format import call_kind
    from programs.lm.progress import current_watch

    first = sorted(row["id"] for row in item["metadata"])[0]
    garbled = Fault(
        "malformed", when=lambda messages: call_kind(messages) == "extract" and first in json.dumps(messages)
    )
    with FakeLMServer(Brain(), faults=[garbled]) as server:
        local_env(server, monkeypatch, COLLATE_REPAIR_FACTS="false")
        code, out, err = run_ask(small_corpus, item, tmp_path, capsys)
    assert code == 0, err
    summary = current_watch().summary()
    assert summary["extractor"]["parse_failures"] >= 1 and summary["planner"]["parse_failures"] == 0
    assert summary["extractor"]["calls"] >= len(item["metadata"])
    assert first in {m["doc_id"] for m in out["missing"]} | {r["id"] for r in out["records"]}


def test_json_object_sends_the_schema_in_llama_cpp_python_s_spelling():
    import dspy

    from programs.lm.endpoint import SchemaJSONAdapter, apply_structured

    with FakeLMServer(Brain()) as server:
        settings = Settings(
            lm=f"openai/{server.model_name}",
            api_base=server.url,
            api_key="x",
            cache=False,
            structured="json_object",
        )
        assert apply_structured(settings) == "json_object" and isinstance(
            dspy.settings.adapter, SchemaJSONAdapter
        )
        with dspy.context(lm=build_lm(settings)):
            dspy.Predict("question -> answer")(question="What is 2+2?")
        (request,) = [r.request for r in server.records]
    assert request["response_format"]["type"] == "json_object"
    assert request["response_format"]["schema"]["properties"]["answer"]["type"] == "string"
    assert "max_tokens" in request
