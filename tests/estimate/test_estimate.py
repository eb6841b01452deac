"""`--estimate` on run, ask and compile: a quote from the catalog and the prompts, with nothing sent or written
(issue 25 item 2). bench/estimate_accuracy.py measures the same quote on the 40 demo questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from collate import ask as collate_ask
from collate import compile as collate_compile
from collate import estimate
from collate import run as collate_run
from evaluate import tracking
from evaluate.dataset import load_dataset
from programs.analyst import build_program
from programs.batch import answer_batch
from programs.lm.progress import RunCounts
from programs.lm.settings import Settings, configure
from programs.quote.tokens import CHARS_OVER_FOUR, default_counter
from retrievers.indexing.store import IndexStore
from tests.e2e.test_cascade_e2e import PRICES as CASCADE_PRICES

QUESTIONS = 4
RUN_CHECKS = (collate_run.inputs_from_compile, collate_run.check_coverage)


@pytest.fixture(autouse=True)
def own_fact_store(tmp_path, monkeypatch):
    """Each quote reads a fact store of its own: the session's index is shared, and the fact repairs other
    tests' runs recorded there would change these counts (tests/estimate/test_repair_history.py)."""
    monkeypatch.setenv("COLLATE_FACT_STORE", str(tmp_path / "own-facts.sqlite"))


def run_argv(corpus, index, out, *extra: str) -> list[str]:
    return [
        "--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
        "--limit", str(QUESTIONS), "--no-judge", "--no-autolog", "--no-progress", *extra,
    ]  # fmt: skip


def stamp(path: Path) -> int | None:
    """When `path` was last written, or None: the index is shared by the session's tests, so an earlier
    run may have made its fact store; the quote must not touch it."""
    return path.stat().st_mtime_ns if path.exists() else None


def no_mlflow(monkeypatch) -> None:
    """Opening an MLflow run (or even checking its store) fails the test: the quote logs nothing."""

    def refuse(*args, **kwargs):
        raise AssertionError("--estimate touched MLflow")

    monkeypatch.setattr(tracking, "start_run", refuse)
    monkeypatch.setattr(collate_run, "check_store", refuse)
    monkeypatch.setattr(collate_compile, "check_store", refuse)


def test_run_estimate_sends_no_request_and_writes_nothing(
    small_corpus, brain_server, tmp_path, monkeypatch, capsys
):
    corpus, index = small_corpus
    out = tmp_path / "run"
    no_mlflow(monkeypatch)
    facts_before = stamp(index / "facts.sqlite")
    code = collate_run.main(run_argv(corpus, index, out, "--estimate"))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert brain_server.calls == 0  # not even the 1-token LM check
    assert not out.exists()
    assert stamp(index / "facts.sqlite") == facts_before and not (tmp_path / "own-facts.sqlite").exists()
    assert f"estimate for collate run: {QUESTIONS} question(s)" in printed.out
    assert "no LM was called" in printed.out and "tokens counted with tiktoken o200k_base" in printed.out


def test_the_quote_counts_each_document_once_and_each_question_s_stages(small_corpus, brain_server):
    corpus, index = small_corpus
    items = load_dataset(str(corpus / "dataset.json"))[:QUESTIONS]
    documents = {doc_id for item in items for doc_id in item.doc_ids}
    args = collate_run.build_parser().parse_args(run_argv(corpus, index, "unused", "--estimate"))
    quote = estimate.quote_run(args, *RUN_CHECKS)
    stages = quote.stages
    assert (
        quote.documents == len(documents) == stages["extractor"].calls
    )  # once per document, not per question
    assert stages["extractor"].calls < sum(len(item.doc_ids) for item in items)  # questions share documents
    for stage in ("planner", "coder", "answer"):
        assert stages[stage].calls == QUESTIONS
    for stage in ("planner", "extractor", "coder", "answer"):
        assert stages[stage].tokens_in > stages[stage].tokens_out > 0, stage
    total = quote.totals()
    assert total["tokens_in"] == round(sum(s.tokens_in for s in stages.values()))
    assert total["usd"] is None  # the reader's model is in no price table
    assert any("no price known for openai/fake-brain" in n for n in quote.notes)


