"""One block of settings for every program, and THE only place in the repo that builds a dspy.LM.

Precedence: dataclass defaults < COLLATE_* environment < explicit overrides (CLI flags).
The whole block is logged as run parameters via `as_params()` (nanoGPT style).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields

import dspy  # noqa: E402

from programs.lm.errors import GLOBAL_TIMEOUT
from programs.lm.prices import check_prices  # noqa: E402
from programs.lm.stages import PROGRAM_STAGES, STAGES, Stage  # noqa: E402
from signatures.env_flags import parse_flag  # noqa: E402
from signatures.errors import CollateError

ENV_PREFIX = "COLLATE_"
# COLLATE_LM_JUDGE=self / --judge self: the model under test judges its own answers, asked for in so
# many words (the run is then tagged self_judged). Unset, there is no judge: no model grades itself.
SELF_JUDGE = "self"


NO_LM_MESSAGE = (
    "No language model configured: set COLLATE_LM (or pass --lm). Examples:\n"
    "  hosted:  COLLATE_LM=openai/gpt-4.1-mini OPENAI_API_KEY=sk-...\n"
    "  local:   COLLATE_LM=openai/qwen2.5-7b-instruct COLLATE_API_BASE=http://localhost:8000/v1 "
    "COLLATE_API_KEY=none (vLLM; Ollama: http://localhost:11434/v1; the key is any word the server accepts)\n"
    "  offline: `collate reader` prints the three settings of the demo reader (rule-based, for the demo "
    "corpus; not a language model)"
)


class NoLMConfigured(CollateError, RuntimeError):
    """Raised when a command needs an LM and none is configured; the message says how to set one."""

    exit_code = 2  # a setting to make: nothing was spent

    def __init__(self, message: str = NO_LM_MESSAGE):
        super().__init__(message)


@dataclass(frozen=True)
class Settings:
    lm: str | None = None  # any model id DSPy accepts, e.g. openai/gpt-4.1-mini
    api_base: str | None = None
    api_key: str | None = None
    lm_planner: str | None = None
    lm_extractor: str | None = None
    lm_normalizer: str | None = None
    lm_coder: str | None = None
    lm_answer: str | None = None
    lm_judge: str | None = None
    # The cascade's strong extractor (issue 25): asked only for the documents whose facts from the
    # extractor's own model fail the check against their pages, or come back "not disclosed" where the
    # other documents of their kind disclose the field (programs/stages/cascade.py). None: no cascade.
    lm_extractor_escalate: str | None = None
    # GEPA's reflection model (optimize/optimizers.py): COLLATE_LM's unless named.
    lm_reflection: str | None = None
    # Their own endpoints (issue 31 item 8): a cheap local extractor beside a hosted strong one, a judge
    # on another server. Unset, a stage uses COLLATE_API_BASE / COLLATE_API_KEY; a base of its own with no
    # key of its own still sends COLLATE_API_KEY. Which stages take one: programs/lm/stages.py.
    api_base_extractor: str | None = None
    api_key_extractor: str | None = None
    api_base_escalate: str | None = None
    api_key_escalate: str | None = None
    api_base_judge: str | None = None
    api_key_judge: str | None = None
    api_base_reflection: str | None = None
    api_key_reflection: str | None = None
    # Dollars per million tokens, prompt (in) and completion (out). Unset, the price comes from DSPy's
    # offline price table for the stage's model, and a model the table lacks is reported "price unknown".
    # price_in/_out price COLLATE_LM's model; price_in_<stage>/_out_<stage> a stage's own model.
    price_in: float | None = None
    price_out: float | None = None
    price_in_planner: float | None = None
    price_out_planner: float | None = None
    price_in_extractor: float | None = None
    price_out_extractor: float | None = None
    price_in_normalizer: float | None = None
    price_out_normalizer: float | None = None
    price_in_coder: float | None = None
    price_out_coder: float | None = None
    price_in_answer: float | None = None
    price_out_answer: float | None = None
    price_in_judge: float | None = None
    price_out_judge: float | None = None
    price_in_escalate: float | None = None
    price_out_escalate: float | None = None
    price_in_reflection: float | None = None
    price_out_reflection: float | None = None
    temperature: float = 0.0
    max_tokens: int = 4000
    num_retries: int = 3  # retries of a request that failed with 429 / 5xx / a timeout (programs/lm/retry.py)
    max_wait: float = (
        60.0  # longest wait before a retry; a server asking for more (Retry-After) fails the call
    )
    timeout: float = 120.0  # seconds per LM request before it counts as failed (and is retried)
    # Per stage (rows of programs/lm/stages.py); None = timeout / num_retries above.
    timeout_planner: float | None = None
    timeout_extractor: float | None = None
    timeout_normalizer: float | None = None
    timeout_coder: float | None = None
    timeout_answer: float | None = None
    timeout_judge: float | None = None
    timeout_escalate: float | None = None
    timeout_reflection: float | None = None
    num_retries_planner: int | None = None
    num_retries_extractor: int | None = None
    num_retries_normalizer: int | None = None
    num_retries_coder: int | None = None
    num_retries_answer: int | None = None
    num_retries_judge: int | None = None
    num_retries_escalate: int | None = None
    num_retries_reflection: int | None = None
    parse_retries: int = 2  # fresh re-asks of a reply a stage cannot parse (programs/lm/reask.py)
    cache: bool = True
    # Output-token limit per stage (None = max_tokens). A plan or a code answer needs more than one
    # document's extraction; on a slow local server a tight limit is what bounds a call's time.
    max_tokens_planner: int | None = None
    max_tokens_extractor: int | None = None
    max_tokens_normalizer: int | None = None
    max_tokens_coder: int | None = None
    max_tokens_answer: int | None = None
    max_tokens_judge: int | None = None
    # The name the output-token limit is sent under. llama.cpp's server, Ollama and older vLLM ignore
    # `max_completion_tokens` (DSPy's native name) and generate until the context is full; auto sends
    # `max_tokens` to any endpoint that is not OpenAI's own (programs.lm.endpoint).
    token_param: str = "auto"  # auto | max_tokens | max_completion_tokens
    # JSON-schema decoding (response_format) for the stages: json_schema uses DSPy's JSONAdapter with
    # the stage's output schema, off the ChatAdapter text format; auto = json_schema for local servers.
    # json_object: the same schema in llama-cpp-python's server's spelling (it refuses json_schema).
    structured: str = "auto"  # auto | json_schema | json_object | off
    lm_progress_every: float = 30.0  # seconds between "still waiting on the LM" lines; 0 = none
    # Documents extracted at once. 16: plan, code and answer are three serial calls, so at 8 a
    # 38-document question needs 8 latency rounds of 41 calls (floor 0.195 of serial time); hosted
    # APIs and vLLM serve 16 concurrent requests comfortably (bench/latency.py measures it).
    concurrency: int = 16
    k: int = 5  # passages per field (and per sub-query) for each document
    fact_store: str | None = None  # SQLite path; default <index>/facts.sqlite
    fact_reuse: bool = True  # False: always ask the LM, keep no facts (e.g. while optimizing the extractor)
    fuzzy_reuse: bool = (
        True  # reuse a stored fact whose description is a rewording (programs.facts.field_match)
    )
    reuse_facts_from_any_model: bool = False  # True: reuse facts another model or extractor prompt produced
    repair_facts: bool = True  # ask a document once more for facts that failed the check against their page
    use_unverified: bool = False  # True: the computation also uses facts that failed the check (flagged)
    code_rounds: int = 3  # fix rounds after the first failing code
    normalize_batch: int = 40  # raw values per normalizer LM call
    # Questions a dataset run plans, extracts and answers together (programs/batch.py): the first answers
    # come after one wave, not after every question is planned, and memory holds one wave's plans and
    # passages. Answers are those of one wave over the whole run (bench/waves.py measures the default).
    wave_size: int = 200
    sample_records: int = 8  # rows shown to the code-writer and the answerer
    # The sandbox that runs generated code (programs.sandbox.Limits holds the rest of its bounds).
    sandbox_timeout: float = 20.0  # wall-clock seconds per run of the analysis code
    sandbox_memory_mb: int = 1024  # address space per process; pandas alone maps ~330 MB
    sandbox_disk_mb: int = 64  # the run's writable scratch space
    sandbox_output_bytes: int = 1_000_000  # stdout read at most this much
    # False (COLLATE_SANDBOX=off): generated code may run with rlimits only where bubblewrap cannot
    # isolate it, warned every run. True refuses instead, naming the fix (programs/sandbox/policy.py).
    sandbox: bool = True

    # name -> (lowest, highest) accepted; checked once, here, so no stage meets a value it cannot use.
    RANGES = {
        "max_tokens": (1, 1_000_000),
        "num_retries": (0, 20),
        "parse_retries": (0, 10),
        "timeout": (1, 86_400),
        "max_wait": (0, 86_400),
        "temperature": (0, 2),
        "concurrency": (1, 1024),
        "k": (1, 200),
        "code_rounds": (0, 10),
        "normalize_batch": (1, 1000),
        "wave_size": (1, 1_000_000),
        "sample_records": (0, 1000),
        "sandbox_timeout": (0.1, 3600),
        "sandbox_memory_mb": (512, 1 << 20),
        "sandbox_disk_mb": (1, 1 << 20),
        "sandbox_output_bytes": (1, 1 << 30),
        "lm_progress_every": (0, 86_400),
        **{row.tokens_field: (1, 1_000_000) for row in STAGES.values()},
        **{row.timeout_field: (1, 86_400) for row in STAGES.values()},
        **{row.retries_field: (0, 20) for row in STAGES.values()},
        "price_in": (0, 10_000),
        "price_out": (0, 10_000),
        **{field: (0, 10_000) for row in STAGES.values() for field in row.price_fields},
    }
    # name -> accepted words.
    CHOICES = {
        "token_param": ("auto", "max_tokens", "max_completion_tokens"),
        "structured": ("auto", "json_schema", "json_object", "off"),
    }

    def __post_init__(self):
        for name, (low, high) in self.RANGES.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise ValueError(
                    f"{name}={value} is out of range: use {low} to {high} "
                    f"({ENV_PREFIX}{name.upper()} or --{name.replace('_', '-')})"
                )
        for name, words in self.CHOICES.items():
            if getattr(self, name) not in words:
                raise ValueError(
                    f"{name}={getattr(self, name)!r} is not one of {', '.join(words)} "
                    f"({ENV_PREFIX}{name.upper()})"
                )
        check_prices(self)  # a price in without a price out: refused now, not at the first priced reply

    @classmethod
    def from_env(cls, overrides: dict | None = None, require_lm: bool = True, environ=None) -> Settings:
        """Defaults < COLLATE_* environment < overrides (None values in overrides are ignored)."""
        environ = os.environ if environ is None else environ
        from programs.sandbox.policy import check_retired_strict

        check_retired_strict(environ)  # COLLATE_SANDBOX_STRICT: no field any more, still no unknown words
        values: dict = {}
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw not in (None, ""):
                values[f.name] = _parse(f, raw)
        unknown = set(overrides or {}) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}; valid: {[f.name for f in fields(cls)]}")
        values.update({k: v for k, v in (overrides or {}).items() if v is not None})
        settings = cls(**values)
        if require_lm and not settings.lm:
            raise NoLMConfigured()
        return settings

    def fact_path(self, store) -> str | None:
        """Where facts live: fact_store if set, else <index>/facts.sqlite when the store has a folder,
        else None (in memory). The one place this is decided."""
        if self.fact_store:
            return self.fact_store
        folder = getattr(store, "index_dir", None)
        return os.path.join(str(folder), "facts.sqlite") if folder else None

    def sandbox_limits(self):
        """The sandbox's Limits from these settings (imported lazily: only code that runs code needs it)."""
        from programs.sandbox import Limits

        return Limits(
            memory_mb=self.sandbox_memory_mb,
            disk_mb=self.sandbox_disk_mb,
            output_bytes=self.sandbox_output_bytes,
            allow_unisolated=not self.sandbox,
        )

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)

    def model_for(self, stage: str | None) -> str | None:
        """The model a stage uses: its own, else COLLATE_LM's where its row falls back to it (None: no model)."""
        if stage is None:
            return self.lm
        if stage == "judge":
            return self.judge_model()
        row = _row(stage)
        return getattr(self, row.model) or (self.lm if row.fallback else None)

    def endpoint_for(self, stage: str | None) -> tuple[str | None, str | None]:
        """(API base, API key) of a stage: its own where its row takes one and it is set, else the shared."""
        fields = _row(stage).endpoint_fields if stage is not None else None
        if fields is None:
            return self.api_base, self.api_key
        base, key = (getattr(self, name) for name in fields)
        return base or self.api_base, key or self.api_key

    def own_endpoints(self) -> dict[str, str]:
        """stage -> the API base it sets for itself (for run.json; never a key)."""
        return {
            row.name: getattr(self, row.endpoint_fields[0])
            for row in STAGES.values()
            if row.endpoint_fields and getattr(self, row.endpoint_fields[0])
        }

    def judge_model(self) -> str | None:
        """The judge's model: only the one named (COLLATE_LM_JUDGE, --judge), never COLLATE_LM by default.
        Why: a fake model judging its own answers passed "fake answer 658" (issue 21). "self" names
        the model under test."""
        if self.lm_judge == SELF_JUDGE:
            return self.lm
        return self.lm_judge or None

    def models_under_test(self) -> list[str]:
        """The models the program's stages use (COLLATE_LM, the per-stage overrides and the cascade's strong
        extractor)."""
        return sorted({m for stage in PROGRAM_STAGES if (m := self.model_for(stage))})

    def self_judged(self) -> bool:
        """The judge is a model under test: its verdicts grade its own answers."""
        judge = self.judge_model()
        return bool(judge) and judge in self.models_under_test()

    def max_tokens_for(self, stage: str | None) -> int:
        """The output-token limit of a stage: its own max_tokens_<stage>, else max_tokens."""
        if stage is None:
            return self.max_tokens
        return getattr(self, _row(stage).tokens_field) or self.max_tokens

    def timeout_for(self, stage: str | None) -> float:
        """Seconds per request of a stage: its own timeout_<stage>, else timeout."""
        own = getattr(self, _row(stage).timeout_field) if stage is not None else None
        return self.timeout if own is None else own

    def timeout_setting(self, stage: str | None) -> str:
        """The setting that sets a stage's timeout, for messages: COLLATE_TIMEOUT_<STAGE> when set, else
        COLLATE_TIMEOUT / --timeout."""
        if stage is not None and getattr(self, _row(stage).timeout_field) is not None:
            return ENV_PREFIX + _row(stage).timeout_field.upper()
        return GLOBAL_TIMEOUT

    def retries_for(self, stage: str | None) -> int:
        """Retries of a stage's failed request: its own num_retries_<stage>, else num_retries (0 is its own)."""
        own = getattr(self, _row(stage).retries_field) if stage is not None else None
        return self.num_retries if own is None else own

    def as_params(self) -> dict:
        """Every setting, flat, for logging; the API key is masked."""
        params = dataclasses.asdict(self)
        for name in params:
            if (name == "api_key" or name.startswith("api_key_")) and params[name]:
                params[name] = "***"
        return params


