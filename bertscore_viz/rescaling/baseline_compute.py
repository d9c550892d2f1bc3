"""Compute a rescaling baseline for any model, the authors' way (bert-score never released its code).

Method (Zhang et al., "BERTScore", section 4 and bert-score's ``journal/rescale_baseline.md``): take sentences from
a monolingual corpus (one per line; stripped, empty lines dropped, duplicates dropped, lines of ``max_words`` words
or more dropped, as the authors kept lines under 32 words), pair them at random into unrelated candidate/reference
pairs, score every pair at **every layer** from one forward pass, and write the mean P, R and F of each layer in
bert-score's format (``LAYER,P,R,F``, float32 values as in its shipped files). A provenance file beside it
(``OUT.provenance.json``) records the corpus (path, sha256), counts, seed, model, date, versions and the standard
error of every mean.

Pairing, seeded with ``numpy.random.default_rng(seed)``: the usable sentences are shuffled and cut into blocks;
inside a block, each round is a fresh random permutation whose consecutive elements form pairs, so one round uses
each sentence once (the authors' grouping of N sentences into N/2 pairs). When more pairs are asked for than
N/2, further rounds re-pair the same sentences with new partners. A block holds at most
:data:`~bertscore_viz.engine.scorer.CHUNK_PAIRS` pairs and is scored by one ``Scorer.match(..., layers="all")`` call, so
every sentence is embedded once per block and memory stays bounded whatever the corpus size (streaming). Every
pair is a uniformly random pair of two different sentences, so the expected mean equals that of the authors'
global pairing.
"""

from __future__ import annotations

import csv as _csv
import datetime as _dt
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bertscore_viz.engine.arguments import check_whole
from bertscore_viz.engine.baseline import BaselineTable, parse_baseline
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import CHUNK_PAIRS
from bertscore_viz.errors import InputError
from bertscore_viz.files.fileio import atomic_write_many
from bertscore_viz.files.textfile import decode_text, read_bytes, split_lines
from bertscore_viz.locations import EXAMPLES_DIR
from bertscore_viz.models.catalog import model_source_record
from bertscore_viz.versions import __version__, package_version

__all__ = ["MAX_DEFAULT_PAIRS", "MAX_PAIRS", "DEFAULT_MAX_WORDS", "ProgressFn", "CorpusLines", "BaselineResult",
           "format_baseline_float32", "provenance_path", "prepare_corpus", "check_usable", "read_corpus",
           "default_pairs", "plan_pairs", "block_moments", "score_block", "compute_baseline", "write_baseline",
           "corpus_from_lines", "BUILTIN_PAIRS", "example_pairs"]

#: Largest default number of pairs.
MAX_DEFAULT_PAIRS = 100_000
#: Most pairs one computation scores (about 30 minutes on 2 CPU cores): a typo cannot start a job of days. Means
#: converge long before: the authors used 100,000 pairs.
MAX_PAIRS = 1_000_000
#: The authors kept lines under 32 words.
DEFAULT_MAX_WORDS = 32

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class CorpusLines:
    """Usable sentences of a corpus and what was dropped on the way."""

    sentences: tuple[str, ...]
    lines_read: int
    dropped_empty: int
    dropped_duplicate: int
    dropped_long: int
    sha256: str
    source: str
    dropped_no_tokens: int = 0
    files: tuple = ()


@dataclass
class BaselineResult:
    """A computed baseline.

    Attributes:
        means: ``(n_layers, 3)`` float64 mean P, R, F of every layer 0..n-1.
        stderr: ``(n_layers, 3)`` standard errors of those means.
        provenance: everything needed to reproduce it (JSON-serialisable).
    """

    means: np.ndarray
    stderr: np.ndarray
    provenance: dict = field(default_factory=dict)

    @property
    def n_layers(self) -> int:
        return len(self.means)

    def tsv(self) -> str:
        """The baseline file's text, in bert-score's format."""
        return format_baseline_float32(self.means)

    def table(self) -> BaselineTable:
        """The baseline as the engine uses it (values exactly as written in the file)."""
        return parse_baseline(self.tsv(), self.provenance.get("description", "computed baseline"))

    def provenance_json(self) -> str:
        return json.dumps(self.provenance, indent=2, ensure_ascii=False) + "\n"


def _float32_text(x: float) -> str:
    """Shortest text that reads back as the same float32, as in bert-score's files (``0.3231512``)."""
    return np.format_float_positional(np.float32(x), unique=True, trim="0")


