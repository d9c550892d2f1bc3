"""``bertscore-viz compare``: several systems on one test set, ranked with 95% intervals, paired tests against a
baseline as sacrebleu words them, WMT-style clusters, optionally Holm's correction and approximate randomization;
as text, ``--json``, ``--latex``, and a self-contained HTML report (``--html FILE``).

    bertscore-viz compare -r refs.txt [-r refs2.txt] -s sys1.txt sys2.txt sys3.txt [--source src.txt]
    bertscore-viz compare --input outputs.csv          # any file the Compare page reads (also scores.parquet)
    bertscore-viz compare --mt-metrics-eval wmt22 --lp en-de [--ref refA]

The numbers are the Compare page's for the same data and settings: one model pass for every system
(:func:`bertscore_viz.evaluation.compare.score_dataset`), the scores at the layer / idf / rescaling asked
(:func:`~bertscore_viz.evaluation.compare.results_for`), and the page's bootstrap (1,000 resamples, seed 12345;
under Holm as many as :func:`~bertscore_viz.evaluation.significance.resamples_for` gives), analysed with the
top-ranked system as baseline and then rebased (``Significance.rebase``) to the baseline of this command: the first
system given, or ``--baseline``. Approximate randomization is sacrebleu's
(:mod:`bertscore_viz.stats.randomization`).
"""

from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bertscore_viz.cli.cache import store_line
from bertscore_viz.cli.compare_inputs import context_note, own_metric_set, with_score_files
from bertscore_viz.cli.runs import earlier_runs, run_names, save_new_run
from bertscore_viz.cli.tracking import log_results
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import BertScoreWarning, Scorer
from bertscore_viz.engine.store import default_store
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.evaluation import compare, precomputed
from bertscore_viz.evaluation.latex import latex_table
from bertscore_viz.evaluation.own_metrics import OwnMetric, with_own_metrics
from bertscore_viz.evaluation.precomputed import LoadedResults
from bertscore_viz.evaluation.runs import with_runs
from bertscore_viz.evaluation.significance import Significance, resamples_for
from bertscore_viz.figures import tables
from bertscore_viz.figures.markdown import markdown_summary
from bertscore_viz.figures.report import build_report, scorer_explainer
from bertscore_viz.files import mtme, upload
from bertscore_viz.files.columns import mapping_from_args
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.export import json_ready
from bertscore_viz.files.fileio import atomic_write_text, check_writable, terminal_json, terminal_safe
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results.table import read_results
from bertscore_viz.files.score_columns import scores_from_mtme
from bertscore_viz.files.textfile import read_bytes, read_text_lines
from bertscore_viz.progress import progress_bar
from bertscore_viz.stats.gate import FAIL_IF_NOT_BETTER, FAIL_IF_WORSE, GateResult, gate
from bertscore_viz.stats.randomization import Randomization, paired_randomization
from bertscore_viz.stats.resampling import DEFAULT_SEED

__all__ = ["run", "Loaded", "load_input", "analyse", "format_text", "gate_rule", "json_object", "plain"]

#: Problems and warnings printed on stderr before "... and N more".
_SHOWN = 10


@dataclass(frozen=True)
class Loaded:
    """The systems to compare, as the Compare page's dataset.

    Attributes:
        dataset: outputs, references, sources, segment ids and rows.
        description: what was read, for the first line of the output.
        labels: how warnings name each segment (``line 3``, ``row 4``).
        precomputed: a results file's scores (``score --ray``): no model pass; its table (for the drill-downs).
        notes: what the reader should know about the input.
    """

    dataset: Dataset
    description: str
    labels: list[str]
    precomputed: LoadedResults | None = None
    notes: tuple[str, ...] = ()


def plain(text: object) -> str:
    """Text for a terminal (:func:`~bertscore_viz.files.fileio.terminal_safe`): control and format characters
    (escape sequences, newlines, tabs, bidi overrides) and a file name's undecodable bytes shown as ``\\x1b``,
    ``\\u202e``, ``\\udcff``."""
    return terminal_safe(text)


