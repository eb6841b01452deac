"""Two build workers quantizing MiniLM at once must not share quantize_dynamic's side file.

onnxruntime's quantize_dynamic writes "<input>-inferred.onnx" beside its input and deletes it when done;
with the shared fp32 graph as input, a second worker read that file half written (DecodeError) or after
the first deleted it (FileNotFoundError) and fell back to torch (seen on a fresh clone's demo build, and
reproduced with two processes on an empty cache).
"""

from __future__ import annotations

import threading
from pathlib import Path

import onnxruntime.quantization as quantization

from retrievers.embedding import minilm_onnx


def test_each_quantization_reads_a_private_copy_of_the_graph(tmp_path, monkeypatch):
    fp32 = tmp_path / "graph-fp32.onnx"
    fp32.write_bytes(b"graph")
    inputs: list[Path] = []
    both_inside = threading.Barrier(2, timeout=10)

    def fake_quantize(model_input, model_output, **_):
        source = Path(model_input)
        inferred = source.with_name(source.stem + "-inferred.onnx")
        inferred.write_bytes(source.read_bytes())  # what the real one writes, then reads, then deletes
        inputs.append(source)
        both_inside.wait()  # the two workers overlap here
        assert inferred.read_bytes() == b"graph"
        inferred.unlink()
        Path(model_output).write_bytes(b"int8 " + source.read_bytes())

    monkeypatch.setattr(quantization, "quantize_dynamic", fake_quantize)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            minilm_onnx.quantize(fp32, tmp_path / f"graph-int8-{n}.onnx")
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(set(inputs)) == 2 and fp32 not in inputs, inputs
    assert all((tmp_path / f"graph-int8-{n}.onnx").read_bytes() == b"int8 graph" for n in range(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "graph-fp32.onnx",
        "graph-int8-0.onnx",
        "graph-int8-1.onnx",
    ]