def test_the_estimate_is_within_25_percent_of_the_run_it_quotes(small_corpus, brain_server, tmp_path):
    """The fake server counts characters / 4: the quote counted the same way, against what the same
    questions then spend answered as one run (programs.batch, as collate run answers them)."""
    corpus, index = small_corpus
    args = collate_run.build_parser().parse_args(run_argv(corpus, index, tmp_path / "run", "--estimate"))
    quote = estimate.quote_run(args, *RUN_CHECKS, CHARS_OVER_FOUR)

    settings = Settings.from_env({"fact_store": str(tmp_path / "facts.sqlite")})
    store = IndexStore.open(index)
    program = build_program(settings, store)
    configure(settings, program)
    counts = RunCounts(program)
    items = load_dataset(str(corpus / "dataset.json"))[:QUESTIONS]
    answer_batch(program, [(item.question, list(item.doc_ids)) for item in items])
    spent = counts.stages()

    actual = sum(s["tokens_in"] + s["tokens_out"] for s in spent.values())
    total = quote.totals()
    ratio = (total["tokens_in"] + total["tokens_out"]) / actual
    assert 0.75 <= ratio <= 1.25, (ratio, quote.as_record(), spent)
    assert total["calls"] == sum(s["calls"] for s in spent.values()) == brain_server.calls
    low, high = quote.span  # what the plan and the replies decide: printed as a range around the total
    assert low < total["tokens_in"] + total["tokens_out"] < high
    assert low <= actual <= high + quote.repairs


def test_without_a_model_the_tokens_are_quoted_and_the_dollars_say_why_not(
    small_corpus, brain_server, monkeypatch, capsys, tmp_path
):
    _, index = small_corpus
    monkeypatch.delenv("COLLATE_LM", raising=False)
    facts_before = stamp(index / "facts.sqlite")
    code = collate_ask.main(["--index", str(index), "--estimate", "Which company had the highest revenue?"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert brain_server.calls == 0 and stamp(index / "facts.sqlite") == facts_before
    assert not (tmp_path / "own-facts.sqlite").exists()  # the store the quote reads is not made either
    assert "price unknown (no model set)" in printed.out
    assert "an upper bound on documents" in printed.out  # no dataset item: the whole catalog is in scope
    assert "tokens counted with tiktoken" in printed.out


def test_a_price_gives_dollars_from_the_quoted_tokens(small_corpus, monkeypatch):
    corpus, index = small_corpus
    monkeypatch.setenv("COLLATE_LM", "openai/some-local-model")
    monkeypatch.setenv("COLLATE_PRICE_IN", "2")
    monkeypatch.setenv("COLLATE_PRICE_OUT", "8")
    item = load_dataset(str(corpus / "dataset.json"))[0]
    args = collate_ask.parse_args(
        ["--index", str(index), "--dataset", str(corpus / "dataset.json"), "--question-id", item.question_id]
        + ["--estimate"]
    )
    quote = estimate.quote_ask(args, collate_ask.read_question, collate_ask.build)
    assert quote.documents == len(set(item.doc_ids))
    total = quote.totals()
    assert total["usd"] == pytest.approx((2 * total["tokens_in"] + 8 * total["tokens_out"]) / 1e6, rel=1e-3)
    assert not any("upper bound on documents" in n for n in quote.notes)
    assert not any(n.startswith("cascade:") for n in quote.notes)  # no cascade set, none quoted


def test_a_cascade_s_strong_calls_are_quoted_as_a_ceiling_beside_the_total(small_corpus, monkeypatch):
    corpus, index = small_corpus
    for name, value in {
        "COLLATE_LM": "openai/strong-model",
        "COLLATE_LM_EXTRACTOR": "openai/cheap-model",
        "COLLATE_LM_EXTRACTOR_ESCALATE": "openai/strong-model",
        **CASCADE_PRICES,  # strong 2/8, cheap extractor 0.4/1.6 dollars per million tokens
    }.items():
        monkeypatch.setenv(name, value)
    item = load_dataset(str(corpus / "dataset.json"))[0]
    args = collate_ask.parse_args(
        ["--index", str(index), "--dataset", str(corpus / "dataset.json"), "--question-id", item.question_id]
        + ["--estimate"]
    )
    quote = estimate.quote_ask(args, collate_ask.read_question, collate_ask.build)
    extraction = quote.stages["extractor"]
    assert extraction.usd == pytest.approx((0.4 * extraction.tokens_in + 1.6 * extraction.tokens_out) / 1e6)
    ceiling = (2 * extraction.tokens_in + 8 * extraction.tokens_out) / 1e6
    (note,) = [n for n in quote.notes if n.startswith("cascade:")]
    assert "openai/strong-model" in note and f"at most {quote.documents:,} calls" in note
    assert f"${ceiling:,.4f} if every document escalated" in note
    assert "escalate" not in quote.stages  # not in the total: the share is known only after the cheap calls


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--index", "/no/such/index", "q?"], "build one with collate build"),
        (["--index", "INDEX", "--question-id", "q1", "q?"], "--question-id needs --dataset"),
        (["--index", "INDEX", "--dataset", "DATASET", "--question-id", "nope"], "is not in"),
        (["--index", "INDEX", "--baseline", "flat", "q?"], "drop --baseline"),
    ],
)
def test_ask_estimate_refuses_bad_input_like_ask(small_corpus, argv, says, capsys):
    corpus, index = small_corpus
    paths = {"INDEX": str(index), "DATASET": str(corpus / "dataset.json")}
    assert collate_ask.main([paths.get(a, a) for a in argv] + ["--estimate"]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--index", "NO_INDEX"], "build one with collate build"),
        (["--max-tokens", "0"], "--max-tokens must be above 0"),
        (["--split", "train", "--limit", "0"], "--limit must be at least 1"),
        (["--program", "flat-rag"], "quotes the Analyst's stages"),
    ],
)
def test_run_estimate_refuses_bad_input_like_run(small_corpus, tmp_path, extra, says, capsys):
    corpus, index = small_corpus
    extra = [str(tmp_path / "no-index") if a == "NO_INDEX" else a for a in extra]
    code = collate_run.main(run_argv(corpus, index, tmp_path / "run", "--estimate", *extra))
    assert code == 2
    assert says in capsys.readouterr().err


