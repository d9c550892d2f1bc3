"""Text files as bert-score's command line reads them (files/textfile.py), and the encodings it names."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertscore_viz.errors import InputError
from bertscore_viz.files.textfile import decode_text, read_text_lines, split_lines


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("ab \t\n\r\x0b\x0c\x1c\x85\u2028é")), max_size=40))
def test_lines_are_those_of_pythons_open_as_bert_score_reads_them(tmp_path, text):
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    with open(path, encoding="utf-8") as f:  # bert-score: open(args.cand) and [line.strip() for line in f]
        expected = [line.strip() for line in f]
    assert split_lines(text) == expected
    if expected:
        assert read_text_lines(path, "candidate file") == expected


@pytest.mark.parametrize("encoding, name", [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"),
                                            ("utf-32", "UTF-32"), ("utf-32-le", "UTF-32")])
def test_wide_encodings_are_named(encoding, name):
    with pytest.raises(InputError, match=f"is {name} text.*iconv -f {name} -t UTF-8"):
        decode_text("The cat sat.\nIt rained.\n".encode(encoding), "The file")


def test_binary_and_8_bit_files_are_told_apart_and_a_bom_is_dropped():
    with pytest.raises(InputError, match="is not text"):
        decode_text(b"\x00\x01\x02\xff" * 100 + b"\xc3", "The file")
    with pytest.raises(InputError, match=r"is not UTF-8: byte 3 \(line 2\)"):
        decode_text("a\nb\xe9".encode("latin-1"), "The file")
    assert decode_text("\ufeffx\n".encode("utf-8"), "The file") == "x\n"


def test_directories_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        read_text_lines(tmp_path, "corpus file")
    with pytest.raises(InputError, match="does not exist"):
        read_text_lines(tmp_path / "nope.txt", "corpus file")
    (tmp_path / "e.txt").write_bytes(b"")
    with pytest.raises(InputError, match="is empty: it has no lines"):
        read_text_lines(tmp_path / "e.txt", "candidate file")
    assert read_text_lines(tmp_path / "e.txt", "candidate file", allow_empty=True) == []
