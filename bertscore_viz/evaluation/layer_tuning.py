"""Choose a model's layer as the BERTScore authors did: correlation of F1 with human judgments on WMT16 DA.

Data layout (as ``data/wmt16-da-to-english``): for each language pair ``lp`` (``cs-en``, ...), the files
``DAseg-newstest2016.human.<lp>`` (one direct-assessment score per line), ``DAseg-newstest2016.mt-system.<lp>``
(the candidates) and ``DAseg-newstest2016.reference.<lp>`` (the references), line-aligned.

For every language pair, one model pass gives the F1 of every segment at every layer
(:func:`~bertscore_viz.evaluation.human_agreement.layer_scores`, as the Agreement page and ``correlate`` compute it);
then per layer the Pearson correlation and Kendall's tau (tau-b, scipy) with the human scores
(:func:`~bertscore_viz.evaluation.human_agreement.layer_correlations`, the same function), and their averages over
the language pairs. bert-score's ``model2layers`` defaults are the layers with the best average Pearson. Sentence
BLEU (sacrebleu's ``sentence_bleu``, default settings) on the same segments is the point of comparison.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.human_agreement import layer_correlations, layer_scores, sentence_metric_scores
from bertscore_viz.files.fileio import atomic_write_many, read_tsv_field, terminal_safe, tsv_field
from bertscore_viz.locations import BASELINE_DIR
from bertscore_viz.models.catalog import model_source_record
from bertscore_viz.versions import __version__, package_version

__all__ = ["PREFIX", "BLEU_ROW", "ProgressFn", "DASet", "LayerTable", "parse_layer_tsv", "find_lps", "read_da",
           "tune_layers", "write_table", "shipped_table_path", "load_shipped_table"]

PREFIX = "DAseg-newstest2016"
BLEU_ROW = "sentBLEU"
ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class DASet:
    """One language pair of segment-level DA data; ``files``: each file read, as ``{"path", "sha256"}``."""

    lp: str
    candidates: tuple[str, ...]
    references: tuple[str, ...]
    human: np.ndarray
    files: tuple = ()


@dataclass
class LayerTable:
    """Correlations per layer (and for sentence BLEU).

    Attributes:
        model: model name; lps: language pairs in order; idf: whether idf weighting was used.
        pearson, kendall: ``{row: {lp: value}}`` with rows ``0..n`` (layers) and :data:`BLEU_ROW` when computed.
        n_segments: segments per language pair.
        provenance: how the table was made (model source, data files and their sha256, date, versions), as the
            baselines' ``.provenance.json``; written into the JSON output.
    """

    model: str
    lps: list[str]
    idf: bool
    pearson: dict = field(default_factory=dict)
    kendall: dict = field(default_factory=dict)
    n_segments: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    @property
    def layers(self) -> list[int]:
        return sorted(k for k in self.pearson if isinstance(k, int))

    def average(self, row, which: str = "pearson") -> float:
        table = self.pearson if which == "pearson" else self.kendall
        return float(np.mean([table[row][lp] for lp in self.lps]))

    @property
    def best_layer(self) -> int:
        """Layer with the highest average Pearson correlation (the lowest layer on a tie)."""
        return max(self.layers, key=lambda layer: (self.average(layer), -layer))

    def rows(self) -> list[dict]:
        """One dict per row: ``row`` (layer number or "sentBLEU"), per-lp Pearson and Kendall, and averages."""
        out = []
        for row in self.layers + ([BLEU_ROW] if BLEU_ROW in self.pearson else []):
            d: dict = {"row": row}
            for lp in self.lps:
                d[f"pearson_{lp}"] = self.pearson[row][lp]
            d["pearson_avg"] = self.average(row)
            for lp in self.lps:
                d[f"kendall_{lp}"] = self.kendall[row][lp]
            d["kendall_avg"] = self.average(row, "kendall")
            out.append(d)
        return out

    def to_tsv(self) -> str:
        """The table as TSV; the column names hold the language pairs (from the data's file names), each written
        with :func:`~bertscore_viz.files.fileio.tsv_field` (a tab or line break in a name keeps the header one row
        of the same columns; :func:`parse_layer_tsv` reads the names back exactly)."""
        rows = self.rows()
        header = ["layer"] + [k for k in rows[0] if k != "row"]
        lines = ["\t".join(tsv_field(h) for h in header)]
        for d in rows:
            lines.append("\t".join([str(d["row"])] + [f"{d[k]:.4f}" for k in header[1:]]))
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        best = self.best_layer
        head = ["layer"] + [f"r {_markdown_cell(lp)}" for lp in self.lps] + ["r avg", "tau avg"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for d in self.rows():
            label = str(d["row"]) + (" (best)" if d["row"] == best else "")
            cells = [label] + [f"{d[f'pearson_{lp}']:.3f}" for lp in self.lps] + [
                f"{d['pearson_avg']:.3f}", f"{d['kendall_avg']:.3f}"]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        return json.dumps({"model": self.model, "idf": self.idf, "lps": self.lps, "n_segments": self.n_segments,
                           "best_layer": self.best_layer, "rows": self.rows(), "provenance": self.provenance},
                          indent=2, ensure_ascii=False) + "\n"


def _markdown_cell(text: str) -> str:
    """A language pair's name in a Markdown table cell (also printed on the terminal): a ``|`` escaped, every
    character a terminal would act on (a tab, a line break, ESC, a bidi override) written as an escape."""
    return terminal_safe(text).replace("|", "\\|")


def parse_layer_tsv(text: str) -> list[dict]:
    """Rows of a table written by :meth:`LayerTable.to_tsv` (numbers as floats, ``layer`` as int or "sentBLEU")."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError("The layer table is empty.")
    header = [read_tsv_field(h) for h in lines[0].split("\t")]
    if header[0] != "layer" or "pearson_avg" not in header:
        raise InputError(f"The layer table starts with {lines[0][:60]!r}; expected 'layer\\t...pearson_avg...'.")
    rows = []
    for line in lines[1:]:
        cells = line.split("\t")
        row: dict = {"layer": int(cells[0]) if cells[0].isdigit() else cells[0]}
        row.update({k: float(v) for k, v in zip(header[1:], cells[1:])})
        rows.append(row)
    return rows


# --- data -------------------------------------------------------------------------------------------------------
def _read(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 (bad byte at offset {exc.start}).") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def find_lps(data_dir: str | Path) -> list[str]:
    """Language pairs that have human, mt-system and reference files."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        what = "is a file, not a directory" if data_dir.exists() else "does not exist"
        raise InputError(f"The DA data directory {data_dir} {what}. Give a directory laid out as WMT16 DA "
                         f"({PREFIX}.{{human,mt-system,reference}}.<lp>).")
    pat = re.compile(re.escape(PREFIX) + r"\.human\.(.+)$")
    lps = sorted(m.group(1) for f in data_dir.iterdir() if (m := pat.match(f.name)))
    lps = [lp for lp in lps if all((data_dir / f"{PREFIX}.{kind}.{lp}").is_file()
                                   for kind in ("mt-system", "reference"))]
    if not lps:
        raise InputError(f"No language pair found in {data_dir}: expected files {PREFIX}.human.<lp>, "
                         f"{PREFIX}.mt-system.<lp> and {PREFIX}.reference.<lp>.")
    return lps


def read_da(data_dir: str | Path, lps: list[str] | None = None) -> list[DASet]:
    """Read every (or the given) language pair; clear errors for unequal line counts and non-numbers."""
    data_dir = Path(data_dir)
    lps = find_lps(data_dir) if lps is None else lps
    out = []
    for lp in lps:
        paths = [data_dir / f"{PREFIX}.{kind}.{lp}" for kind in ("human", "mt-system", "reference")]
        human_lines, cands, refs = (_read(path) for path in paths)
        if not (len(human_lines) == len(cands) == len(refs)):
            raise InputError(f"{lp}: expected as many human scores as system outputs and references, got "
                             f"{len(human_lines)}, {len(cands)} and {len(refs)} lines.")
        try:
            human = np.array([float(x) for x in human_lines], dtype=np.float64)
        except ValueError as exc:
            raise InputError(f"{lp}: a human score is not a number ({exc}).") from None
        if len(human) < 3:
            raise InputError(f"{lp}: {len(human)} segments are too few for a correlation (need at least 3).")
        files = tuple({"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()} for path in paths)
        out.append(DASet(lp, tuple(cands), tuple(refs), human, files))
    return out


def tune_layers(data: str | Path | list[DASet], model=None, idf: bool = False, bleu: bool = True,
                batch_size: int = 64, device: str | None = None, progress: ProgressFn | None = None,
                scorer=None) -> LayerTable:
    """Pearson and Kendall correlation of F1 with human DA scores, per layer and language pair.

    Args:
        data: a directory laid out as WMT16 DA, or sets from :func:`read_da`.
        model: None (bundled), a local directory or a hub name; ignored when ``scorer`` is given.
        idf: weight tokens by idf computed from the references of each language pair.
        bleu: add the sentence-BLEU row.
        progress: ``progress(done, total)`` in segments.
    """

    sets = read_da(data) if not isinstance(data, list) else data
    if scorer is None:
        scorer = ScoringOptions(model=model, batch_size=batch_size, device=device).for_every_layer().scorer()
    if scorer.idf != idf:  # idf weights from each language pair's references, as the pass computes them
        scorer = scorer.replace(idf=idf)
    table = LayerTable(scorer.spec.name, [s.lp for s in sets], idf, provenance=_provenance(sets, scorer, idf, bleu))
    total = sum(len(s.human) for s in sets)
    done = 0
    for s in sets:
        size = len(s.human)

        def lp_progress(d: int, t: int, before=done, k=size) -> None:
            if progress and t:
                progress(before + int(k * d / t), total)

        scores = layer_scores(scorer, list(s.candidates), list(s.references), lp_progress)
        pearson, kendall = layer_correlations(scores.values[:, 2], s.human)
        for layer, (r, tau) in enumerate(zip(pearson, kendall)):
            table.pearson.setdefault(layer, {})[s.lp] = r
            table.kendall.setdefault(layer, {})[s.lp] = tau
        if bleu:
            b = sentence_metric_scores(s.candidates, [[r] for r in s.references], ("BLEU",))["BLEU"]
            (r,), (tau,) = layer_correlations(b[None, :], s.human)
            table.pearson.setdefault(BLEU_ROW, {})[s.lp] = r
            table.kendall.setdefault(BLEU_ROW, {})[s.lp] = tau
        table.n_segments[s.lp] = len(s.human)
        done += len(s.human)
        if progress:
            progress(done, total)
    return table


def _provenance(sets: list[DASet], scorer, idf: bool, bleu: bool) -> dict:
    """What :func:`tune_layers` records about a run (no path of this machine beyond the data paths as given)."""

    return {
        "model": scorer.spec.name,
        "model_source": model_source_record(scorer.spec),
        "data": [f for s in sets for f in s.files],
        "segments": sum(len(s.human) for s in sets),
        "criterion": "Pearson r and Kendall tau-b (scipy) of segment-level F1 with the human DA scores, per "
                     "language pair and averaged; best layer = highest average Pearson",
        "idf": idf,
        "sentence_bleu": bleu,
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "bertscore_viz_version": __version__,
        "transformers_version": package_version("transformers"),
        "torch_version": package_version("torch"),
        "precision": scorer.precision,
    }


def write_table(table: LayerTable, output: str | Path) -> list[Path]:
    """Write ``OUT.tsv`` and, beside it, ``OUT.md`` and ``OUT.json``."""
    output = Path(output)
    stem = output.name[: -len(output.suffix)] if output.suffix else output.name
    paths = [output, output.with_name(stem + ".md"), output.with_name(stem + ".json")]
    texts = (table.to_tsv(), table.to_markdown(), table.to_json())
    return atomic_write_many([(p, t.encode("utf-8")) for p, t in zip(paths, texts)])  # all three, or none


def shipped_table_path(model: str) -> Path:
    """``baselines/layers/<model>.tsv``: the shipped layer-tuning table of a model."""

    return BASELINE_DIR / "layers" / f"{model}.tsv"


def load_shipped_table(model: str) -> list[dict] | None:
    """Rows of the shipped layer-tuning table of a model, or None when there is none."""
    path = shipped_table_path(model)
    if not path.is_file():
        return None
    return parse_layer_tsv(path.read_text(encoding="utf-8"))