def test_a_cap_below_the_quote_is_named(small_corpus, brain_server, tmp_path, capsys):
    corpus, index = small_corpus
    assert collate_run.main(run_argv(corpus, index, tmp_path / "run", "--estimate", "--max-calls", "3")) == 0
    assert "--max-calls 3 is below the quoted" in capsys.readouterr().out


def test_compile_estimate_sends_nothing_and_refuses_a_cap_that_buys_no_candidate(
    small_corpus, brain_server, tmp_path, monkeypatch, capsys
):
    corpus, index = small_corpus
    no_mlflow(monkeypatch)
    argv = [
        "--dataset", str(corpus / "dataset.json"), "--index", str(index), "--optimizer", "bootstrap",
        "--out", str(tmp_path / "compiled.json"), "--limit", "2", "--estimate",
    ]  # fmt: skip
    assert collate_compile.main(argv) == 0
    printed = capsys.readouterr()
    assert "estimate for collate compile (bootstrap, stage program)" in printed.out
    assert "dev scoring" in printed.out
    assert collate_compile.main([*argv, "--max-calls", "1"]) == 2
    refused = capsys.readouterr()
    assert "Pass --max-calls" in refused.err and "estimate for collate compile" in refused.out
    assert brain_server.calls == 0 and not (tmp_path / "compiled.json").exists()


def test_the_token_counter_is_tiktoken_read_offline():
    counter = default_counter()
    assert "tiktoken o200k_base" in counter.name
    chinese = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码"
    assert counter.count(chinese) > CHARS_OVER_FOUR.count(chinese)  # Chinese is ~1 character per token


def compile_quote(corpus, index, tmp_path, optimizer: str, *extra: str):
    argv = [
        "--dataset", str(corpus / "dataset.json"), "--index", str(index), "--optimizer", optimizer,
        "--out", str(tmp_path / "compiled.json"), "--limit", "3", *extra,
    ]  # fmt: skip
    return estimate.quote_compile(collate_compile.build_parser().parse_args(argv), CHARS_OVER_FOUR)