def json_text(obj) -> str:
    """The command's JSON as :func:`~bertscore_viz.files.export.to_json` writes it (NaN and infinities as null),
    as text for a terminal (:func:`~bertscore_viz.files.fileio.terminal_json`: every character a terminal would act
    on as ``\\uXXXX``, the same JSON value); a system named by a file name with undecodable bytes (a lone
    surrogate, which ``to_json``'s UTF-8 cannot encode) is written as its escape too."""
    return terminal_json(json.dumps(json_ready(obj), ensure_ascii=False, indent=1))


def _system_names(paths: list[str]) -> tuple[list[str], str | None]:
    """System names of text files: each file's name without its extension (``ONLINE-A.txt`` is ``ONLINE-A``; of
    ``x.tar.gz`` only the last suffix goes). Where two files would get the same name (``a/sys.txt`` and
    ``b/sys.txt``, ``sys.txt`` and ``sys.tsv``), those files are named by their file name, and if that is shared
    too by the path as given. Returns the names and a sentence naming the collisions (None without any).

    Raises:
        InputError: one file given twice (``c3.txt`` and ``./c3.txt``).
    """
    resolved = [Path(p).resolve() for p in paths]  # c3.txt and ./c3.txt are one file
    if len(set(resolved)) < len(resolved):
        raise InputError(f"The same system file is given twice: {', '.join(paths)}. Give each system once.")
    choices = [(Path(p).stem, Path(p).name, p) for p in paths]  # paths as given differ: they resolve differently
    level = [0] * len(paths)
    collided: dict[str, None] = {}  # the names that would name several files, in order
    while True:  # a shared name: the files that have it at the shortest level take their next, longer name
        names = [c[k] for c, k in zip(choices, level)]
        lowest = {n: min(k for m, k in zip(names, level) if m == n) for n in names if names.count(n) > 1}
        collided.update(dict.fromkeys(lowest))
        moving = [i for i, n in enumerate(names) if lowest.get(n) == level[i] < len(choices[i]) - 1]
        if not moving:  # no name shared (paths as given never are)
            break
        for i in moving:
            level[i] += 1
    if not any(level):
        return names, None
    renamed = ", ".join(repr(n) for n, k in zip(names, level) if k)
    return names, (f"Several system files would get the same name ({', '.join(map(repr, collided))}); they are "
                   f"named by their file name or path instead: {renamed}.")


def _from_text_files(args) -> Loaded:
    refs_files = [p for group in args.refs for p in group]
    columns = [read_text_lines(p, "reference file", allow_empty=True) for p in refs_files]
    outputs = [read_text_lines(p, "system file", allow_empty=True) for p in args.systems]
    source = read_text_lines(args.source, "source file", allow_empty=True) if args.source else None
    counts = ([(f"reference {p}", len(c)) for p, c in zip(refs_files, columns)]
              + [(f"system {p}", len(o)) for p, o in zip(args.systems, outputs)]
              + ([(f"source {args.source}", len(source))] if source is not None else []))
    if len({n for _, n in counts}) > 1:
        listed = "; ".join(f"{what}: {n} lines" for what, n in counts)
        raise InputError(f"Every file needs one line per segment, the same number of lines; got {listed}.")
    n = counts[0][1]
    if n == 0:
        raise InputError(f"The files are empty: {', '.join(p for p in refs_files + list(args.systems))}.")
    names, collision = _system_names(list(args.systems))
    if collision:
        _say([f"Warning: {plain(collision)}"])
    docs = None
    if getattr(args, "doc_ids", None):
        docs = [line.strip() for line in read_text_lines(args.doc_ids, "document ids file", allow_empty=True)]
        if len(docs) != n:
            raise InputError(f"--doc-ids {plain(args.doc_ids)} has {len(docs):,} lines; the segments are {n:,} (one "
                             "document id per line, an empty line for a segment without a document).")
    ds = Dataset(dict(zip(names, outputs)), [list(group) for group in zip(*columns)], source,
                 [str(i + 1) for i in range(n)], list(range(1, n + 1)), [], None, doc_ids=docs)
    what = f"{len(names)} system files against {len(refs_files)} reference file(s)"
    return Loaded(ds, what, [f"line {i + 1}" for i in range(n)])


