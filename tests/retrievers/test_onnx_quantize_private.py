"""Two build workers quantizing MiniLM at once must not share quantize_dynamic's side file.

onnxruntime's quantize_dynamic writes "<input>-inferred.onnx" beside its input and deletes it when done;
with the shared fp32 graph as input, a second worker read that file half written (DecodeError) or after
the first deleted it (FileNotFoundError) and fell back to torch (seen on a fresh clone's demo build, and
reproduced with two processes on an empty cache).
"""

from __future__ import annotations

import logging
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


# onnxruntime's own call, compiled under its file name so the record carries the quantizer's path
ADVICE = 'import logging\ndef quantize_dynamic(model_input, model_output, **_):\n    logging.warning("Please consider to run pre-processing before quantization.")\n    open(model_output, "wb").write(b"int8")\n'


def test_the_quantizers_advice_on_the_root_logger_is_quiet_unless_verbose(tmp_path, monkeypatch, caplog):
    """A fresh clone's first `collate demo` printed "WARNING root: Please consider to run pre-processing
    before quantization. Refer to example: https://github.com/..." in the middle of its build."""
    import os

    namespace: dict = {}
    exec(
        compile(ADVICE, os.path.join("site-packages", "onnxruntime", "quantization", "quantize.py"), "exec"),
        namespace,
    )
    monkeypatch.setattr(quantization, "quantize_dynamic", namespace["quantize_dynamic"])
    fp32 = tmp_path / "graph-fp32.onnx"
    fp32.write_bytes(b"graph")
    onnx_logger = logging.getLogger("onnxruntime")
    monkeypatch.setattr(onnx_logger, "level", logging.ERROR)  # what the commands set (collate.inputs)
    with caplog.at_level(logging.WARNING):
        minilm_onnx.quantize(fp32, tmp_path / "quiet.onnx")
        assert "pre-processing" not in caplog.text
        onnx_logger.setLevel(logging.INFO)  # -v
        minilm_onnx.quantize(fp32, tmp_path / "verbose.onnx")
        assert "pre-processing" in caplog.text
    logging.warning("an application's own warning still shows")
    assert "still shows" in caplog.text and logging.getLogger().filters == []
