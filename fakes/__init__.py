"""Stand-ins the demo, the tests and the benchmarks share (no test framework needed).

- the demo reader: `brain.Brain`, a rule-based reader of the project's prompts (not a language model:
  it reads only what each prompt shows, never truth.jsonl or the corpus files), served by
  `server.FakeLMServer` as a real OpenAI-compatible endpoint on 127.0.0.1 (`collate reader`), or
  in-process by `engine.brain_lm()`;
- `corpus`: a small synthetic corpus and its index, built with the project's own commands;
- `filings`: one-page PDFs with a given cover text;
- `llama_server`: a real llama.cpp server with a small model, when the `local` extra is installed.

It may import signatures/ and retrievers/, nothing above (tests/foundation/test_layout.py).
"""