def _problem_lines(problems) -> list[str]:
    lines = [f"{p.severity}: " + (f"row {p.row}: " if p.row else "") + (f"{p.column}: " if p.column else "")
             + p.problem for p in problems]
    return lines[:_SHOWN] + ([f"... and {len(lines) - _SHOWN} more"] if len(lines) > _SHOWN else [])


def _from_table(args) -> Loaded:
    path = Path(args.input)
    data = read_bytes(path, "input file")
    if args.scale is not None and not results_format.is_results_file(path.name, data):
        raise InputError("--scale chooses between a results file's raw and rescaled numbers; for other inputs use "
                         "--rescale_with_baseline (or not).")
    if results_format.is_results_file(path.name, data):
        table = read_results(data)
        want = (args.scale == "rescaled") if args.scale is not None else (True if args.rescale_with_baseline else None)
        loaded = precomputed.results_at(table, want)
        ds = loaded.dataset
        return Loaded(ds, f"{path.name} (precomputed scores)", compare.segment_labels(ds), loaded, loaded.notes)
    table, problems = upload.read_table(data, path.name)
    if table is None:
        raise InputError(f"{path} cannot be read: " + " ".join(p.problem for p in problems))
    mapping = mapping_from_args(args.reference_column, args.candidate_column, args.system_column,
                                args.system_columns, args.source_column, args.segment_id_column,
                                getattr(args, "score_columns", None), getattr(args, "document_column", None))
    if mapping is None:  # detected from the column names (and the cells), as the Compare page detects them
        mapping, detect_problems = upload.detect_mapping([c for c in dict.fromkeys(table.columns) if c], table)
        if mapping is None:
            raise InputError(f"The columns of {path.name} cannot be told apart: "
                             + " ".join(p.problem for p in detect_problems if p.severity == "error")
                             + " Name them with --reference-column and --system-columns (wide layout) or "
                               "--system-column and --candidate-column (long layout).")
    ds = upload.build_dataset(table, mapping, args.empty, problems=problems)
    if not ds.ok:
        raise InputError(f"Nothing in {path.name} can be compared:\n" + "\n".join(_problem_lines(ds.problems)))
    return Loaded(ds, f"{path.name} ({upload.mapping_line(mapping)})", compare.segment_labels(ds))


def _from_mtme(args) -> Loaded:
    source = mtme.open_mtme(args.mt_metrics_eval)
    wanted = getattr(args, "mtme_scores", None)
    ev = source.read(args.lp, args.test_set, read_metric_scores=bool(wanted))
    refs = args.mtme_ref
    if not refs:
        if len(ev.references) != 1:
            raise InputError(f"{args.lp} has {len(ev.references)} references "
                             f"({', '.join(map(repr, ev.references)) or 'none'}); choose one with --ref NAME.")
        refs = list(ev.references)
    ds = ev.dataset(refs)
    if ev.documents is not None:  # documents/LP.docs: the documents of document context
        ds = replace(ds, doc_ids=list(ev.documents))
    if wanted:
        own = scores_from_mtme(ev.metric_scores, ds.system_names, wanted, f"{ev.name} {args.lp}")
        ds = replace(ds, own_scores=own, problems=ds.problems + list(own.problems))
    n = ds.n_segments
    return Loaded(ds, f"{ev.name} {ev.lp} against {', '.join(refs)} (mt-metrics-eval)",
                  [f"line {i + 1}" for i in range(n)], None, tuple(ev.warnings))


