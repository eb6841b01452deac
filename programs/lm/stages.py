"""The stages a run has, one row each: where a stage's model, endpoint, price and output limit come from.

Settings, prices, the LM watch, the cost report, the preflight and the quote read these rows; none of
them names a stage. Before, "escalate" (the cascade's strong extractor) was special-cased in six modules
because it was not a row: a model setting that is not lm_<stage>, no fallback to COLLATE_LM, the
extractor's output limit, and checked only when the extractor runs.

Every setting a row names is a field of programs.lm.settings.Settings (COLLATE_<FIELD> in the
environment); tests/programs/test_stage_table.py holds the two to each other. Each row's request
timeout and retries are its own (timeout_<name>, num_retries_<name>), else COLLATE_TIMEOUT's and
COLLATE_NUM_RETRIES's: a slow local extractor can wait longer than a hosted planner. The longest wait
before a retry (max_wait) stays one setting: it bounds DSPy's one process-wide retry delay (retry.py).

Budget share: no stage has one, because nothing spends a budget per stage (the caps, --max-usd and
--max-calls, are per run). What a row bounds of a run's spending is its output-token limit (tokens_field),
which the quote already prices per stage.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str  # how it is counted, priced (price_in_<name>) and shown
    model: str  # the Settings field naming its model (COLLATE_LM_<...>)
    attribute: str | None = None  # the Analyst attribute it configures; None: not a stage of the Analyst
    fallback: bool = True  # without a model of its own it runs COLLATE_LM's (the judge and escalate: none)
    max_tokens: str | None = None  # the Settings field limiting its replies (default max_tokens_<name>)
    runs_with: str | None = None  # the stage it only runs beside (checked before a run with it)
    own_endpoint: bool = False  # it may name its own API base and key: api_base_<name>, api_key_<name>
    # where its LM goes in the Analyst when it is no stage of its own: "extractor.escalation" (an object
    # with attach(lm, watch)); None for the Analyst's stages (their attribute) and the stages outside it
    attach_to: str | None = None

    @property
    def price_fields(self) -> tuple[str, str]:
        return f"price_in_{self.name}", f"price_out_{self.name}"

    @property
    def tokens_field(self) -> str:
        return self.max_tokens or f"max_tokens_{self.name}"

    @property
    def timeout_field(self) -> str:
        return f"timeout_{self.name}"

    @property
    def retries_field(self) -> str:
        return f"num_retries_{self.name}"

    @property
    def endpoint_fields(self) -> tuple[str, str] | None:
        return (f"api_base_{self.name}", f"api_key_{self.name}") if self.own_endpoint else None


ROWS = (
    Stage("planner", "lm_planner", "planner"),
    Stage("extractor", "lm_extractor", "extractor", own_endpoint=True),
    Stage("normalizer", "lm_normalizer", "normalizer"),
    Stage("coder", "lm_coder", "code_writer"),
    Stage("answer", "lm_answer", "answerer"),
    # Used by evaluate/, not part of the Analyst; only the one named judges (COLLATE_LM_JUDGE; "self" is
    # the model under test), never COLLATE_LM by default.
    Stage("judge", "lm_judge", fallback=False, own_endpoint=True),
    # The cascade's strong extractor (programs/stages/cascade.py): asked what the extractor was, so
    # limited as it is; no cascade unless named.
    Stage(
        "escalate",
        "lm_extractor_escalate",
        fallback=False,
        max_tokens="max_tokens_extractor",
        runs_with="extractor",
        own_endpoint=True,
        attach_to="extractor.escalation",
    ),
    # GEPA's reflection model (optimize/optimizers.py): COLLATE_LM's unless named.
    Stage("reflection", "lm_reflection", max_tokens="max_tokens", own_endpoint=True),
)
STAGES: dict[str, Stage] = {row.name: row for row in ROWS}
ANALYST_STAGES = [row.name for row in ROWS if row.attribute]  # planner ... answer
# The stages of the program under test: the Analyst's and those that run beside one of them (escalate).
PROGRAM_STAGES = [row.name for row in ROWS if row.attribute or row.runs_with in ANALYST_STAGES]