def test_mipro_and_gepa_quotes_price_their_own_calls_and_their_whole_budget(
    small_corpus, brain_server, tmp_path
):
    """MIPROv2 was quoted 243k input tokens and spent 791k: its proposer's calls had no tokens and only
    its first scored candidate was priced (issue 31 item 6)."""
    from dspy.propose.utils import get_dspy_source_code

    corpus, index = small_corpus
    program = build_program(Settings(), IndexStore.open(index))
    source = CHARS_OVER_FOUR.count(get_dspy_source_code(program))
    mipro = compile_quote(corpus, index, tmp_path, "mipro")
    proposer = mipro.stages["proposer"]
    assert proposer.calls >= 5 and proposer.tokens_out > 0
    # each program-aware proposer call sends the program's source code (all but the dataset summary)
    assert proposer.tokens_in / proposer.calls > 0.5 * source
    runs = mipro.stages["planner"].calls  # one plan per program run
    assert runs > 20, "every MIPROv2 trial (light: 10+ minibatches and full evaluations), not the first"
    gepa = compile_quote(corpus, index, tmp_path, "gepa")
    reflect = gepa.stages["proposer"]
    assert reflect.calls >= 1 and reflect.tokens_in / reflect.calls > 500
    assert "their tokens are not" not in "\n".join(gepa.lines())


def test_a_compile_quote_prints_the_range_its_runs_span(small_corpus, brain_server, tmp_path):
    """Its runs' ranges (what the plan's field searches add) around the compile's total; an extractor-stage
    compile has no plan, so no range."""
    corpus, index = small_corpus
    quote = compile_quote(corpus, index, tmp_path, "bootstrap")
    total = quote.totals()["tokens_in"] + quote.totals()["tokens_out"]
    low, high = quote.span
    assert low < total < high and quote.repairs > 0
    assert any(line.lstrip().startswith("range:") for line in quote.lines())
    extractor = compile_quote(corpus, index, tmp_path, "bootstrap", "--stage", "extractor")
    assert extractor.span is None and not any(
        line.lstrip().startswith("range:") for line in extractor.lines()
    )


def test_the_demo_reader_is_quoted_in_its_own_count():
    """The demo reader reports characters / 4; an o200k_base quote was 1.5-1.75x its cost line."""
    from programs.quote.tokens import counter_for

    chinese = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码"
    reader = counter_for(Settings(lm="openai/collate-reader"))
    assert reader.count(chinese) == CHARS_OVER_FOUR.count(chinese) and "demo reader" in reader.name
    assert counter_for(Settings(lm="openai/gpt-4.1")).name == default_counter().name


def _stage_prompts(small_corpus):
    """The quote's prompt maker over the small corpus (fake brain, no fact reuse), its store and first document."""
    from programs.quote.prompts import StagePrompts
    from programs.quote.questions import quote_adapter

    corpus, index = small_corpus
    settings = Settings.from_env({"lm": "openai/fake-brain"}, require_lm=False).replace(fact_reuse=False)
    store = IndexStore.open(index)
    program = build_program(settings, store)
    prompts = StagePrompts(program, store, quote_adapter(settings), CHARS_OVER_FOUR, settings, k=5)
    return store, prompts, store.catalog.documents()[0]


def test_the_extraction_quote_shows_what_the_questions_retrieve_and_grows_with_distinct_questions(
    small_corpus,
):
    """Issue 31 item 6: on the real filings the quote spread a filing's chunks evenly (retrieved passages are
    1.12 times longer: statements' tables rank first) and gave a filing read by two questions asking
    different things 8-9 passages where the extractor showed 14-16."""
    store, prompts, doc = _stage_prompts(small_corpus)
    assets, address = "What were the total assets?", "Where is the registered office address?"
    shown: list[str] = []
    real_format = prompts.adapter.format
    prompts.adapter.format = lambda signature, demos, inputs: (
        shown.extend(inputs["passages"]) or real_format(signature, demos, inputs)
    )  # type: ignore[method-assign]
    one = prompts.extractor(doc, 1, (assets,))
    top = store.search(doc.id, assets, k=5)[0]
    assert f"[page {top.page}] {top.text}" in shown  # the best passage for the question, not a spread chunk
    same = prompts.extractor(doc, 2, (assets, assets))
    distinct = prompts.extractor(doc, 2, (assets, address))
    assert distinct[0] > same[0] > one[0]  # a second question on another topic retrieves passages of its own