def load_input(args) -> Loaded:
    """The dataset of the command's input: text files (``-r``/``-s``), ``--input`` or ``--mt-metrics-eval``.

    Raises:
        InputError: no input or several, unequal line counts, an unreadable file, fewer than two systems or more
            than the Compare page's 100.
    """
    given = [name for name, v in (("-s/-r", args.systems or args.refs), ("--input", args.input),
                                  ("--mt-metrics-eval", args.mt_metrics_eval)) if v]
    if len(given) != 1:
        raise InputError("compare needs ONE input: -r REFS -s SYSTEM1 SYSTEM2 ..., --input FILE, or "
                         f"--mt-metrics-eval DIR --lp LP; got {', '.join(given) if given else 'none'}.")
    if given[0] == "-s/-r":
        if not args.systems or not args.refs:
            raise InputError("Text files need both -r REFERENCES (one file per reference) and -s SYSTEM1 SYSTEM2 ... "
                             "(one file per system), one segment per line.")
        loaded = _from_text_files(args)
    elif args.input:
        loaded = _from_table(args)
    else:
        if not args.lp:
            raise InputError("--mt-metrics-eval needs --lp LP (a language pair, e.g. en-de).")
        loaded = _from_mtme(args)
    if getattr(args, "scores", None):
        loaded = with_score_files(args.scores, loaded)
    names = loaded.dataset.system_names
    if len(names) > upload.MAX_SYSTEMS:  # the Compare page's limit; the report's size bound counts on it
        raise InputError(f"compare takes at most {upload.MAX_SYSTEMS} systems, as the Compare page does; got "
                         f"{len(names)}. Compare them in groups, or the best of each group.")
    if len(names) < 2 and not getattr(args, "with_run", None):  # --with-run adds the earlier systems
        raise InputError(f"compare needs at least two systems; got {len(names)} ({', '.join(map(plain, names))}). "
                         "To score one system, use `bertscore-viz score`.")
    return loaded


def _scorer(args) -> Scorer:
    return ScoringOptions.from_namespace(args, rescale_with_baseline=False).scorer()


def _score(args, loaded: Loaded, quiet: bool):
    """The model pass and the scores at the asked setting: ``(comparison, scorer, notes)``."""
    sc = _scorer(args)
    if args.rescale_with_baseline:
        sc.baseline_for(sc.layer)  # no baseline: the engine's error now, before the model pass
    ds = loaded.dataset
    store = default_store()
    before = store.info() if store is not None else None
    with warnings.catch_warnings(), progress_bar("embedding", "sentences") as bar:
        warnings.simplefilter("ignore", BertScoreWarning)  # listed once below, per segment
        cstats = compare.score_dataset(sc, ds, None if quiet else bar)
        comparison = compare.results_for(sc, cstats, sc.layer, args.idf, args.rescale_with_baseline, loaded.labels)
    notes = list(loaded.notes)
    if not quiet and store is not None:
        notes.append(store_line(before))
    if sc.context:
        notes.append(context_note(ds, sc.context))
    n_long, cut = compare.long_text_counts(cstats.pairs, sc.encoder.max_length)
    if n_long:
        how = (f"truncated as bert-score does ({cut:,} tokens dropped); --long_texts window scores them whole"
               if sc.long_texts == "truncate" else "scored whole in overlapping windows")
        notes.append(f"{n_long:,} text(s) are longer than the model's maximum of {sc.encoder.max_length} tokens: "
                     f"{how}.")
    return comparison, sc, notes


def _explainer(args, loaded: Loaded, comparison, scorer: Scorer | None, notes: list[str]):
    """The drill-downs' ``explain``: the comparison's own scorer, or a results file's model with its idf and
    baseline. A model that cannot be loaded here leaves the drill-downs without figures (said in the notes)."""
    if scorer is not None:
        return scorer_explainer(scorer, loaded.dataset, comparison)
    table = loaded.precomputed.table
    try:
        model = results_format.app_settings(table.info)["model"]
        sc = precomputed.file_scorer(table, comparison.rescaled, model=model)
        _ = sc.encoder  # loaded now: a model missing here is said once, before any drill-down
    except BertScoreVizError as exc:
        notes.append(f"The drill-downs show texts and scores only: the results file's model cannot be used here "
                     f"({exc}).")
        return None

    def explain(candidate: str, references: list[str]):
        return sc.explain(candidate, references[0] if len(references) == 1 else list(references))

    return explain


