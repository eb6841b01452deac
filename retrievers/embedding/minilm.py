"""all-MiniLM-L6-v2 forward pass in plain torch: the packaged weights, no transformers import.

Why: importing sentence-transformers costs ~4.5 s of CPU in every build worker (it pulls in
transformers and scikit-learn); torch + tokenizers + safetensors cost ~1.2 s. On a 2-core build of
the synthetic corpus that import was a quarter of the wall time. The network is a 6-layer BERT
encoder (hidden 384, 12 heads) followed by mean pooling, exactly what sentence-transformers runs
for this model; tests/retrievers/test_minilm.py checks the vectors against sentence-transformers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class MiniLM:
    def __init__(self, model_dir: str | Path, dtype=None, max_tokens: int = MAX_TOKENS):
        import torch
        from safetensors.torch import load_file

        model_dir = Path(model_dir)
        self.torch = torch
        self.dtype = dtype or torch.bfloat16
        config = json.loads((model_dir / "config.json").read_text())
        self.heads, self.layers = config["num_attention_heads"], config["num_hidden_layers"]
        self.dim = config["hidden_size"]
        self.eps = config["layer_norm_eps"]
        weights = load_file(str(model_dir / "model.safetensors"))
        self.w = {k: v.to(self.dtype) for k, v in weights.items() if not k.endswith("position_ids")}
        self.tokenizer = load_tokenizer(model_dir, max_tokens)

    def _norm(self, x, prefix: str):
        f = self.torch.nn.functional
        return f.layer_norm(x, (self.dim,), self.w[prefix + ".weight"], self.w[prefix + ".bias"], self.eps)

    def _linear(self, x, prefix: str):
        return self.torch.nn.functional.linear(x, self.w[prefix + ".weight"], self.w[prefix + ".bias"])

    def _encode_batch(self, ids, mask):
        torch, f, w = self.torch, self.torch.nn.functional, self.w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = (
            x
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # additive mask: padded keys get -inf-like scores
        bias = torch.zeros(batch, 1, 1, length, dtype=self.dtype)
        bias = bias.masked_fill(~mask.bool()[:, None, None, :], torch.finfo(self.dtype).min)
        size = self.dim // self.heads

        def split(t):  # (batch, length, dim) -> (batch, heads, length, size)
            return t.view(batch, length, self.heads, size).transpose(1, 2)

        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            ctx = f.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1 / math.sqrt(size))
            ctx = ctx.transpose(1, 2).reshape(batch, length, -1)
            x = self._norm(
                x + self._linear(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm"
            )
            hidden = f.gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(x + self._linear(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        # mean over real tokens (pooling_mode_mean_tokens)
        m = mask[:, :, None].to(torch.float32)
        return (x.to(torch.float32) * m).sum(1) / m.sum(1).clamp(min=1e-9)

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """Unit-length float32 rows, in input order."""
        torch = self.torch

        def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
            with torch.inference_mode():
                return self._encode_batch(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()

        return encode_batched(self.tokenizer, texts, batch_size, self.dim, forward)


def load_tokenizer(model_dir: str | Path, max_tokens: int = MAX_TOKENS):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()  # padded per batch in encode_batched, to the batch's longest text
    return tokenizer


def encode_batched(tokenizer, texts: list[str], batch_size: int, dim: int, forward) -> np.ndarray:
    """Tokenize, batch by length (little padding), run forward(ids, mask) -> pooled rows, normalize.

    forward takes int64 arrays (batch, length) and returns float32 (batch, dim) mean-pooled rows; the
    torch pass (MiniLM) and the onnxruntime one (minilm_onnx.py) share everything else.
    """
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        longest = max(len(encodings[i].ids) for i in chunk)
        ids = np.zeros((len(chunk), longest), dtype=np.int64)
        mask = np.zeros((len(chunk), longest), dtype=np.int64)
        for row, i in enumerate(chunk):
            n = len(encodings[i].ids)
            ids[row, :n] = encodings[i].ids
            mask[row, :n] = 1
        out[chunk] = forward(ids, mask)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)
