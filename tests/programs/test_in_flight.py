"""Issue 31 item 1: identical requests made at once go out once when the cache is on.

Before: a question asked twice under two ids (or two stages asking the same thing) sent the same
request twice when both were in flight at once, and once when one had finished first (a cache hit):
what reached the server depended on the threads' timing, one prompt of 56 between two runs.
"""

from __future__ import annotations

import threading

import dspy

from fakes.brain import Brain
from fakes.server import FakeLMServer
from programs.lm.counted_lm import CountedLM

MESSAGES = [{"role": "user", "content": "Say hello."}]


def _together(lm: CountedLM, messages_of: list[list[dict]]) -> list:
    start, replies = threading.Barrier(len(messages_of)), [None] * len(messages_of)

    def ask(i: int) -> None:
        start.wait()
        replies[i] = lm(messages=messages_of[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(messages_of))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return replies


def test_the_same_request_four_times_at_once_reaches_the_server_once():
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    with FakeLMServer(lambda messages, model: "hello", latency=0.3) as server:
        lm = CountedLM(f"openai/{server.model_name}", api_base=server.url, api_key="x", cache=True)
        replies = _together(lm, [MESSAGES] * 4)
        assert server.calls == 1 and replies == [["hello"]] * 4
        # other requests are not held back by one another
        server.reset_counts()
        others = [[{"role": "user", "content": f"Say {n}."}] for n in range(3)]
        _together(lm, others)
        assert server.calls == 3 and server.max_concurrency() == 3


def test_without_the_cache_every_request_goes_out():
    with FakeLMServer(Brain(), latency=0.1) as server:
        lm = CountedLM(f"openai/{server.model_name}", api_base=server.url, api_key="x", cache=False)
        _together(lm, [MESSAGES] * 3)
        assert server.calls == 3
