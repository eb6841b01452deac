"""The LLM judge for what the deterministic matcher leaves undecided: typed, temperature 0, cached.

The cache is a small SQLite file keyed by (question, gold, answer, judge model): re-scoring a run,
or scoring two runs that share answers, never pays for the same verdict twice.

A judge exists only when one is named (programs/lm/settings.py judge_model); `self_judged` says
it is a model under test, which every report then states beside the figures.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path

import dspy

from signatures.judge import JudgeAnswer

logger = logging.getLogger(__name__)


class JudgeCache:
    """Verdicts on disk. Thread-safe: score runs questions concurrently."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, correct INTEGER, reason TEXT)"
        )
        self._db.commit()

    @staticmethod
    def key(question: str, gold_answer: str, model_answer: str, model: str) -> str:
        blob = json.dumps([question, gold_answer, model_answer, model], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> tuple[bool, str] | None:
        with self._lock:
            row = self._db.execute("SELECT correct, reason FROM verdicts WHERE key = ?", (key,)).fetchone()
        return (bool(row[0]), row[1]) if row else None

    def put(self, key: str, correct: bool, reason: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?)", (key, int(correct), reason))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class AnswerJudge(dspy.Module):
    """Judge one answer against the gold; the LM is the configured one or `set_lm(...)`'s."""

    def __init__(self, cache: JudgeCache | None = None, model: str = "", self_judged: bool = False):
        super().__init__()
        # temperature 0: a verdict must be reproducible
        self.judge = dspy.Predict(JudgeAnswer, temperature=0.0)
        self.cache = cache
        self.model = model
        self.self_judged = self_judged  # the model under test grades its own answers

    def _cached(
        self, question: str, gold_answer: str, model_answer: str
    ) -> tuple[str | None, dspy.Prediction | None]:
        if self.cache is None:
            return None, None
        key = JudgeCache.key(question, gold_answer, model_answer, self.model)
        hit = self.cache.get(key)
        return key, (dspy.Prediction(correct=hit[0], reason=hit[1], cached=True) if hit else None)

    def _keep(self, key: str | None, verdict) -> dspy.Prediction:
        correct, reason = bool(verdict.correct), str(verdict.reason or "")
        if key and self.cache is not None:
            self.cache.put(key, correct, reason)
        return dspy.Prediction(correct=correct, reason=reason, cached=False)

    def forward(self, question: str, gold_answer: str, model_answer: str) -> dspy.Prediction:
        key, hit = self._cached(question, gold_answer, model_answer)
        if hit is not None:
            return hit
        return self._keep(
            key, self.judge(question=question, gold_answer=gold_answer, model_answer=model_answer)
        )

    def __deepcopy__(self, memo):
        # Optimizers deep-copy modules; an open SQLite connection cannot be copied and need not be.
        clone = AnswerJudge.__new__(AnswerJudge)
        memo[id(self)] = clone
        for name, value in self.__dict__.items():
            clone.__dict__[name] = value if name == "cache" else copy.deepcopy(value, memo)
        return clone
