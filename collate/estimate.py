"""`--estimate` on ask, run and compile: the quote before spending, printed, then exit 0.

The command's own input checks run first (a bad --index, dataset, question id, --program or setting
is still exit 2 with the fix); then the program is built as the command would build it, but with no
fact store (opening one creates it), no LM, no MLflow run, no output folder: nothing is sent and
nothing is written. Without COLLATE_LM the tokens are still quoted and the dollars say
"price unknown (no model set)". The quote itself: programs/quote/ (run, ask) and
optimize/compile_quote.py (compile). `quote_ask/run/compile(args, ..., counter)` return it (the bench
counts its tokens the fake server's way); `for_ask/run/compile(args, ...)` print it. The commands pass
in their own input checks (collate.ask's read_question and build, collate.run's inputs_from_compile and
check_coverage), so the checks are the command's own and this module imports no command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from collate.budget_flags import check_budget_arguments
from collate.compile_job import compile_job
from collate.errors import Exit
from collate.inputs import BadInput, lm_overrides, open_store
from evaluate.dataset import DatasetError, load_dataset, select, strip_gold
from programs.facts import repair_history
from programs.lm.settings import Settings
from programs.quote.quote import Quote
from programs.quote.tokens import TokenCounter


def printed(make: Callable[[], Quote]) -> int:
    """Print the quote `make` returns (exit 0), or the input error that stopped it (exit 2)."""
    try:
        quote = make()
    except (BadInput, DatasetError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    print("\n".join(quote.lines()))
    return 0


def settings_without_lm(overrides: dict) -> Settings:
    """The command's settings, with no model required, and no fact store opened (nothing is written)."""
    return Settings.from_env(overrides, require_lm=False).replace(fact_reuse=False)


def for_ask(args, read_question, build) -> int:
    """read_question, build: collate.ask's own (passed in: this module sits below the commands)."""
    return printed(lambda: quote_ask(args, read_question, build))


def for_run(args, inputs_from_compile, check_coverage) -> int:
    """inputs_from_compile, check_coverage: collate.run's own input checks (passed in, as above)."""
    return printed(lambda: quote_run(args, inputs_from_compile, check_coverage))


def for_compile(args) -> int:
    return printed(lambda: quote_compile(args))


def quote_ask(args, read_question, build, counter: TokenCounter | None = None) -> Quote:
    """`collate ask --estimate`: one question over its dataset item's documents, or the whole catalog."""
    from programs.quote.questions import quote_questions
    from programs.quote.scope import named_documents

    if args.baseline:
        raise BadInput("--estimate quotes the Analyst's stages: drop --baseline (the flat RAG is one call)")
    question, doc_ids, settings = read_question(args, require_lm=False)
    store = open_store(args.index)
    program = build(args, settings.replace(fact_reuse=False), store)
    program.scope(doc_ids)  # documents missing from the index: the error the question would meet
    facts = settings.fact_path(store) if settings.fact_reuse else None
    history = repair_history.read(facts, settings.model_for("extractor"))
    quote = quote_questions(
        program,
        store,
        settings,
        [(question, doc_ids)],
        "collate ask: 1 question",
        counter,
        reused_facts=facts if facts and Path(facts).is_file() else None,
        history=history,
    )
    if doc_ids is None:  # the whole catalog: beside it, the documents the question names
        named, how = named_documents(question, program.catalog.select(None))
        if how and 0 < len(named) < quote.documents:
            scoped = quote_questions(
                program, store, settings, [(question, [d.id for d in named])], "", counter, history=history
            )
            quote.likely = (len(named), how, scoped.totals())
    return quote


def quote_run(args, inputs_from_compile, check_coverage, counter: TokenCounter | None = None) -> Quote:
    """`collate run --estimate`: the dataset's selected questions, answered as one run."""
    from evaluate.runs.evaluation import FLAT_VARIANTS, build_variant
    from programs import compiled
    from programs.quote.questions import quote_questions

    if args.program in FLAT_VARIANTS:
        raise BadInput(f"--estimate quotes the Analyst's stages: {args.program} is one call per question")
    program_file = Path(args.program) if args.program else None
    origin = compiled.origin(program_file) if program_file is not None and program_file.is_file() else {}
    inputs_from_compile(args, origin, program_file)
    if args.concurrency < 1:
        raise BadInput(f"--concurrency must be at least 1 (got {args.concurrency})")
    check_budget_arguments(args)
    settings = settings_without_lm({**lm_overrides(args), "lm_judge": args.judge})
    items = select(load_dataset(args.dataset), args.split, args.seed, args.limit)
    store = open_store(args.index)
    check_coverage(items, store, args.dataset, args.index)
    program = build_variant(args.program, settings, store, Path(args.out or "runs"))
    left = still_to_ask(items, args.out)
    what = (
        f"{len(left)} of {len(items)} question(s) left to ask"
        if len(left) < len(items)
        else f"{len(items)} question(s)"
    )
    quote = quote_questions(
        program,
        store,
        settings,
        [(item.question, list(item.doc_ids) or None) for item in map(strip_gold, left)],
        f"collate run: {what} (split {args.split})",
        counter,
        history=run_history(settings, store, args.out),
    )
    if len(left) < len(items):
        quote.notes.insert(
            0,
            f"resuming {Path(args.out) / 'answers.jsonl'}: the {len(items) - len(left)} question(s) answered there "
            "are not asked again, so not quoted (a failed one is asked again, and quoted)",
        )
    if settings.judge_model() and not args.no_judge:
        quote.notes.append("judge: one call per answer the matcher cannot decide, not counted")
    return capped(quote, args)


