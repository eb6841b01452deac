"""Quote a compile before spending: its program runs (optimize/call_estimate.py) priced in tokens per stage.

A compile's LM calls are program runs (no fact store: every run extracts its own documents) plus, for
MIPROv2, GEPA and SIMBA, their own calls that write instructions or rules. Two phases are quoted:
1. the optimizer. BootstrapFewShot traces the training questions in order until --max-demos of them pass
   the metric threshold: about max_demos / PASS_SHARE runs, at most all of them. MIPROv2, GEPA and SIMBA
   are quoted at everything their own budget buys (optimize/optimizer_calls.py: every trial, every
   metric call, and their proposer's calls with the tokens of the prompts they send). --max-calls caps
   the phase either way.
2. scoring the result on the dev questions (counted apart from --max-calls): one run per dev question,
   each prompt now carrying the demos the optimizer added (each like one call of its predictor); and,
   for the summary's score before, the starting program on them too, unless the optimizer scores it there
   itself (MIPROv2 and GEPA do, first) or can change nothing.
Measured on the demo reader (bootstrap, --max-demos 4): with --limit 3, 1 of 3 traced questions passed
the threshold (one demo per predictor; a dev extraction prompt grew from 1,930 to 2,607 tokens); with
--limit 8, 4 of 8 did (four demos per predictor). PASS_SHARE = 0.5 gives both counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optimize.call_estimate import estimate
from optimize.optimizer_calls import budget, proposer_tokens
from optimize.optimizers import FirstScore, OptimizerOptions, get_spec
from programs.quote import sizes
from programs.quote.questions import quote_adapter, quote_extraction, quote_questions
from programs.quote.quote import Quote
from programs.quote.tokens import TokenCounter, counter_for

PASS_SHARE = 0.5  # traced training questions whose metric passes the threshold (demo reader: 1/3, 4/8)
ADDS_DEMOS = {"bootstrap": True, "mipro": True, "simba": True, "gepa": False}  # GEPA rewrites instructions
SCORES_START_ON_DEV = {"mipro", "gepa"}  # their first evaluation: the starting program on the dev split


@dataclass(frozen=True)
class CompileWork:
    """What the compile is quoted to run."""

    train_runs: float  # program runs (or extractions, extractor stage) of the optimizer phase
    dev_runs: int  # the result scored on the dev questions
    demos: int  # demos per predictor in the dev runs' prompts
    proposer: dict[str, float]  # the optimizer's own calls by kind (optimize/optimizer_calls.py)
    how: str
    before_runs: int = 0  # the starting program scored on the dev questions (the summary's score before)

    @property
    def proposer_calls(self) -> float:
        return sum(self.proposer.values())


def compile_work(
    job, trainset: list, valset: list, first: FirstScore, run_calls: float, options=None, predictors: int = 1
) -> CompileWork:
    """The runs of each phase; run_calls: LM calls of one training run (a capped phase is cut to fit)."""
    options = options or OptimizerOptions()
    proposer: dict[str, float] = {}
    if job.optimizer == "bootstrap":
        runs = float(min(len(trainset), math.ceil(max(job.max_demos, 1) / PASS_SHARE)))
        how = f"bootstrap traces about {runs:.0f} training question(s) to find {job.max_demos} demo(s)"
    else:
        whole = budget(job.optimizer, len(trainset), len(valset), options, predictors)
        if whole is None:  # an optimizer without a whole-budget rule: its first scored candidate
            runs, proposer = float(first.train_runs + first.val_runs), {"instruction": first.proposer_calls}
            how = f"{job.optimizer} {first.what}: a floor, it spends more while its own budget lasts"
        else:
            runs, proposer, how = whole.train_runs + whole.val_runs, dict(whole.proposer), whole.what
    own = sum(proposer.values())
    if job.max_calls is not None and runs * run_calls + own > job.max_calls:
        # the cap stops the optimizer where it is; its own calls are kept first (MIPROv2 proposes before any trial)
        share = min(1.0, job.max_calls / own) if own else 1.0
        proposer = {kind: n * share for kind, n in proposer.items()}
        runs = max(0.0, (job.max_calls - own * share) / max(run_calls, 1))
        how += f"; cut to --max-calls {job.max_calls}"
    passing = math.floor(runs * PASS_SHARE) if job.optimizer == "bootstrap" else job.max_demos
    demos = min(job.max_demos, max(1, passing)) if ADDS_DEMOS.get(job.optimizer) and runs >= 1 else 0
    changes = demos > 0 or own > 0
    before = len(valset) if changes and job.optimizer not in SCORES_START_ON_DEV else 0
    return CompileWork(runs, len(valset), demos, proposer, how, before)


def quote_compile(
    program,
    store,
    settings,
    job,
    trainset: list,
    valset: list,
    options: OptimizerOptions,
    counter: TokenCounter | None = None,
) -> Quote:
    """The quote of `job` on these examples (optimize.compiler.training_sets), stage by stage."""
    counter = counter or counter_for(settings)
    predictors = len(program.predictors()) if job.stage == "program" else 1
    priced = estimate(job.optimizer, job.stage, trainset, valset, program.catalog, options, predictors)
    first = get_spec(job.optimizer).first_score(len(trainset), len(valset), options, predictors)
    train = [runs_of(e, job.stage) for e in trainset]
    work = compile_work(job, trainset, valset, first, run_calls(priced.question_calls), options, predictors)
    traced = train[: max(1, math.ceil(work.train_runs))]
    read = [ids for _, ids in train + [runs_of(e, job.stage) for e in valset]]
    quote = Quote(
        what=f"collate compile ({job.optimizer}, stage {job.stage}): {len(trainset)} train / {len(valset)} dev",
        documents=len({d for ids in read for d in (ids or [d.id for d in program.catalog.documents()])}),
        tokenizer=counter.name,
    )
    quote_one = quote_extraction if job.stage == "extractor" else quote_questions
    each = [quote_one(program, store, settings, [run], "run", counter) for run in traced]
    add_runs(quote, each, work.train_runs / len(traced))
    dev = [
        quote_one(program, store, settings, [runs_of(e, job.stage)], "run", counter, demos=work.demos)
        for e in valset
    ]
    add_runs(quote, dev, 1.0)
    if work.before_runs:  # the starting program on the same questions: no demos in its prompts
        start = [quote_one(program, store, settings, [runs_of(e, job.stage)], "run", counter) for e in valset]
        add_runs(quote, start, 1.0)
    mean_call = mean_program_call(each)
    adapter = quote_adapter(settings)
    for kind, calls in work.proposer.items():
        tokens_in, tokens_out = proposer_tokens(kind, program, trainset, adapter, counter, mean_call)
        quote.stage("proposer").add(calls, tokens_in, tokens_out)
    quote.notes.append(f"optimizer: {work.how} ({work.train_runs:.1f} runs)")
    before = (
        f", and {work.before_runs} of the starting program (the score before)" if work.before_runs else ""
    )
    quote.notes.append(
        f"dev scoring: {work.dev_runs} run(s), each prompt with {work.demos} demo(s) per predictor{before}; "
        "counted apart from --max-calls, as new requests (cache hits make it cheaper)"
    )
    if work.proposer_calls:
        quote.notes.append(
            "proposer: the optimizer's own calls (dataset summary, program and module descriptions, "
            "instructions; reflections), prompts formatted from the program's source and the trainset, "
            "replies assumed (optimize/optimizer_calls.py)"
        )
    quote.notes += [n for n in (each[0].notes if each else []) if n.startswith("not counted")]
    return spanned(quote).priced(settings)


def run_calls(question_calls: dict[str, int]) -> float:
    """LM calls of one run: call_estimate's clean pass, with the normalizer at its expected share (the
    rules parsed every demo value) rather than one call: 11 calls a demo run, not 12."""
    normalize = sizes.NORMALIZE_SHARE if "normalize" in question_calls else 0.0
    return sum(n for stage, n in question_calls.items() if stage != "normalize") + normalize


def runs_of(example, stage: str) -> tuple[str, list[str] | None]:
    """(question, documents) one run of the example reads; an extractor-stage example is one document."""
    if stage == "extractor":
        return "", [example.doc_id]
    return example.question, list(example.doc_ids) or None


def add_runs(quote: Quote, runs: list[Quote], weight: float) -> None:
    """Add each run's stages, times `weight` (a mean run scaled to the quoted number of runs), and its range
    as offsets from its total (quote.span holds their sum until spanned() sets it around the compile's)."""
    for run in runs:
        for name, stage in run.stages.items():
            mine = quote.stage(name)
            mine.calls += stage.calls * weight
            mine.tokens_in += stage.tokens_in * weight
            mine.tokens_out += stage.tokens_out * weight
        if run.span is not None:  # an extraction-only run has none: the plan's searches are not quoted
            totals = run.totals()
            total = totals["tokens_in"] + totals["tokens_out"]
            low, high = quote.span or (0.0, 0.0)
            quote.span = (low + weight * (run.span[0] - total), high + weight * (run.span[1] - total))
            quote.repairs += weight * run.repairs


def spanned(quote: Quote) -> Quote:
    """The runs' range offsets (add_runs) around the compile's total, proposer calls included."""
    if quote.span is not None:
        totals = quote.totals()
        total = totals["tokens_in"] + totals["tokens_out"]
        quote.span = (total + quote.span[0], total + quote.span[1])
    return quote


def mean_program_call(runs: list[Quote]) -> tuple[float, float]:
    """(in, out) tokens of the runs' mean LM call: what a reflection shows of each example it reads."""
    calls = sum(s.calls for r in runs for s in r.stages.values())
    if not calls:
        return 0.0, 0.0
    tokens_in = sum(s.tokens_in for r in runs for s in r.stages.values())
    tokens_out = sum(s.tokens_out for r in runs for s in r.stages.values())
    return tokens_in / calls, tokens_out / calls
