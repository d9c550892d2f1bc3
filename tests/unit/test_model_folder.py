"""Issue 46: a broken custom model folder is one checked door (``bertscore_viz/models/folder.py`` in
``resolve_model``, the loaders' errors in ``engine/tokenizer.py`` and ``engine/encoder.py``): each is a one-line
ModelError, exit 2 on the command line, never a traceback, an endless read or an allocation of terabytes.

The folders are made from the real bundled model (its weights linked, its config and tokenizer copied) with one
thing broken each; the commands run the real CLI on real files.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from bertscore_viz import score
from bertscore_viz.cli.entry import main
from bertscore_viz.errors import ModelError
from bertscore_viz.models.folder import MAX_MODEL_NAME_CHARS
from bertscore_viz.models.spec import bundled_model_path, resolve_model
from bertscore_viz.serving import model_access
from bertscore_viz.serving.config import Policy

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def _folder(root, name: str, files=("config.json", *TOKENIZER_FILES), weights: bool = True, **config):
    src, d = bundled_model_path(), root / name
    d.mkdir()
    for f in files:
        shutil.copy(src / f, d / f)
    if weights:
        (d / "model.safetensors").symlink_to(src / "model.safetensors")
    if config:
        values = json.loads((d / "config.json").read_text(encoding="utf-8"))
        values.update(config)
        (d / "config.json").write_text(json.dumps(values), encoding="utf-8")
    return d


def _pickle_that_runs_code(root):
    import torch
    from safetensors.torch import load_file

    class Runs:
        def __reduce__(self):
            return (os.system, (f"touch {root / 'RAN'}",))

    d = _folder(root, "pickled", weights=False)
    weights = load_file(str(bundled_model_path() / "model.safetensors"))
    weights["x"] = Runs()
    torch.save(weights, d / "pytorch_model.bin")
    return d


def _half_safetensors(root):
    d = _folder(root, "half", weights=False)
    data = (bundled_model_path() / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])
    return d


def _nested_config(root):
    d = _folder(root, "nested")
    (d / "config.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000, encoding="utf-8")
    return d


def _empty_vocab(root):
    d = _folder(root, "empty-vocab", files=("config.json", "tokenizer_config.json", "special_tokens_map.json"))
    (d / "vocab.txt").write_text("", encoding="utf-8")
    return d


def _fifo_inside(root):
    d = _folder(root, "fifo")
    (d / "tokenizer.json").unlink()
    os.mkfifo(d / "tokenizer.json")
    return d


CASES = {
    "pickled": (_pickle_that_runs_code, r"are a pickle that would run code when loaded \(it calls posix.system\)"),
    "huge": (lambda root: _folder(root, "huge", hidden_size=10**9, num_attention_heads=1),
             "embedding table of 30,522 x 1,000,000,000 values"),
    "empty-vocab": (_empty_vocab, "cannot tokenize text"),
    "half": (_half_safetensors, "model.safetensors in the model folder .* is incomplete"),
    "nested": (_nested_config, "config.json of the model folder .* is nested too deeply"),
    "zero-layers": (lambda root: _folder(root, "zero", num_hidden_layers=0), "num_hidden_layers = 0"),
    "fifo": (_fifo_inside, "tokenizer.json in the model folder .* is a pipe"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_model_folder_is_one_line_and_exit_2(case, tmp_path, capsys):
    make, message = CASES[case]
    folder = make(tmp_path)
    (tmp_path / "c.txt").write_text("a cat sat\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("the cat sat\n", encoding="utf-8")
    code = main(["score", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "-m", str(folder),
                 "-l", "0"])
    out, err = capsys.readouterr()
    assert code == 2 and not out, err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(message, err), err
    assert "it has layers 0 to -1" not in err
    assert not (tmp_path / "RAN").exists()  # the pickle never ran
    with pytest.raises(ModelError):
        score(["a cat sat"], ["the cat sat"], model=str(folder), layer=0)


def test_a_model_name_longer_than_a_path_is_named_everywhere(capsys, tmp_path):
    """A 5,000-character model name raised OSError (file name too long) in the CLI, score() and the deployment's
    model check."""
    name = "m" * 5000
    with pytest.raises(ModelError, match=f"at most {MAX_MODEL_NAME_CHARS:,} \\(MAX_MODEL_NAME_CHARS\\)"):
        resolve_model(name)
    with pytest.raises(ModelError, match="MAX_MODEL_NAME_CHARS"):
        score(["a"], ["b"], model=name, layer=1)
    with pytest.raises(ModelError) as info:
        model_access.check_model(name, Policy(allow_custom_models=True))
    assert "m" * 100 not in str(info.value)  # the user's text shortened, no server path
    (tmp_path / "c.txt").write_text("a\n", encoding="utf-8")
    code = main(["score", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"), "-m", name, "-l", "1"])
    _, err = capsys.readouterr()
    assert code == 2 and "MAX_MODEL_NAME_CHARS" in err and "Traceback" not in err
    with pytest.raises(ModelError):  # one part longer than the file system's 255 bytes: not a folder, no OSError
        resolve_model("/tmp/" + "d" * 300)


def test_a_sound_custom_folder_still_scores_as_the_bundled_model(tmp_path):
    folder = _folder(tmp_path, "copy")
    ours = score(["a cat sat"], ["the cat sat"], model=str(folder), layer=4)
    bundled = score(["a cat sat"], ["the cat sat"], layer=4)
    assert abs(float(ours.f1[0]) - float(bundled.f1[0])) < 1e-6