def _row(stage: str) -> Stage:
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; valid: {sorted(STAGES)}")
    return STAGES[stage]


def _parse(f: dataclasses.Field, raw: str):
    kind = str(f.type)
    if kind.startswith("bool"):  # only the yes/no words: "enabled" is an error, not a silent False
        default = None if f.default is dataclasses.MISSING else bool(f.default)
        return parse_flag(ENV_PREFIX + f.name.upper(), raw, default=default)
    try:
        if kind.startswith("int"):  # also "int | None"
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError as e:
        raise ValueError(
            f"{ENV_PREFIX}{f.name.upper()}={raw!r} is not a valid {kind}: fix or unset it"
        ) from e
    return raw


def build_lm(settings: Settings, stage: str | None = None) -> dspy.LM:
    """Build the dspy.LM for a stage (None = the default LM; "escalate" = the cascade's strong extractor).
    Raises NoLMConfigured when none is set.

    The stage's output-token limit goes out under the name the endpoint honours
    (programs.lm.endpoint: `max_tokens` for local servers, `max_completion_tokens` for OpenAI)."""
    from programs.lm.endpoint import engine_for

    model = settings.model_for(stage)
    if not model:
        raise NoLMConfigured()
    kwargs = {}
    api_base, api_key = settings.endpoint_for(stage)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    from programs.lm.counted_lm import CountedLM
    from programs.lm.prices import price_for
    from programs.lm.retry import cap_waits

    cap_waits(settings.max_wait)  # DSPy's retries honour any Retry-After: a day-long one must not hang a run
    return CountedLM(  # a dspy.LM that reports each call's tokens and dollars (counted_lm.py)
        model,
        price=price_for(settings, stage, model),
        temperature=settings.temperature,
        max_tokens=settings.max_tokens_for(stage),
        num_retries=settings.retries_for(stage),
        timeout=settings.timeout_for(stage),
        timeout_setting=settings.timeout_setting(stage),
        cache=settings.cache,
        engine=engine_for(settings, model),
        **kwargs,
    )


