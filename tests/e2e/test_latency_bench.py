"""bench/latency.py as a (slow) test: 38 documents behind a slow fake LM; every target must hold."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "latency.py"


@pytest.mark.slow
def test_latency_bench_meets_its_targets(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_latency", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # 1.5 s per call is what a hosted model takes for a ~1,200-token extraction prompt; at 0.2 s the
    # fixed ~2.5 s of index loading and sandbox start-up dominate (see the report in the bench's output).
    code = bench.main(["--latency", "1.5", "--concurrency", "16", "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "FAIL" not in out, out
    assert code == 0, out
