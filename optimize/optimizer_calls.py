"""The whole of an optimizer's own budget, and the tokens of the calls it makes itself (issue 31 item 6).

Why: MIPROv2 was quoted 243k input tokens and spent 791k. The quote priced it up to its first scored
candidate and gave the proposer's calls no tokens; the proposer sends the program's whole source code
in each of its program-aware calls. Here:
- `budget` is every program run and optimizer call the optimizer's own settings buy (dspy 3.4):
  MIPROv2 bootstraps its demo sets, then runs num_trials minibatch trials plus a full evaluation every
  5 trials (its own `estimated_task_model_calls`); GEPA spends max_metric_calls program runs, one
  reflection per iteration of 2 x reflection_minibatch_size runs; SIMBA runs max_steps steps, each
  sampling num_candidates trajectories on a batch and scoring num_candidates new programs on it, each
  new program made by one rule-writing call at most.
- `proposer_tokens` formats MIPROv2's proposer signatures (dataset summary, program description,
  module description, instruction) with the adapter the run would use and the real inputs (the
  program's source code as `get_dspy_source_code` gives it, the trainset's repr); a GEPA reflection or
  a SIMBA rule call shows the reflection minibatch's calls of a predictor (the quote's mean program call).
Replies are assumed, not measured: REPLY_CHARS below. The demo reader cannot measure them (it answers a
proposer prompt with its default output: a GEPA new_instruction reply of 5 tokens, bench/README.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

REPLY_CHARS = {"observations": 1200, "summary": 600, "description": 600, "instruction": 500}
REFLECTION_TEMPLATE_CHARS = 1800  # GEPA's instruction-proposal prompt around the examples
MIPRO_FULL_EVAL_STEPS = 5  # MIPROv2's minibatch_full_eval_steps default
VIEW_DATA_BATCH = 10  # MIPROv2's dataset summary reads the trainset 10 examples per call, up to 10 calls


@dataclass(frozen=True)
class Budget:
    train_runs: float  # program runs on training examples (bootstrap traces, sampled trajectories)
    val_runs: float  # program runs scoring candidates
    proposer: dict[
        str, float
    ]  # optimizer's own calls by kind: "summary", "describe", "instruction", "reflect"
    what: str


def mipro_trials(options, predictors: int, candidates: int) -> int:
    """MIPROv2's num_trials for auto runs (its _set_num_trials_from_num_candidates), or the one passed."""
    if "num_trials" in options.compile_extra:
        return int(options.compile_extra["num_trials"])
    zeroshot = options.max_demos == 0 and options.max_labeled_demos == 0
    variables = predictors * (1 if zeroshot else 2)
    return int(max(2 * variables * math.log2(candidates), 1.5 * candidates))