def analyse(comparison: compare.Comparison, baseline: str, metric: str = "F1", holm: bool = False,
            n_samples: int | None = None, seed: int = DEFAULT_SEED, paired_ar: bool = False, ar_trials: int = 10_000,
            progress=None, own: dict[str, OwnMetric] | None = None) -> tuple[Significance, Randomization | None]:
    """The Compare page's significance (top-ranked baseline, its resamples) rebased to ``baseline``, and optionally
    approximate randomization against it (segment scores NaN counted as 0, as the bootstrap counts them). A metric
    of one's own (``own``) is analysed the same way over the segments every system has a score for.

    Raises:
        InputError: ``baseline`` is not a system of the comparison.
    """
    if baseline not in comparison.results:
        raise InputError(f"Unknown --baseline {plain(baseline)!r}; the systems are "
                         f"{', '.join(repr(plain(s)) for s in comparison.systems)}.")
    correction = "holm" if holm else None
    mine = (own or {}).get(metric)
    n = len(next(iter(comparison.results.values())).f1) if mine is None else mine.n_kept
    if n_samples is None:
        n_samples = resamples_for(len(comparison.results), n, correction)
    quiet_progress = progress if n_samples > 5000 else None
    if mine is not None:  # BERTScore's analysis of the given scores, over the segments every system has
        sig = mine.significance(baseline, correction, n_samples=n_samples, seed=seed, progress=quiet_progress)
        counted = mine.kept_scores()
    else:
        sig = compare.significance(comparison, None, metric, n_samples=n_samples, seed=seed, correction=correction,
                                   progress=quiet_progress).rebase(baseline)
        counted = comparison.counted_scores(metric)
    ar = None
    if paired_ar:
        scores = {s: counted[s] for s in sig.systems}
        ar = paired_randomization(scores, baseline, metric, ar_trials, seed, correction, sig.alpha, progress,
                                  sig.higher_is_better)
    return sig, ar


def _sacrebleu_estimates(sig: Significance) -> dict[str, tuple[float, float, float]]:
    """Per system: score, bootstrap mean and half-width of the 95% interval (sacrebleu's ``μ ± CI``)."""
    out = {}
    for iv in sig.intervals:
        samples = (sig.samples or {}).get(iv.system)
        mu = float(np.mean(samples)) if samples is not None and len(samples) else float("nan")
        out[iv.system] = (iv.mean, mu, 0.5 * (iv.high - iv.low))
    return out


def _p_cell(p: float | None, alpha: float) -> str:
    return "" if p is None else f"(p = {p:.4f})" + ("*" if p < alpha else "")


def _table_lines(comparison, sig: Significance, surface=None) -> list[str]:
    frame = tables.system_table(comparison, sig, surface)
    m = sig.metric
    others = [c for c in (surface.metrics if surface is not None else {})] or ([m] if m not in compare.METRICS
                                                                               else [])
    names = [plain(s) + (" ★" if b else "") for s, b in zip(frame["System"], frame["Best"])]
    w = max([len("System")] + [len(s) for s in names])
    widths = [max(8, len(plain(c))) for c in others]
    extra_head = "".join(f" {plain(c):>{k}}" for c, k in zip(others, widths))
    lines = [f"{'Rank':>4} {'Cluster':>7} {'Wins':>4}  {'System':<{w}}  {'P':>8} {'R':>8} {'F1':>8}{extra_head}  "
             f"{plain(m)} 95% CI"]
    for name, row in zip(names, frame.to_dict(orient="records")):
        extra = "".join(f" {row[c]:>{k}.4f}" for c, k in zip(others, widths))
        lines.append(f"{row['Rank']:>4} {row['Cluster']:>7} {row['Wins']:>4}  {name:<{w}}  {row['P']:>8.4f} "
                     f"{row['R']:>8.4f} {row['F1']:>8.4f}{extra}  [{row[f'{m} CI low']:.4f}, "
                     f"{row[f'{m} CI high']:.4f}]")
    lines.append(f"Best first. {plain(m)} 95% CI: bootstrap percentile interval ({sig.n_samples:,} resamples, seed "
                 f"{sig.seed}).")
    for c in others:
        metric = surface.metrics[c] if surface is not None else None
        if metric is not None:
            lines.append(f"{plain(c)}: {plain(metric.corpus_signature)}")
    return lines