def has_own_lm(settings: Settings, stage: str) -> bool:
    """A stage gets its own LM when it names its own model, output-token limit, price, endpoint, timeout or
    retries."""
    row = _row(stage)
    return bool(
        getattr(settings, row.model)
        or getattr(settings, row.tokens_field)
        or getattr(settings, row.timeout_field) is not None
        or getattr(settings, row.retries_field) is not None
        or getattr(settings, row.price_fields[0])
        or (row.endpoint_fields and any(getattr(settings, name) for name in row.endpoint_fields))
    )


def configure(settings: Settings, program=None) -> dspy.LM:
    """Set the default LM, the adapter (structured output or not) and the LM progress watch, and attach
    per-stage LMs to the program's stage modules. Called by CLIs only."""
    from programs.lm import patches, reask
    from programs.lm.counted_lm import MEMORY_CACHE_KEPT
    from programs.lm.endpoint import apply_structured
    from programs.lm.progress import LMWatch, install, mark_stages, stage_labels

    default = build_lm(settings, None)
    dspy.configure(lm=default)
    patches.bound_memory_cache(MEMORY_CACHE_KEPT)
    reask.unwrap()
    apply_structured(settings)
    reask.wrap(settings.parse_retries)
    watch = install(
        LMWatch(every=settings.lm_progress_every, timeout=settings.timeout, labels=stage_labels(program))
    )
    if program is not None:
        mark_stages(program)
        for row in STAGES.values():
            module = getattr(program, row.attribute, None) if row.attribute else None
            if module is not None and has_own_lm(settings, row.name):
                module.set_lm(build_lm(settings, row.name))
        # a stage that runs beside another (the cascade's strong extractor, programs/stages/cascade.py),
        # counted apart under its own name
        for row in STAGES.values():
            if row.attach_to is None or row.runs_with is None:
                continue
            hook = program
            for name in row.attach_to.split("."):
                hook = getattr(hook, name, None)
            if hook is None:
                continue
            same = settings.model_for(row.name) == settings.model_for(row.runs_with)
            if same and settings.endpoint_for(row.name) == settings.endpoint_for(row.runs_with):
                raise ValueError(
                    f"COLLATE_{row.model.upper()}={getattr(settings, row.model)} is the {row.runs_with}'s "
                    "own model: name a stronger one, or unset it for no cascade"
                )
            hook.attach(build_lm(settings, row.name), watch)
    return default
