"""Issue 33 item 11: what DSPy keeps of a long run's LM calls stays bounded, and every call is still counted.

Before: DSPy kept each call's entry (prompt, messages, the whole response) in its process-wide history, the
LM's and every calling module's, 10,000 entries each; a 10,000-question run makes ~37,000 calls, so the
histories grew with every question (bench/run_memory.py). The cost figures are reported from each entry
as it comes (CountedLM.update_history), so bounding the histories must not lose one.
"""

from __future__ import annotations

import dspy
import dspy.clients.base_lm as base_lm

from fakes.engine import BrainEngine
from programs.lm.counted_lm import HISTORY_KEPT, CountedLM
from programs.lm.spend import attach, detach


class Asker(dspy.Module):
    def __init__(self):
        super().__init__()
        self.ask = dspy.Predict("question -> answer")

    def forward(self, question):
        return self.ask(question=question)


class Heard:
    def __init__(self):
        self.spent = []

    def add(self, spent) -> None:
        self.spent.append(spent)


def test_histories_keep_the_last_calls_and_every_call_is_counted():
    reply = "[[ ## answer ## ]]\nok\n\n[[ ## completed ## ]]"
    lm = CountedLM("fake/history", engine=BrainEngine(lambda messages, model: reply), cache=False)
    asker, heard, calls = Asker(), Heard(), 3 * HISTORY_KEPT
    attach(heard)
    try:
        with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
            for i in range(calls):
                assert asker(question=f"question {i}").answer == "ok"
    finally:
        detach(heard)
    # every call counted, with its tokens
    assert len(heard.spent) == calls and all(s.tokens_in > 0 and not s.cached for s in heard.spent)
    for history in (base_lm.GLOBAL_HISTORY, lm.history, asker.history, asker.ask.history):
        assert len(history) == HISTORY_KEPT  # before: 300 each
    # the kept ones are the latest, in order
    last = [e["messages"][-1]["content"] for e in lm.history[-2:]]
    assert f"question {calls - 2}" in last[0] and f"question {calls - 1}" in last[1]
    assert asker.history[-1] is lm.history[-1] is base_lm.GLOBAL_HISTORY[-1]


class CountingEngine(BrainEngine):
    def __init__(self, reply: str):
        super().__init__(lambda messages, model: reply)
        self.requests = 0

    def complete(self, request):
        self.requests += 1
        return super().complete(request)


def test_the_memory_cache_keeps_the_latest_responses_and_the_disk_still_answers(tmp_path):
    from programs.lm import patches
    from programs.lm.counted_lm import MEMORY_CACHE_KEPT
    from programs.lm.settings import Settings, configure

    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(tmp_path))
    assert dspy.cache.memory_cache.maxsize == 1_000_000  # DSPy's: every response of a run
    configure(Settings(lm="openai/x", api_base="http://127.0.0.1:9/v1"))  # what every command does
    assert dspy.cache.memory_cache.maxsize == MEMORY_CACHE_KEPT
    engine = CountingEngine("hello")
    lm = CountedLM("fake/cached", engine=engine, cache=True)
    asked = [[{"role": "user", "content": f"Say {n}."}] for n in range(5)]
    for messages in asked:
        lm(messages=messages)
    patches.bound_memory_cache(3)  # the 3 latest stay in memory
    assert len(dspy.cache.memory_cache) == 3 and dspy.cache.memory_cache.maxsize == 3
    for messages in asked:  # all 5 still cache hits: the first 2 from disk
        assert lm(messages=messages) == ["hello"]
    assert engine.requests == 5
    dspy.configure(callbacks=[])
