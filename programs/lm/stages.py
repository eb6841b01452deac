"""The stages a run has, named once: settings, LM counts, the command line and MLflow all read this table."""

from __future__ import annotations

# Stage name -> (Settings field holding its model override, Analyst attribute it configures).
STAGES: dict[str, tuple[str, str | None]] = {
    "planner": ("lm_planner", "planner"),
    "extractor": ("lm_extractor", "extractor"),
    "normalizer": ("lm_normalizer", "normalizer"),
    "coder": ("lm_coder", "code_writer"),
    "answer": ("lm_answer", "answerer"),
    "judge": ("lm_judge", None),  # used by evaluate/, not part of the Analyst
}
ANALYST_STAGES = [stage for stage, (_, attribute) in STAGES.items() if attribute]  # planner ... answer