def _paired_lines(sig: Significance, ar: Randomization | None) -> list[str]:
    est = _sacrebleu_estimates(sig)
    order = [sig.baseline] + [r.system for r in sig.versus_baseline]
    labels = [f"Baseline: {plain(sig.baseline)}"] + [plain(s) for s in order[1:]]
    w = max(len("System"), *(len(s) for s in labels))
    boot = {r.system: r.p for r in sig.versus_baseline}
    rand = {} if ar is None else {r.system: r.p for r in ar.results}
    head = f"Paired bootstrap resampling test with {sig.n_samples} resampling trials"
    if ar is not None:
        head += f", and approximate randomization test with {ar.n_trials} trials"
    lines = ["-" * len(head), head, "-" * len(head),
             f"{'System':>{w}}  {sig.metric + ' (μ ± 95% CI)':<26} {'p (bootstrap)':<16}"
             + ("p (AR)" if ar is not None else "")]
    for name, label in zip(order, labels):
        score, mu, half = est[name]
        lines.append((f"{label:>{w}}  {f'{score:.4f} ({mu:.4f} ± {half:.4f})':<26} "
                      f"{_p_cell(boot.get(name), sig.alpha):<16}{_p_cell(rand.get(name), sig.alpha)}").rstrip())
    bl = plain(sig.baseline)
    lines += ["", f" - Each system is pairwise compared to the baseline {bl}.",
              "   Actual system score / bootstrap estimated true mean / 95% CI are provided for each system.", "",
              " - Null hypothesis: the system and the baseline translations are essentially",
              "   generated by the same underlying process. For a given system and the baseline,",
              "   the p-value is roughly the probability of the absolute score difference (delta)",
              "   or higher occurring due to chance, under the assumption that the null hypothesis is correct.", "",
              f" - Assuming a significance threshold of {sig.alpha:g}, the null hypothesis can be rejected",
              f"   for p-values < {sig.alpha:g} (marked with \"*\"). This means that the delta is unlikely to be "
              "attributed", "   to chance, hence the system is significantly \"different\" than the baseline.", "",
              " - NOTE: Significance does not tell whether a system is \"better\" than the baseline but rather",
              "   emphasizes the \"difference\" of the systems in terms of the replicability of the delta.", ""]
    fam = sig.family_text()
    lines.append(f" - Bootstrap p values: {fam or 'a single comparison'} (the pairs of the clusters, the same p "
                 "for a pair everywhere).")
    if ar is not None:
        what = (f"Holm-adjusted over the {len(ar.results)} tests against the baseline" if ar.correction == "holm"
                else f"{len(ar.results)} test(s) against the baseline, uncorrected")
        lines.append(f" - Approximate randomization ({ar.n_trials:,} trials, seed {ar.seed}): {what}.")
    return lines


def format_text(loaded: Loaded, comparison, sig: Significance, ar: Randomization | None, surface=None) -> str:
    """The command's text output: the system table (with the metrics of one's own in ``surface``), the paired tests
    as sacrebleu prints them, the sentences and the clusters."""
    ds = loaded.dataset
    scale = "rescaled" if comparison.rescaled else "raw"
    lines = [f"{plain(loaded.description)}: {len(ds.systems)} systems x {ds.n_segments:,} segments; {sig.metric}, "
             f"{scale}", f"signature: {comparison.signature}", ""]
    lines += _table_lines(comparison, sig, surface) + [""] + _paired_lines(sig, ar) + [""]
    lines += [plain(r.sentence(sig.metric, sig.alpha)) for r in sig.versus_baseline]
    if ar is not None:
        lines += [plain(r.sentence(ar.metric, ar.alpha)) for r in ar.results]
    ranking = " > ".join(f"{c.rank}. " + ", ".join(f"{plain(s)} ({sig.standing(s).wins})" for s in c.systems)
                         for c in sig.clusters)
    lines += ["", f"Clusters by {sig.metric} (WMT style; pairwise wins in brackets): {ranking}",
              sig.comparisons_note() + " " + sig.resolution_note()]
    return "\n".join(lines)