def format_baseline_float32(means: np.ndarray) -> str:
    """bert-score's file layout: header ``LAYER,P,R,F``, one row per layer from 0, float32 values, ``\\n`` ends."""
    lines = ["LAYER,P,R,F"]
    for layer, row in enumerate(np.asarray(means, dtype=np.float64)):
        lines.append(",".join([str(layer)] + [_float32_text(v) for v in row]))
    return "\n".join(lines) + "\n"


def provenance_path(output: str | Path) -> Path:
    """``OUT.tsv`` -> ``OUT.provenance.json`` (beside it)."""
    output = Path(output)
    stem = output.name[: -len(output.suffix)] if output.suffix else output.name
    return output.with_name(stem + ".provenance.json")


# --- corpus -----------------------------------------------------------------------------------------------------
def _decode(data: bytes, source: str) -> str:
    return decode_text(data, f"The corpus {source}")


def _lines_to_corpus(raw: list[str], sha256: str, source: str, max_words: int,
                     files: tuple = ()) -> CorpusLines:
    if max_words < 1:
        raise InputError(f"max_words must be at least 1, got {max_words}.")
    stripped = [line.strip() for line in raw]
    nonempty = [line for line in stripped if line]
    unique = list(dict.fromkeys(nonempty))
    kept = [line for line in unique if len(line.split()) < max_words]
    corpus = CorpusLines(tuple(kept), len(raw), len(stripped) - len(nonempty), len(nonempty) - len(unique),
                         len(unique) - len(kept), sha256, source, files=files)
    check_usable(corpus, max_words)
    return corpus


def prepare_corpus(data: bytes, source: str = "<upload>", max_words: int = DEFAULT_MAX_WORDS) -> CorpusLines:
    """Decode, strip, drop empty lines, deduplicate (first occurrence kept), keep lines under ``max_words`` words.

    Raises:
        InputError: not UTF-8, no usable line, or a single usable line (a pair needs two different sentences).
    """
    text = _decode(data, source)
    return _lines_to_corpus(split_lines(text), hashlib.sha256(data).hexdigest(), source, max_words)


def check_usable(corpus: CorpusLines, max_words: int = DEFAULT_MAX_WORDS) -> None:
    n = len(corpus.sentences)
    detail = (f"{corpus.lines_read} line(s) read: {corpus.dropped_empty} empty, {corpus.dropped_duplicate} "
              f"duplicate(s), {corpus.dropped_long} with {max_words} words or more"
              + (f", {corpus.dropped_no_tokens} with no token the model knows" if corpus.dropped_no_tokens else ""))
    if n == 0:
        raise InputError(
            f"The corpus {corpus.source} has no usable sentence ({detail}). Give a text file with one sentence "
            "per line; the baseline pairs different sentences at random."
        )
    if n == 1:
        raise InputError(
            f"The corpus {corpus.source} has only one usable sentence ({detail}); a baseline pairs two different "
            "sentences, so it needs at least two (thousands for a stable baseline)."
        )


