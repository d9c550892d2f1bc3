"""``bertscore-viz mtme --data DIR --lp LP --ref NAME``: score a language pair laid out as WMT's mt-metrics-eval
data and write the scores back as its ``metric-scores/LP/NAME-REF.LEVEL.score`` files (docs/WMT_LAYOUT.md)."""

from __future__ import annotations

from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.files import mtme

__all__ = ["run"]


def run(args) -> int:
    source = mtme.open_mtme(args.data)
    ev = source.read(args.lp, args.test_set, read_metric_scores=False)
    out = args.output or source.folder(args.test_set)
    if out is None:
        raise InputError(f"{args.data} is a zip: give -o FOLDER to write metric-scores/{args.lp}/ into.")
    scorer = Scorer(model=args.model, layer=args.layer, idf=args.idf, rescale_with_baseline=args.rescale_with_baseline,
                    lang=args.lang, baseline_path=args.baseline_path, batch_size=args.batch_size,
                    device=args.device, precision=args.precision, long_texts=args.long_texts)
    results = mtme.score_evalset(scorer, ev, args.ref)
    scores = {name: getattr(res, args.which) for name, res in results.items()}
    for path in mtme.write_metric_scores(out, ev, scores, args.ref, args.metric, args.levels, args.overwrite):
        print(path)
    return 0