def test_the_extraction_quote_searches_with_the_question_and_adds_its_next_ranked_passages_per_field(
    small_corpus,
):
    """Issue 31 item 6: on the real filings the quote showed the question's top k and then one chunk spread
    over the filing (a 22-character one on Adobe's 2015 10-K) where the extractor showed 5-10 retrieved
    passages, and a 48-character sub-query where the extractor showed the question (375 characters). The
    extractor searches its sub-queries and each field; the quote searches the question as the sub-query,
    and stands the fields' searches in with the question's next-ranked passages, 1.42 per field (the
    demo's measure), interpolated between whole counts."""
    from programs.quote import sizes

    store, prompts, doc = _stage_prompts(small_corpus)
    question = "What were the total assets at the end of the year?"
    rendered: list[dict] = []
    real_format = prompts.adapter.format
    prompts.adapter.format = lambda signature, demos, inputs: (
        rendered.append(inputs) or real_format(signature, demos, inputs)
    )  # type: ignore[method-assign]
    ranked = [f"[page {p.page}] {p.text}" for p in store.search(doc.id, question, k=7)]
    expected = prompts.extractor(doc, 1, (question,))
    assert [r["passages"] for r in rendered] == [ranked[:6], ranked[:7]]  # 1 and 2 beyond the question's 5
    assert all(r["questions"] == [question] for r in rendered)
    one, two = (prompts.extractor(doc, 1, (question,), beyond)[0] for beyond in (1, 2))
    share = sizes.PASSAGES_BEYOND_QUESTIONS - 1
    assert one < expected[0] < two and expected[0] == pytest.approx(one + share * (two - one))
    rendered.clear()
    low, high = prompts.extractor(doc, 1, (question,), 0), prompts.extractor(doc, 1, (question,), 5)
    assert low[0] < expected[0] < high[0]
    assert [len(r["passages"]) for r in rendered] == [5, 10]


def test_the_real_filings_bench_skips_in_one_line_where_they_are_absent(tmp_path, capsys, monkeypatch):
    import tempfile

    from bench import estimate_accuracy

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert estimate_accuracy.main(["--real", str(tmp_path / "nowhere")]) == 0
    assert capsys.readouterr().out.startswith("skipped: no real filings at ")
    assert not list(temp.iterdir())  # a skip leaves no work folder behind (it left one a call)


def test_the_any_filing_reader_names_the_asked_figure_and_quotes_a_row_of_it():
    """The bench's reader for real filings (fakes/any_filing.py): a verifiable fact, not any first number."""
    from fakes.any_filing import asked_metric, extract

    name, description = asked_metric("What is the FY2019 net income attributable to shareholders for Amazon?")
    assert (name, description) == (
        "net_income_attributable_to_shareholders",
        "net income attributable to shareholders",
    )
    passage = "[page 61] (In thousands)\nNet revenue 7,301,505 5,854,430\nNet income $ 1,693,954 $ 1,168,782"
    spec = {"name": name, "description": description, "type": "number", "unit": "USD"}
    (value,) = extract({"field_specs": [spec], "passages": [passage]})["values"]
    assert (value["value"], value["page"], value["quote"]) == (
        "1,693,954",
        61,
        "Net income $ 1,693,954 $ 1,168,782",
    )


def test_a_resumed_run_is_quoted_for_the_questions_it_will_still_ask(small_corpus, brain_server, tmp_path):
    """`collate run --out DIR --estimate` into a stopped run's folder: the answered questions are not asked
    again, so not quoted; a failed one is. The journal is read, never repaired (a cut-short line stays)."""
    from evaluate.runs.answering import Answered
    from evaluate.runs.journal import AnswerJournal

    corpus, index = small_corpus
    out = tmp_path / "run"
    out.mkdir()
    items = load_dataset(str(corpus / "dataset.json"))[:QUESTIONS]
    journal = AnswerJournal.open(out / "answers.jsonl")
    journal.append(Answered(items[0].question_id, items[0].question, list(items[0].doc_ids), answer="1"))
    journal.append(Answered(items[1].question_id, items[1].question, list(items[1].doc_ids), error="LMError"))
    with (out / "answers.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"question_id": "cut sho')  # a run killed mid-write
    before = (out / "answers.jsonl").read_bytes()
    args = collate_run.build_parser().parse_args(run_argv(corpus, index, out, "--estimate"))
    quote = estimate.quote_run(args, *RUN_CHECKS)
    assert quote.stages["planner"].calls == QUESTIONS - 1  # the failed one is asked again
    assert f"{QUESTIONS - 1} of {QUESTIONS} question(s) left to ask" in quote.what
    assert any("the 1 question(s) answered there are not asked again" in n for n in quote.notes)
    assert (out / "answers.jsonl").read_bytes() == before and sorted(p.name for p in out.iterdir()) == [
        "answers.jsonl"
    ]
