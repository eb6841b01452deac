"""RapidOCR's PP-OCRv4 models with their learnable affine blocks folded into the convolutions: the same
function in fewer operations, so onnxruntime keeps the convolutions in its blocked (NCHWc) layout.

The detection and recognition networks (PP-LCNetV3) follow every convolution with `* s + t` (two scalars
learned per block), a hardswish written as four element-wise operations (`x * clip(x + 3, 0, 6) / 6`), and
another `* s + t`. onnxruntime fuses none of them: each is one more pass over the feature map, and each takes
the convolutions' blocked layout back to plain and forth again (ReorderInput/ReorderOutput). Together they
were 43% of the recogniser's kernel time, the convolutions 39% (onnxruntime's profiler, bench/README.md).
Rewritten here, exactly in real numbers (float rounding aside: outputs differ by < 1e-5):

    conv(x; W, b) * s + t                   ->  conv(x; W*s, b*s + t)
    x * clip(x + 3, 0, 6) / 6               ->  x * HardSigmoid(x; alpha 1/6, beta 0.5)   (fused by onnxruntime)
    conv(y * s + t) with no padding         ->  conv(y; W*s, b + t*sum(W))
    conv(y * s + t) with zero padding       ->  conv(y + t/s; W*s, b)     (padding zeros must stay zeros)

0.63x the recogniser's CPU a box and 0.69x a page, the same boxes and text on every page measured.
"""

from __future__ import annotations

