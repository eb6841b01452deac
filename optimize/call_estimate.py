"""What a compile's LM requests can buy, priced before any is spent.

Why: budgets bought nothing, silently. MIPROv2 at --max-calls 80 stopped before scoring one candidate
and saved the starting program; nothing said what budget would have been enough. So before spending,
the compile prices (1) one candidate evaluation on the dev questions and (2) what the optimizer runs
before its first scored candidate (optimize/optimizers.py, `first_score`), and refuses a cap below (2)
naming the --max-calls that would do (or, with --force, warns and spends it anyway).

The price of one program run on a question is one clean pass, from the catalog: plan 1 + one
extraction per document in scope + normalize 1 + code 1 + answer 1. An upper bound for that pass
(the planner may restrict to fewer documents; rules often normalize without the LM), not for its
retries (a fact repair or a code fix adds calls). Extractor-stage examples cost one call each.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from optimize.optimizers import OptimizerOptions, get_spec

ONE_PASS = {"plan": 1, "normalize": 1, "code": 1, "answer": 1}  # + one extraction per document in scope


@dataclass(frozen=True)
class Estimate:
    optimizer: str
    question_calls: dict[str, int]  # the price of one run, per stage, on an average dev question
    candidate_calls: int  # one candidate evaluation on every dev question
    dev_questions: int
    first_score_calls: int  # what the optimizer spends before its first scored candidate
    first_score: str  # how, in words

    def as_record(self) -> dict:
        return asdict(self)

    def shortfall(self, max_calls: int | None) -> str | None:
        """Why `max_calls` cannot buy one scored candidate, with the number that can; None when it can."""
        if max_calls is None or max_calls >= self.first_score_calls:
            return None
        per = " + ".join(f"{stage} {n}" for stage, n in self.question_calls.items())
        return (
            f"--max-calls {max_calls} cannot buy one scored candidate: {self.optimizer} {self.first_score}, "
            f"about {self.first_score_calls} LM calls; one candidate evaluation on the {self.dev_questions} "
            f"dev question(s) costs about {self.candidate_calls} (a question: {per}, one clean pass). "
            f"Pass --max-calls {self.first_score_calls} or more, or --force to spend {max_calls} anyway"
        )


def example_calls(example, stage: str, catalog) -> dict[str, int]:
    """One run's LM calls per stage: a whole-program question, or one extraction (extractor stage)."""
    if stage == "extractor":
        return {"extract": 1}
    documents = len(catalog.select(None, within=list(example.doc_ids)))  # as Analyst.scope reads them
    return {
        "plan": ONE_PASS["plan"],
        "extract": documents,
        **{k: ONE_PASS[k] for k in ("normalize", "code", "answer")},
    }


def estimate(
    optimizer: str,
    stage: str,
    trainset: list,
    valset: list,
    catalog,
    options: OptimizerOptions,
    predictors: int,
) -> Estimate:
    """Price one candidate evaluation and the optimizer's road to its first score, from the catalog."""
    dev = valset or trainset  # what a candidate is scored on (tiny datasets: the trainset)
    per_dev = [example_calls(e, stage, catalog) for e in dev]
    per_train = [sum(example_calls(e, stage, catalog).values()) for e in trainset]
    mean_dev = {k: math.ceil(sum(c.get(k, 0) for c in per_dev) / len(per_dev)) for k in per_dev[0]}
    first = get_spec(optimizer).first_score(len(trainset), len(valset), options, predictors)
    train_run = math.ceil(sum(per_train) / len(per_train))
    first_calls = (
        first.train_runs * train_run + first.val_runs * sum(mean_dev.values()) + first.proposer_calls
    )
    return Estimate(
        optimizer=optimizer,
        question_calls=mean_dev,
        candidate_calls=sum(sum(c.values()) for c in per_dev),
        dev_questions=len(dev),
        first_score_calls=first_calls,
        first_score=first.what,
    )