def json_object(loaded: Loaded, comparison, sig: Significance, ar: Randomization | None,
                with_segments: bool = True, report=None, notes=(), verdict: GateResult | None = None,
                surface=None) -> dict:
    """The Compare page's JSON (:func:`bertscore_viz.figures.tables.to_jsonable`, schema version 2) with what this
    command adds: ``paired_ar``, sacrebleu's ``μ ± CI`` per system (``bootstrap_estimates``), the input (with the
    notes printed on stderr), the report and the CI gate's verdict (``gate``, null without one)."""
    out = tables.to_jsonable(loaded.dataset, comparison, sig, with_segments=with_segments, surface=surface)
    out["gate"] = None if verdict is None else verdict.as_dict()
    out["bootstrap_estimates"] = {s: {"score": v[0], "mean": v[1], "ci_half_width": v[2]}
                                  for s, v in _sacrebleu_estimates(sig).items()}
    out["paired_ar"] = None if ar is None else ar.as_dict()
    out["input"] = {"description": loaded.description, "systems": loaded.dataset.system_names,
                    "notes": list(notes)}
    if report is not None:
        out["report"] = report
    return out


def _say(lines, file=None) -> None:
    for line in lines:
        print(line, file=file or sys.stderr)


def _check_args(args) -> None:
    """The flags' values, before any input is read."""
    if args.report_segments is not None and not 0 <= args.report_segments <= 50:
        raise InputError(f"--report-segments takes 0 to 50, got {args.report_segments}.")
    for flag, value in (("--paired-bs-n", args.paired_bs_n), ("--paired-ar-n", args.paired_ar_n)):
        if value is not None and value < 1:
            raise InputError(f"{flag} takes a number of resamples or trials of at least 1, got {value}.")
    if not args.report_max_mb > 0:
        raise InputError(f"--report-max-mb takes a positive number of MiB, got {args.report_max_mb}.")
    if args.html:
        check_writable(args.html, "the report")


def gate_rule(args) -> tuple[str, str] | None:
    """``(rule, baseline)`` of ``--fail-if-worse`` / ``--fail-if-not-better``, or None without a gate.

    Raises:
        InputError: ``--baseline`` names another system than the gate's baseline.
    """
    for rule, flag, baseline in ((FAIL_IF_WORSE, "--fail-if-worse", args.fail_if_worse),
                                 (FAIL_IF_NOT_BETTER, "--fail-if-not-better", args.fail_if_not_better)):
        if baseline is not None:
            if args.baseline is not None and args.baseline != baseline:
                raise InputError(f"{flag} {plain(baseline)!r} and --baseline {plain(args.baseline)!r} name two "
                                 f"baselines; the gate tests against its own: drop --baseline.")
            return rule, baseline
    return None


def _check_names(args, names: list[str]) -> None:
    """``--baseline``, the gate's baseline and ``--pair`` name systems of the input (said before the model pass)."""
    rule = gate_rule(args)
    for flag, wanted in (("--baseline", [args.baseline] if args.baseline is not None else []),
                         ("--fail-if-worse" if rule and rule[0] == FAIL_IF_WORSE else "--fail-if-not-better",
                          [rule[1]] if rule else []),
                         ("--pair", list(args.pair or []))):
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise InputError(f"Unknown {flag} {plain(unknown[0])!r}; the systems are "
                             f"{', '.join(repr(plain(s)) for s in names)}.")


def _write_report(args, loaded: Loaded, comparison, scorer, sig, ar, notes: list[str], surface=None) -> dict:
    """The ``--html`` report, written atomically; what it holds, for ``--json``."""
    before = len(notes)
    explain = _explainer(args, loaded, comparison, scorer, notes) if args.report_segments else None
    _say(f"Note: {plain(n)}" for n in notes[before:])
    with progress_bar("report", "segments") as bar:
        report = build_report(loaded.dataset, comparison, sig, explain=explain,
                              pair=tuple(args.pair) if args.pair else None, n_segments=args.report_segments,
                              randomization=ar, title=f"BERTScore comparison: {loaded.description}", notes=notes,
                              max_bytes=int(args.report_max_mb * 2**20), progress=None if args.quiet else bar,
                              surface=surface)
    atomic_write_text(args.html, report.html)
    _say([f"wrote {plain(args.html)} ({report.n_bytes / 2**20:.1f} MiB, {len(report.segments)} drill-down(s)"
          + (f"; {len(report.left_out)} left out for the size bound" if report.left_out else "") + ")"])
    ids = loaded.dataset.segment_ids
    return {"path": str(args.html), "bytes": report.n_bytes, "pair": list(report.pair or []),
            "segments": [ids[i] for i in report.segments], "left_out": [ids[i] for i in report.left_out]}