def budget(name: str, n_train: int, n_val: int, options, predictors: int) -> Budget | None:
    """Everything the optimizer's own budget buys; None for bootstrap (compile_quote prices its traces)."""
    from optimize.optimizers import AUTO_RUN_SETTINGS, _gepa, _mipro_first, _mipro_val_size, _simba

    if name == "mipro":
        first = _mipro_first(n_train, n_val, options, predictors)
        auto = options.extra.get("auto", "light")
        n = (AUTO_RUN_SETTINGS.get(auto) or {"n": options.extra.get("num_candidates", 6)})["n"]
        trials = mipro_trials(options, predictors, n)
        val = _mipro_val_size(n_train, n_val)
        minibatch = max(1, min(35, val))
        val_runs = minibatch * trials + val * (trials // MIPRO_FULL_EVAL_STEPS + 1)
        instructions = (first.proposer_calls - 2) // 3  # per predictor x predictors
        summary = 2 + max(0, min(math.ceil(n_train / VIEW_DATA_BATCH) - 1, VIEW_DATA_BATCH - 1))
        return Budget(
            first.train_runs,
            val_runs,
            {"summary": summary, "describe": 2 * instructions, "instruction": instructions},
            f"mipro: {first.train_runs} bootstrap runs, {trials} trials of {minibatch} dev question(s) and "
            f"{trials // MIPRO_FULL_EVAL_STEPS + 1} full evaluation(s) of {val}, {summary + 3 * instructions} "
            "proposer calls",
        )
    if name == "gepa":
        total = options.max_metric_calls or _gepa_with_lm(options, n_train, _gepa)["max_metric_calls"]
        val = n_val or n_train
        batch = min(3, max(1, n_train))
        iterations = max(0, math.ceil((total - val) / (2 * batch)))
        return Budget(
            0.0,
            float(max(total, val)),  # measured: 6 runs at max_metric_calls 6 (3 scoring, 3 reflected)
            {"reflect": float(iterations)},
            f"gepa: {total} metric calls (program runs), {iterations} reflection(s)",
        )
    if name == "simba":
        args = _simba(options, n_train)
        per_step = args["bsize"] * args["num_candidates"]
        steps = args["max_steps"]
        return Budget(
            float(steps * per_step),
            float(steps * per_step),
            {"reflect": float(steps * args["num_candidates"] / 2)},  # about half its strategies write a rule
            f"simba: {steps} step(s) of {per_step} sampled and {per_step} scoring runs",
        )
    return None


def _gepa_with_lm(options, n_train: int, arguments) -> dict:
    """GEPA's arguments, with a stand-in reflection LM when the quote has none (no LM is built to quote)."""
    from dataclasses import replace

    if options.reflection_lm is None:
        options = replace(options, reflection_lm=object())
    return arguments(options, n_train)


def proposer_tokens(kind: str, program, trainset: list, adapter, counter, mean_call: tuple[float, float]):
    """(in, out) tokens of one optimizer call of `kind`; mean_call: the quote's mean program call."""
    if kind == "reflect":
        batch = min(3, max(1, len(trainset)))
        template = counter.count(filler(REFLECTION_TEMPLATE_CHARS))
        return batch * (mean_call[0] + mean_call[1]) + template, float(
            counter.count(filler(REPLY_CHARS["instruction"]))
        )
    from dspy.propose.dataset_summary_generator import DatasetDescriptor
    from dspy.propose.grounded_proposer import DescribeModule, generate_instruction_class
    from dspy.propose.utils import get_dspy_source_code
    from dspy.teleprompt.utils import get_signature

    code = get_dspy_source_code(program)
    demos = "No task demos provided."
    description = filler(REPLY_CHARS["description"])
    module = "Predict(question) -> answer"
    if kind == "summary":
        examples = repr(trainset[:VIEW_DATA_BATCH])
        signature, inputs, reply = DatasetDescriptor, {"examples": examples}, "observations"
    elif kind == "describe":
        signature, inputs = (DescribeModule, {
            "program_code": code, "program_example": demos, "program_description": description, "module": module,
        })  # fmt: skip
        reply = "description"
    else:
        signature = generate_instruction_class(
            use_dataset_summary=True, program_aware=True, use_task_demos=True,
            use_instruct_history=False, use_tip=True,
        ).signature  # fmt: skip
        basic = get_signature(program.predictors()[0]).instructions
        inputs = {
            "dataset_description": filler(REPLY_CHARS["summary"]), "program_code": code, "module": module,
            "program_description": description, "module_description": description, "task_demos": demos,
            "tip": "Be creative.", "basic_instruction": basic,
        }  # fmt: skip
        reply = "instruction"
    messages = adapter.format(signature, [], inputs)
    prompt = "".join(str(m.get("content") or "") for m in messages)
    return float(counter.count(prompt)), float(counter.count(filler(REPLY_CHARS[reply])))


def filler(chars: int) -> str:
    """Prose of `chars` characters standing for a reply the proposer writes (counted as such, not as "xxx")."""
    text = "The program plans fields, reads each filing's passages, and computes the answer with code. "
    return (text * (chars // len(text) + 1))[:chars]