def read_corpus(paths: str | Path | Sequence[str | Path], max_words: int = DEFAULT_MAX_WORDS) -> CorpusLines:
    """:func:`prepare_corpus` on one or more files (a directory means every file in it, sorted by name).

    Lines of all files are pooled before deduplication. ``sha256`` is over the files' bytes in order; each
    file's own hash is kept in ``files``.

    Raises:
        InputError: a missing or unreadable file, an empty directory, a file that is not UTF-8, too few lines.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            inside = sorted(x for x in p.iterdir() if x.is_file() and not x.name.startswith("."))
            if not inside:
                raise InputError(f"The corpus directory {p} holds no files. Give text files, one sentence per line.")
            files.extend(inside)
        else:
            files.append(p)
    if not files:
        raise InputError("No corpus file given. Give a text file with one sentence per line.")
    digest = hashlib.sha256()
    raw: list[str] = []
    info = []
    for path in files:
        data = read_bytes(path, "corpus file")
        digest.update(data)
        lines = split_lines(_decode(data, str(path)))
        raw.extend(lines)
        info.append({"path": str(path), "sha256": hashlib.sha256(data).hexdigest(), "lines": len(lines)})
    source = str(files[0]) if len(files) == 1 else f"{len(files)} files in {files[0].parent}"
    if len(files) > 1 and len({f.parent for f in files}) > 1:
        source = f"{len(files)} files"
    return _lines_to_corpus(raw, digest.hexdigest(), source, max_words, tuple(info))


# --- pairing ----------------------------------------------------------------------------------------------------
def default_pairs(n_sentences: int) -> int:
    """The authors' grouping: every sentence once, N/2 pairs, at most :data:`MAX_DEFAULT_PAIRS`."""
    return max(1, min(MAX_DEFAULT_PAIRS, n_sentences // 2))


def plan_pairs(n_sentences: int, n_pairs: int, seed: int, block_pairs: int | None = None) -> list[np.ndarray]:
    """Random pairs of different sentence indices, grouped in blocks (see the module docstring).

    Returns:
        A list of ``(k, 2)`` int arrays (candidate index, reference index), one per block; ``k`` sums to
        ``n_pairs``. Deterministic for a given ``(n_sentences, n_pairs, seed, block_pairs)``.
    """

    if n_sentences < 2:
        raise InputError("Pairing needs at least two different sentences.")
    if n_pairs < 1:
        raise InputError(f"The number of pairs must be at least 1, got {n_pairs}.")
    block_pairs = CHUNK_PAIRS if block_pairs is None else int(block_pairs)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_sentences)
    rounds = max(1, -(-2 * n_pairs // n_sentences))  # ceil(2P / N): rounds over each block
    block_size = max(2, min(n_sentences, (2 * block_pairs) // rounds))
    n_blocks = max(1, n_sentences // block_size)
    blocks = np.array_split(order, n_blocks)
    sizes = np.array([len(b) // 2 for b in blocks], dtype=np.int64)  # pairs per round in each block
    # pairs per block, proportional to what one round gives, summing exactly to n_pairs
    share = sizes / sizes.sum() * n_pairs
    want = np.floor(share).astype(np.int64)
    for i in np.argsort(-(share - want), kind="stable")[: n_pairs - int(want.sum())]:
        want[i] += 1
    out = []
    for block, k in zip(blocks, want):
        got = []
        have = 0
        while have < k:
            perm = rng.permutation(block)
            m = len(perm) // 2 * 2
            pairs = perm[:m].reshape(-1, 2)
            got.append(pairs)
            have += len(pairs)
        if k:
            out.append(np.concatenate(got)[:k])
    return out


# --- computation ------------------------------------------------------------------------------------------------
class _Moments:
    """Running count, mean and sum of squared deviations (Chan et al.), per layer and P/R/F."""

    def __init__(self, shape: tuple[int, ...]):
        self.n = 0
        self.mean = np.zeros(shape)
        self.m2 = np.zeros(shape)

    def add(self, values: np.ndarray) -> None:
        """``values``: ``(k, *shape)``."""
        if not len(values):
            return
        self.merge(*block_moments(values))

    def merge(self, k: int, mean_b: np.ndarray, m2_b: np.ndarray) -> None:
        """Add a block summarised by :func:`block_moments` (count, mean, sum of squared deviations)."""
        if not k:
            return
        n = self.n + k
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (k / n)
        self.m2 = self.m2 + m2_b + delta ** 2 * (self.n * k / n)
        self.n = n

    def stderr(self) -> np.ndarray:
        if self.n < 2:
            return np.full_like(self.mean, np.nan)
        return np.sqrt(self.m2 / (self.n - 1) / self.n)


def block_moments(values: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """``(k, mean, sum of squared deviations)`` over axis 0 of ``values`` ``(k, *shape)``, in float64: what a worker
    sends back for one block; :meth:`_Moments.merge` in block order then gives the single-process numbers."""
    values = np.asarray(values, dtype=np.float64)
    mean_b = values.mean(axis=0)
    return len(values), mean_b, ((values - mean_b) ** 2).sum(axis=0)


def score_block(scorer, cands: Sequence[str], refs: Sequence[str], n_layers: int, progress=None) -> np.ndarray:
    """``(k, n_layers, 3)`` raw P, R, F of each pair at every layer, from one ``match(layers="all")`` pass.

    The block is embedded with a private cache, so its numbers depend on the block alone: the same file in one
    process or on any number of workers (see :meth:`Encoder.private_cache`)."""
    with scorer.encoder.private_cache():
        stats = scorer.match(cands, refs, layers="all", progress=progress)
    values = np.empty((len(cands), n_layers, 3))
    for layer in range(n_layers):
        values[:, layer, :] = stats.pair_scores(layer)[0]
    return values


def _drop_untokenizable(corpus: CorpusLines, encoder) -> CorpusLines:
    """Remove sentences that tokenize to special tokens only (they would score 0 and pull the mean down)."""
    special = list(encoder.special_ids)
    keep = [s for s, t in zip(corpus.sentences, encoder.encode(list(corpus.sentences)))
            if np.any(~np.isin(t.ids, special))]
    if len(keep) == len(corpus.sentences):
        return corpus
    return CorpusLines(tuple(keep), corpus.lines_read, corpus.dropped_empty, corpus.dropped_duplicate,
                       corpus.dropped_long, corpus.sha256, corpus.source,
                       len(corpus.sentences) - len(keep), corpus.files)


def compute_baseline(corpus: CorpusLines, model=None, lang: str = "en", n_pairs: int | None = None,
                     seed: int = 0, max_words: int = DEFAULT_MAX_WORDS, batch_size: int = 64,
                     device: str | None = None, progress: ProgressFn | None = None,
                     block_pairs: int | None = None, scorer=None, run_blocks=None) -> BaselineResult:
    """Mean P, R and F of random sentence pairs at every layer of a model.

    Args:
        corpus: from :func:`read_corpus` or :func:`prepare_corpus`.
        model: None (the bundled model), a local directory or a hub name; ignored when ``scorer`` is given.
        n_pairs: number of random pairs; default :func:`default_pairs`.
        seed: seed of ``numpy.random.default_rng``: the same seed gives the same pairs and the same file.
        progress: ``progress(done, total)`` in pairs scored.
        block_pairs: most pairs per block (one model pass over the block's sentences).
        scorer: a :class:`~bertscore_viz.engine.scorer.Scorer` to reuse (its model is used, its layer ignored).
        run_blocks: score the blocks elsewhere (e.g. :func:`bertscore_viz.distributed.jobs.ray_block_runner`):
            ``run_blocks(sentences, blocks, n_layers, progress)`` returns one :func:`block_moments` triple per
            block, in block order; default: here, one block after the other.

    Raises:
        InputError: fewer than two usable sentences, or a bad number of pairs.
    """

    check_whole(seed, "seed", minimum=0)  # before the model loads: numpy refuses negative seeds with a traceback
    check_whole(n_pairs, "the number of pairs", minimum=1, optional=True)
    if n_pairs is not None and n_pairs > MAX_PAIRS:
        raise InputError(f"{n_pairs:,} pairs asked for; at most {MAX_PAIRS:,} are computed at once (the authors used "
                         "100,000; the means settle long before). Ask for fewer pairs.")
    if scorer is None:
        scorer = ScoringOptions(model=model, batch_size=batch_size, device=device).for_every_layer().scorer()
    enc = scorer.encoder
    corpus = _drop_untokenizable(corpus, enc)
    check_usable(corpus, max_words)
    sentences = corpus.sentences
    n_pairs = default_pairs(len(sentences)) if n_pairs is None else int(n_pairs)
    blocks = plan_pairs(len(sentences), n_pairs, seed, block_pairs)
    n_layers = enc.num_layers + 1
    run = run_blocks or (lambda sents, bl, n, prog: _run_blocks_here(scorer, sents, bl, n, prog))
    moments = _Moments((n_layers, 3))
    for k, mean_b, m2_b in run(sentences, blocks, n_layers, progress):
        moments.merge(k, mean_b, m2_b)
    means, stderr = moments.mean, moments.stderr()
    provenance = _provenance(corpus, scorer, lang, n_pairs, seed, max_words, blocks, means, stderr,
                             CHUNK_PAIRS if block_pairs is None else int(block_pairs))
    return BaselineResult(means, stderr, provenance)


def _run_blocks_here(scorer, sentences, blocks, n_layers: int, progress: ProgressFn | None):
    """The blocks in this process, one after the other: one :func:`block_moments` triple per block."""
    n_pairs = int(sum(len(b) for b in blocks))
    done = 0
    if progress:
        progress(0, n_pairs)
    for pairs in blocks:
        k = len(pairs)

        def block_progress(d: int, t: int, before=done, k=k) -> None:
            if progress and t:
                progress(before + int(k * 0.9 * d / t), n_pairs)

        yield block_moments(score_block(scorer, [sentences[i] for i in pairs[:, 0]],
                                        [sentences[j] for j in pairs[:, 1]], n_layers, block_progress))
        done += k
        if progress:
            progress(done, n_pairs)


def _provenance(corpus: CorpusLines, scorer, lang: str, n_pairs: int, seed: int, max_words: int, blocks,
                means: np.ndarray, stderr: np.ndarray, block_pairs: int) -> dict:
    """How a baseline was made: model, corpus (checksum, what was dropped), pairing, means and their standard
    errors, versions."""
    enc = scorer.encoder
    n_layers = enc.num_layers + 1
    sentences = corpus.sentences
    used = {int(i) for b in blocks for i in b.ravel()}
    rounds = max(1, -(-2 * n_pairs // len(sentences)))
    return {
        "description": f"baseline of {enc.spec.name} ({lang}) from {n_pairs} random pairs of {corpus.source}",
        "model": enc.spec.name,
        "model_source": model_source_record(enc.spec),
        "lang": lang,
        "corpus": {
            "path": corpus.source,
            "sha256": corpus.sha256,
            "files": list(corpus.files),
            "lines_read": corpus.lines_read,
            "dropped_empty": corpus.dropped_empty,
            "dropped_duplicate": corpus.dropped_duplicate,
            f"dropped_{max_words}_words_or_more": corpus.dropped_long,
            "dropped_no_tokens": corpus.dropped_no_tokens,
            "usable_lines": len(sentences),
            "lines_used_in_pairs": len(used),
        },
        "pairs": n_pairs,
        "seed": seed,
        "block_pairs": block_pairs,
        "max_words": max_words,
        "pairing": (f"numpy default_rng({seed}); sentences shuffled and cut into {len(blocks)} block(s); in each "
                    f"block {rounds} round(s) of random permutations paired consecutively (each round uses each "
                    "sentence once); one Scorer.match(layers='all') pass per block"),
        "layers": n_layers,
        "format": "LAYER,P,R,F; mean over pairs, written as float32 like bert-score's files",
        "means": {"P": means[:, 0].tolist(), "R": means[:, 1].tolist(), "F": means[:, 2].tolist()},
        "stderr": {"P": stderr[:, 0].tolist(), "R": stderr[:, 1].tolist(), "F": stderr[:, 2].tolist()},
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "bertscore_viz_version": __version__,
        "transformers_version": package_version("transformers"),
        "torch_version": package_version("torch"),
        "precision": scorer.precision,
    }


def write_baseline(result: BaselineResult, output: str | Path) -> tuple[Path, Path]:
    """Write ``OUT.tsv`` and ``OUT.provenance.json`` as one (:func:`~bertscore_viz.files.fileio.atomic_write_many`:
    a failure leaves both as they were); returns both paths."""
    output = Path(output)
    prov = provenance_path(output)
    atomic_write_many([(output, result.tsv().encode("utf-8")), (prov, result.provenance_json().encode("utf-8"))])
    return output, prov


def corpus_from_lines(lines: Sequence[str], source: str = "<lines>", max_words: int = DEFAULT_MAX_WORDS) \
        -> CorpusLines:
    """:func:`prepare_corpus` for sentences already in memory."""
    return prepare_corpus("\n".join(lines).encode("utf-8"), source, max_words)


# --- for the Baselines page -------------------------------------------------------------------------------------
#: Used when the shipped Compare example is missing.
BUILTIN_PAIRS = (
    ("The cat sat on the mat.", "There is a cat sitting on the mat."),
    ("A quick brown fox jumps over the lazy dog.", "The quick brown fox leaped over a lazy dog."),
    ("He went to the store to buy some milk.", "She walked to the shop to purchase bread."),
    ("Machine learning models can be evaluated with BERTScore.",
     "BERTScore is used to evaluate text generation models."),
    ("The meeting was postponed until next week.", "The meeting has been moved to next week."),
    ("Heavy rain caused flooding in several villages.", "Several villages were flooded after heavy rain."),
    ("The company reported a profit.", "The firm announced a loss for the quarter."),
    ("She thanked her colleagues for their support.", "She blamed her colleagues."),
    ("The train was late again this morning.", "Stock markets rallied on Friday."),
    ("I love reading books in the evening.", "The parliament passed a new budget law."),
    ("Children played football in the park.", "The recipe needs two eggs and some flour."),
    ("The museum opens at nine o'clock.", "The museum opens at 9 a.m."),
)


def example_pairs() -> tuple[list[str], list[str], str]:
    """Candidate/reference pairs for the before/after rescaling picture: every system of the shipped Compare example
    against its reference, or :data:`BUILTIN_PAIRS` when the example file is missing.

    Returns:
        ``(candidates, references, source description)``.
    """

    path = EXAMPLES_DIR / "systems_example.csv"
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            rows = list(_csv.DictReader(fh))
        systems = [c for c in rows[0] if c not in ("segment_id", "reference")]
        cands = [r[s] for s in systems for r in rows]
        refs = [r["reference"] for s in systems for r in rows]
        if cands and all(isinstance(x, str) for x in cands + refs):
            return cands, refs, f"the Compare example ({len(systems)} systems x {len(rows)} segments)"
    except (OSError, KeyError, IndexError, ValueError):
        pass
    return [c for c, _ in BUILTIN_PAIRS], [r for _, r in BUILTIN_PAIRS], f"{len(BUILTIN_PAIRS)} built-in pairs"
