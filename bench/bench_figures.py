"""Bounded figure work (issue 19): time, size and memory of the static figures (PNG, SVG, PDF) and the interactive
heatmap for pairs of 40, ~146 x 128 and 512 x 512 tokens (the model's maximum), each measured in a fresh child
process (its own peak resident memory, VmHWM, which includes the loaded model).

    python bench/bench_figures.py

Before the bounds a 512 x 512 PNG heatmap was drawn about 42,000 px a side with a value in every cell (18.8 GB,
the server killed); ``--before`` is not offered: that run can take the machine down.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import common  # noqa: F401  (the repository on the path)

CHILD = textwrap.dedent("""
    import json, random, struct, sys, time
    sys.path.insert(0, {root!r})
    from bertscore_viz import Scorer
    from bertscore_viz.figures.plots import heatmap_figure
    from bertscore_viz.figures.static_figures import alignment_image, heatmap_image
    rng = random.Random(0)
    words = open({data!r}, encoding="utf-8").read().split()
    text = lambda n: " ".join(rng.choice(words) for _ in range(n))
    pair = Scorer().explain(text({nc}), text({nr}))
    out = {{"tokens": [len(pair.cand), len(pair.ref)]}}
    for fmt in ("png", "svg", "pdf"):
        t = time.time(); data = heatmap_image(pair, fmt); out[f"heatmap_{{fmt}}_s"] = round(time.time() - t, 2)
        out[f"heatmap_{{fmt}}_MB"] = round(len(data) / 1e6, 2)
        if fmt == "png":
            out["png_px"] = list(struct.unpack(">II", data[16:24]))
    t = time.time(); alignment_image(pair, "png"); out["alignment_png_s"] = round(time.time() - t, 2)
    t = time.time(); js = heatmap_figure(pair).to_json(); out["plotly_s"] = round(time.time() - t, 2)
    out["plotly_MB"] = round(len(js) / 1e6, 2)
    out["peak_MB"] = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM")) // 1024
    print(json.dumps(out))
""")


def main() -> None:
    ref = common.WMT16 / "DAseg-newstest2016.reference.cs-en"
    print(f"{'pair (words)':>14} {'tokens':>10} {'PNG px':>12} {'PNG s':>6} {'SVG MB':>7} {'PDF MB':>7} "
          f"{'align s':>7} {'plotly MB':>9} {'plotly s':>8} {'peak MB':>8}")
    for nc, nr in ((18, 18), (110, 95), (700, 700)):
        code = CHILD.format(root=str(common.ROOT), data=str(ref), nc=nc, nr=nr)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            raise SystemExit(1)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{f'{nc} x {nr}':>14} {'x'.join(map(str, r['tokens'])):>10} {'x'.join(map(str, r['png_px'])):>12} "
              f"{r['heatmap_png_s']:>6} {r['heatmap_svg_MB']:>7} {r['heatmap_pdf_MB']:>7} {r['alignment_png_s']:>7} "
              f"{r['plotly_MB']:>9} {r['plotly_s']:>8} {r['peak_MB']:>8}")


if __name__ == "__main__":
    main()