def still_to_ask(items: list, out: str | None) -> list:
    """The items a run into `out` would ask: those its journal holds no answer for (read, never repaired:
    the quote writes nothing; a run of other settings there is refused by the run itself)."""
    from evaluate.runs.journal import AnswerJournal, read_answers

    journal = Path(out) / "answers.jsonl" if out else None
    if journal is None or not journal.is_file():
        return items
    try:
        done = AnswerJournal(journal, read_answers(journal)).answered(item.question_id for item in items)
    except OSError:  # unreadable: the run will say so; the quote counts every question
        return items
    return [item for item in items if item.question_id not in done]


def run_history(settings: Settings, store, out: str | None) -> repair_history.RepairHistory | None:
    """The extractor model's fact repairs as last seen: in the fact store the run will write (COLLATE_FACT_STORE,
    or --out's own when resuming), else in the index's, where `collate ask` keeps its facts."""
    model = settings.model_for("extractor")
    own = settings.fact_store or (str(Path(out) / "facts.sqlite") if out else None)
    return repair_history.read(own, model) or repair_history.read(settings.fact_path(store), model)


def quote_compile(args, counter: TokenCounter | None = None) -> Quote:
    """`collate compile --estimate`: the optimizer's runs and the dev scoring of its result. A --max-calls
    too small to buy one scored candidate is refused after the quote is made, as the compile refuses it."""
    from optimize.compile_quote import quote_compile as quote_job
    from optimize.compiler import (
        DEFAULT_THRESHOLD,
        analyst_without_fact_reuse,
        check_budget,
        optimizer_extra,
        training_sets,
    )
    from optimize.optimizers import OptimizerOptions

    settings = settings_without_lm(lm_overrides(args))
    items = load_dataset(args.dataset)
    store = open_store(args.index)
    program = analyst_without_fact_reuse(settings, store)
    job = compile_job(args)  # the caps included: the quote names one it is above
    trainset, valset, _ = training_sets(items, job)
    if not trainset:
        raise BadInput("no training examples: the dataset's train split has no metadata rows / questions")
    threshold = DEFAULT_THRESHOLD[job.stage] if job.threshold is None else job.threshold
    options = OptimizerOptions(
        seed=job.seed,
        num_threads=job.threads,
        max_demos=job.max_demos,
        max_labeled_demos=0,
        extra=optimizer_extra(job, threshold),
    )
    quote = quote_job(program, store, settings, job, trainset, valset, options, counter)
    predictors = len(program.predictors()) if job.stage == "program" else 1
    try:
        check_budget(job, trainset, valset, program.catalog, options, predictors)
    except BadInput:
        print("\n".join(quote.lines()))  # the quote still helps choose the cap the refusal names
        raise
    return capped(quote, args, flags=("--max-tokens", "--max-usd"))  # the quote is already cut to --max-calls


def capped(quote: Quote, args, flags=("--max-calls", "--max-tokens", "--max-usd")) -> Quote:
    """A note for each cap among `flags` that the quote says the command would reach."""
    total = quote.totals()
    spend = {
        "--max-calls": total["calls"],
        "--max-tokens": total["tokens_in"] + total["tokens_out"],
        "--max-usd": total["usd"],
    }
    for flag, cap in (
        ("--max-calls", getattr(args, "max_calls", None)),
        ("--max-tokens", getattr(args, "max_tokens", None)),
        ("--max-usd", getattr(args, "max_usd", None)),
    ):
        quoted = spend[flag]
        if flag in flags and cap is not None and quoted is not None and quoted > cap:
            quote.notes.append(
                f"{flag} {cap:g} is below the quoted {quoted:,.6g}: the command would stop at the cap "
                "(a run keeps what it answered; a compile saves the best it found)"
            )
    return quote
