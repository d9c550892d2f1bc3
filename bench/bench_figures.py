"""Figure work for pairs of 25 x 25, 44 x 40, 128 x 128 and 510 x 510 tokens (510 + CLS + SEP: the model's maximum),
each pair in a fresh child process (its own peak resident memory, VmHWM, which includes the loaded model).

    python bench/bench_figures.py [--runs 3]

The pairs are WMT16 de-en machine translations against their references, cut to exactly that many tokens. Measured,
in seconds (best of ``--runs``) and MB:

- page: what Inspect draws, the figure built and serialised as Streamlit sends it (``to_json``): the whole heatmap
  (cells fitted to 1,100 px, never below 16 px) up to ``plots.WHOLE_TOKENS`` a side, above that the overview plus
  the default 128 x 128 region; and the wrapped alignment (1,100 px wide);
- HTML: the whole interactive heatmap of the download (``heatmap_figure(pair).to_json()``);
- static: the PNG heatmap (with its pixels) and the PNG alignment, SVG and PDF heatmap sizes.

Issue 19's bounds (docs/BOUNDARIES.md): a 512 x 512 PNG was 42,000 px a side and 18.8 GB before; ``--before`` is
not offered: that run can take the machine down.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

import common  # noqa: F401  (the repository on the path)

CHILD = textwrap.dedent("""
    import json, struct, sys, time
    sys.path.insert(0, {root!r})
    from bertscore_viz import Scorer
    from bertscore_viz.figures import plots
    from bertscore_viz.figures.static_figures import alignment_image, heatmap_image

    sc = Scorer()
    tok = sc.encoder.tokenizer

    def exact(lines, n):
        out = []
        for w in " ".join(lines).split():
            k = len(tok(" ".join(out + [w]), add_special_tokens=False)["input_ids"])
            if k == n:
                return " ".join(out + [w])
            if k < n:
                out.append(w)
        raise SystemExit(f"not enough words for {{n}} tokens")

    mt = open({mt!r}, encoding="utf-8").read().splitlines()[:160]
    ref = open({ref!r}, encoding="utf-8").read().splitlines()[:160]
    pair = sc.explain(exact(mt, {nc}), exact(ref, {nr}))
    runs = {runs}

    def best(fn):
        times = []
        for _ in range(runs):
            t = time.perf_counter(); value = fn(); times.append(time.perf_counter() - t)
        return round(min(times), 3), value

    def page_heatmap():
        if plots.needs_overview(pair):
            n = 128  # the region Inspect opens on (app/shared/explain_view.py REGION_TOKENS)
            a = plots.overview_figure(pair, region=((0, n), (0, n))).to_json()
            b = plots.heatmap_figure(pair, rows=(0, n), cols=(0, n), max_width=1100).to_json()
            return len(a) + len(b)
        return len(plots.heatmap_figure(pair, max_width=1100).to_json())

    out = {{"tokens": [len(pair.cand) - 2, len(pair.ref) - 2], "overview": plots.needs_overview(pair)}}
    out["page_heatmap_s"], size = best(page_heatmap)
    out["page_heatmap_MB"] = round(size / 1e6, 2)
    out["page_align_s"], size = best(lambda: len(plots.alignment_figure(pair, max_width=1100).to_json()))
    out["page_align_MB"] = round(size / 1e6, 2)
    out["html_s"], size = best(lambda: len(plots.heatmap_figure(pair).to_json()))
    out["html_MB"] = round(size / 1e6, 2)
    out["png_s"], data = best(lambda: heatmap_image(pair, "png"))
    out["png_px"] = list(struct.unpack(">II", data[16:24]))
    out["align_png_s"], data = best(lambda: alignment_image(pair, "png"))
    out["align_png_px"] = list(struct.unpack(">II", data[16:24]))
    for fmt in ("svg", "pdf"):
        out[f"{{fmt}}_MB"] = round(len(heatmap_image(pair, fmt)) / 1e6, 2)
    out["peak_MB"] = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM")) // 1024
    print(json.dumps(out))
""")

PAIRS = ((25, 25), (44, 40), (128, 128), (510, 510))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each figure (the best is reported)")
    args = parser.parse_args()
    mt, ref = common.WMT16 / "DAseg-newstest2016.mt-system.de-en", common.WMT16 / "DAseg-newstest2016.reference.de-en"
    head = ("tokens", "page heatmap", "page align", "HTML heatmap", "PNG heatmap", "PNG align", "SVG", "PDF",
            "peak MB")
    print(" | ".join(head))
    for nc, nr in PAIRS:
        code = CHILD.format(root=str(common.ROOT), mt=str(mt), ref=str(ref), nc=nc, nr=nr, runs=args.runs)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            raise SystemExit(1)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(" | ".join([
            " x ".join(map(str, r["tokens"])),
            f"{r['page_heatmap_s']} s, {r['page_heatmap_MB']} MB" + (" (overview + region)" if r["overview"] else ""),
            f"{r['page_align_s']} s, {r['page_align_MB']} MB", f"{r['html_s']} s, {r['html_MB']} MB",
            f"{r['png_s']} s, {' x '.join(map(str, r['png_px']))} px",
            f"{r['align_png_s']} s, {' x '.join(map(str, r['align_png_px']))} px",
            f"{r['svg_MB']} MB", f"{r['pdf_MB']} MB", str(r["peak_MB"])]))


if __name__ == "__main__":
    main()