def _output_format(args) -> str:
    return args.output_format or ("json" if args.json else "latex" if args.latex else "text")


def _print_output(args, loaded: Loaded, comparison, sig, ar, report, notes, verdict: GateResult | None,
                  surface=None) -> None:
    fmt = _output_format(args)
    if fmt == "json":
        print(json_text(json_object(loaded, comparison, sig, ar, not args.no_segments, report, notes, verdict,
                                    surface)))
    elif fmt == "latex":
        print(latex_table(comparison, sig), end="")
    elif fmt == "markdown":
        print(markdown_summary(f"BERTScore comparison: {loaded.description}", comparison, sig, ar, verdict), end="")
    else:
        text = format_text(loaded, comparison, sig, ar, surface)
        print(text + ("\n\n" + "\n".join(plain(s) for s in verdict.sentences()) if verdict is not None else ""))


def run(args) -> int:
    """``bertscore-viz compare (-r REFS -s SYS1 SYS2 ... | --input FILE | --mt-metrics-eval DIR --lp LP) [flags]``;
    exit status 1 when a CI gate (``--fail-if-worse`` / ``--fail-if-not-better``) fails."""
    _check_args(args)
    rule = gate_rule(args)
    earlier = earlier_runs(args)  # before the model pass: a run that is not there is said at once
    loaded = load_input(args)
    names = loaded.dataset.system_names
    _check_names(args, names + run_names(earlier))
    own_metric_set(args, loaded.dataset, names)  # --metric and the directions checked before the model pass
    _say(_problem_lines(loaded.dataset.problems))
    if loaded.precomputed is not None:
        comparison, scorer, notes = loaded.precomputed.comparison, None, list(loaded.notes)
        if args.model or args.layer is not None or args.idf:
            notes.append("A results file's scores are the file's own: -m, -l and --idf do not change them.")
    else:
        comparison, scorer, notes = _score(args, loaded, args.quiet)
    if getattr(args, "save_run", None) is not None:
        save_new_run(args, loaded.dataset, comparison)
    if earlier:  # the earlier runs' systems beside the new ones, by their kept scores
        ds, comparison = with_runs(loaded.dataset, comparison, earlier)
        loaded = replace(loaded, dataset=ds)
    own, own_notes = own_metric_set(args, loaded.dataset, comparison.systems)
    notes += own_notes
    surface = with_own_metrics(None, own, {s: loaded.dataset.systems.get(s, []) for s in comparison.systems})
    _say(f"Note: {plain(n)}" for n in notes)
    warns = comparison.warnings()
    _say([f"Warning: {plain(w)}" for w in warns[:_SHOWN]]
         + ([f"... and {len(warns) - _SHOWN} more warnings"] if len(warns) > _SHOWN else []))
    baseline = rule[1] if rule else args.baseline if args.baseline is not None else names[0]
    with progress_bar("resampling", "trials") as bar:
        sig, ar = analyse(comparison, baseline, args.metric, args.holm, args.paired_bs_n, args.seed, args.paired_ar,
                          args.paired_ar_n, None if args.quiet else bar, own)
    verdict = None
    if rule:
        verdict = gate(ar.results if ar is not None else sig.versus_baseline, rule[0], sig.metric, sig.alpha)
        _say(plain(s) for s in verdict.sentences())
    report = _write_report(args, loaded, comparison, scorer, sig, ar, notes, surface) if args.html else None
    if args.log_to:
        log_results(args.log_to, comparison=comparison, dataset=loaded.dataset, scorer=scorer, significance=sig)
    _print_output(args, loaded, comparison, sig, ar, report, notes, verdict, surface)
    return 1 if verdict is not None and not verdict.passed else 0