import logging
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class _Graph:
    """A model's nodes, with its constants (Constant nodes and initializers) as numpy arrays."""

    def __init__(self, model):
        from onnx import numpy_helper

        graph = model.graph
        self.consts: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
        self.nodes = []
        for node in graph.node:
            if node.op_type == "Constant" and [a.name for a in node.attribute] == ["value"]:
                self.consts[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
            else:
                self.nodes.append(node)
        self.outputs = {o.name for o in graph.output}
        self.folds: Counter = Counter()

    def only_consumer(self, name: str, op_type: str):
        """The one node that reads `name`, if it is an `op_type` and `name` is not a graph output."""
        readers = self.consumers(name)
        if len(readers) == 1 and readers[0].op_type == op_type and name not in self.outputs:
            return readers[0]
        return None

    def consumers(self, name: str) -> list:
        return [n for n in self.nodes if name in n.input]

    def scalar(self, name: str) -> float | None:
        value = self.consts.get(name)
        return None if value is None or value.size != 1 else float(value.reshape(()))

    def add_const(self, name: str, value: np.ndarray | np.floating | float) -> str:
        self.consts[name] = np.asarray(value, dtype=np.float32)
        return name

    def conv_weights(self, conv) -> tuple[np.ndarray, np.ndarray]:
        weights = self.consts[conv.input[1]]
        bias = self.consts[conv.input[2]] if len(conv.input) > 2 else np.zeros(weights.shape[0], np.float32)
        return weights, bias

    def set_conv_weights(self, conv, weights: np.ndarray, bias: np.ndarray, tag: str) -> None:
        name = f"{conv.output[0]}.{tag}"
        conv.input[:] = [
            conv.input[0],
            self.add_const(f"{name}.w", weights),
            self.add_const(f"{name}.b", bias),
        ]

    def write(self, model):
        from onnx import numpy_helper

        used = {name for node in self.nodes for name in node.input}
        del model.graph.node[:]
        model.graph.node.extend(self.nodes)
        del model.graph.initializer[:]
        model.graph.initializer.extend(
            numpy_helper.from_array(v, k) for k, v in self.consts.items() if k in used
        )
        return model


def _other(node, name: str) -> str:
    return node.input[1] if node.input[0] == name else node.input[0]


def _scaled_shift(g: _Graph, mul) -> tuple[str, float, float, Any] | None:
    """(y, s, t, add) when `mul` computes y * s, read only by an Add of t (s and t scalars, s not 0)."""
    y = next((name for name in mul.input if name not in g.consts), None)
    s = g.scalar(_other(mul, y)) if y else None
    if y is None or not s:
        return None
    add = g.only_consumer(mul.output[0], "Add")
    t = g.scalar(_other(add, mul.output[0])) if add is not None else None
    return None if t is None else (y, s, t, add)


def _fold_affine_after_convs(g: _Graph) -> None:
    for conv in [n for n in g.nodes if n.op_type == "Conv" and n.input[1] in g.consts]:
        mul = g.only_consumer(conv.output[0], "Mul")
        found = _scaled_shift(g, mul) if mul is not None else None
        if found is None:
            continue
        _, s, t, add = found
        weights, bias = g.conv_weights(conv)
        g.set_conv_weights(conv, weights * np.float32(s), bias * np.float32(s) + np.float32(t), "affine")
        conv.output[0] = add.output[0]
        g.nodes.remove(mul), g.nodes.remove(add)
        g.folds["affine after a convolution"] += 1


def _hardswish_as_hardsigmoid(g: _Graph) -> None:
    from onnx import helper

    for add in [n for n in g.nodes if n.op_type == "Add"]:
        x = next((name for name in add.input if g.scalar(_other(add, name)) == 3.0), None)
        clip = g.only_consumer(add.output[0], "Clip") if x and x not in g.consts else None
        if clip is None or (g.scalar(clip.input[1]), g.scalar(clip.input[2])) != (0.0, 6.0):
            continue
        mul = g.only_consumer(clip.output[0], "Mul")
        if mul is None or _other(mul, clip.output[0]) != x:
            continue
        div = g.only_consumer(mul.output[0], "Div")
        if div is None or g.scalar(div.input[1]) != 6.0:
            continue
        at = g.nodes.index(add)
        for node in (add, clip, mul, div):
            g.nodes.remove(node)
        gate = f"{div.output[0]}.gate"
        g.nodes[at:at] = [
            helper.make_node("HardSigmoid", [x], [gate], alpha=1 / 6, beta=0.5, name=gate),
            helper.make_node("Mul", [x, gate], [div.output[0]], name=f"{div.output[0]}.hardswish"),
        ]
        g.folds["hardswish"] += 1


def _unpadded(conv) -> bool:
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
    return (
        all(k == 1 for k in attrs.get("kernel_shape", []))
        and not any(attrs.get("pads", []))
        and (attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET", b"VALID", "VALID"))
    )


def _fold_affine_before_convs(g: _Graph) -> None:
    for mul in [n for n in g.nodes if n.op_type == "Mul"]:
        found = _scaled_shift(g, mul)
        if found is None:
            continue
        y, s, t, add = found
        convs = g.consumers(add.output[0])
        if add.output[0] in g.outputs or not convs:
            continue
        if any(
            c.op_type != "Conv" or c.input[0] != add.output[0] or c.input[1] not in g.consts for c in convs
        ):
            continue
        shift_in_bias = all(_unpadded(c) for c in convs)
        for conv in convs:
            weights, bias = g.conv_weights(conv)
            shifted = bias + np.float32(t) * weights.sum(axis=(1, 2, 3)) if shift_in_bias else bias
            g.set_conv_weights(conv, weights * np.float32(s), shifted, "prescaled")
        g.nodes.remove(mul)
        if shift_in_bias:
            for conv in convs:
                conv.input[0] = y
            g.nodes.remove(add)
            g.folds["affine before a 1x1 convolution"] += 1
        else:  # zero padding of (y*s + t) is not the padding of y: the shift stays, divided by the scale
            add.input[:] = [y, g.add_const(f"{add.output[0]}.shift", np.float32(t) / np.float32(s))]
            g.folds["scale before a padded convolution"] += 1


def folded(model):
    """`model` (an onnx ModelProto, changed in place) with the rewrites above; returns it and what was folded."""
    g = _Graph(model)
    _fold_affine_after_convs(g)
    _hardswish_as_hardsigmoid(g)
    _fold_affine_before_convs(g)
    return g.write(model), dict(g.folds)


def wheel_models() -> dict[str, Path]:
    """The detection and recognition model files inside the installed RapidOCR wheel (its config.yaml's)."""
    import rapidocr_onnxruntime
    from rapidocr_onnxruntime.utils import read_yaml

    root = Path(rapidocr_onnxruntime.__file__).parent
    config = read_yaml(str(root / "config.yaml"))
    return {part: root / config[section]["model_path"] for part, section in (("det", "Det"), ("rec", "Rec"))}


def write_folded(folder: str | Path) -> dict[str, str]:
    """The wheel's detection and recognition models folded, written into `folder`: RapidOCR's keyword
    arguments that make it load them (det_model_path, rec_model_path). ~0.3 s."""
    import onnx

    paths = {}
    for part, source in wheel_models().items():
        model, folds = folded(onnx.load(str(source)))
        if not folds:  # another model than the pinned wheel's: loaded as it is, and said
            log.warning("OCR: nothing to fold in %s; it is read unchanged", source.name)
        target = Path(folder) / source.name
        onnx.save(model, str(target))
        paths[f"{part}_model_path"] = str(target)
    return paths


def load_folded(make):
    """`make(**model_paths)` (RapidOCR's constructor with its other settings bound) with the folded models:
    written to a temporary folder that onnxruntime reads while the engine loads, removed after."""
    with tempfile.TemporaryDirectory(prefix="collate-ocr-") as folder:
        return make(**write_folded(folder))
