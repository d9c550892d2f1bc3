"""What a file is when it is not UTF-8 text: compressed files, archives, spreadsheets, PDF, images, Parquet,
UTF-16/32 text and other binary data, named from their first bytes (and, for zip archives, the names of their
members), each with what to do instead.

Used by every reader of text (uploads: :mod:`bertscore_viz.files.tables`; text files of sentences:
:mod:`bertscore_viz.files.textfile`), so that a gzip file or an ``.xlsx`` renamed ``.csv`` is called what it is,
not "probably Latin-1". Every check is a prefix test or one ``bytes.find``: linear in the file.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["Identified", "identify_binary", "wide_encoding", "looks_binary", "SAVE_AS_CSV"]

#: How to turn a spreadsheet into a file this tool reads.
SAVE_AS_CSV = ("Open it in its program and save it as 'CSV UTF-8 (comma delimited)' (Excel: File > Save As; "
               "LibreOffice: File > Save As > Text CSV, character set UTF-8), then use that file.")
_DECOMPRESS = "Decompress it first ({command}) and use the CSV, TSV or JSON Lines file inside."
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
         (b"\xfe\xff", "UTF-16"))


@dataclass(frozen=True)
class Identified:
    """A file recognised as something other than UTF-8 text.

    Attributes:
        what: what it is, as a noun phrase (``"a gzip-compressed file"``).
        advice: what to do instead, as a sentence.
    """

    what: str
    advice: str

    def sentence(self, subject: str = "The file") -> str:
        """``"The file is a gzip-compressed file, not text. Decompress it first ..."``."""
        return f"{subject} is {self.what}, not text. {self.advice}"


def _zip_kind(data: bytes) -> Identified:
    """A zip archive by the names of its members (they are stored uncompressed in its headers)."""
    if data.find(b"xl/workbook") >= 0 or data.find(b"xl/worksheets") >= 0:
        return Identified("an Excel workbook (.xlsx, a zip archive of XML)", SAVE_AS_CSV)
    if data.find(b"application/vnd.oasis.opendocument.spreadsheet") >= 0:
        return Identified("an OpenDocument spreadsheet (.ods)", SAVE_AS_CSV)
    if data.find(b"word/document") >= 0 or data.find(b"application/vnd.oasis.opendocument.text") >= 0:
        return Identified("a word-processor document (.docx or .odt)",
                          "Copy the table into a spreadsheet and save it as 'CSV UTF-8', then use that file.")
    return Identified("a zip archive", "Unzip it first (`unzip FILE.zip`, or your system's Extract) and use the CSV, "
                                       "TSV or JSON Lines file inside.")


_MAGIC: tuple[tuple[bytes, Identified], ...] = (
    (b"\x1f\x8b", Identified("a gzip-compressed file", _DECOMPRESS.format(command="`gunzip FILE.gz`, or 7-Zip"))),
    (b"\xfd7zXZ\x00", Identified("an xz-compressed file", _DECOMPRESS.format(command="`unxz FILE.xz`"))),
    (b"\x28\xb5\x2f\xfd", Identified("a Zstandard-compressed file", _DECOMPRESS.format(command="`zstd -d FILE.zst`"))),
    (b"7z\xbc\xaf\x27\x1c", Identified("a 7-Zip archive", _DECOMPRESS.format(command="`7z x FILE.7z`"))),
    (b"Rar!\x1a\x07", Identified("a RAR archive", _DECOMPRESS.format(command="`unrar x FILE.rar`"))),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", Identified("an Excel 97-2003 workbook (.xls) or another old Office document",
                                                     SAVE_AS_CSV)),
    (b"%PDF-", Identified("a PDF document", "Copy the table into a spreadsheet and save it as 'CSV UTF-8', or export "
                                            "it from the program that made the PDF.")),
    (b"PAR1", Identified("a Parquet file", "Here give CSV, TSV or JSON Lines. A results file of `score --ray` "
                                           "(scores.parquet) is read by the Compare page when its name ends in "
                                           ".parquet; Parquet system outputs are read by `python -m bertscore_viz "
                                           "score --ray --input FILE.parquet`.")),
    (b"ARROW1", Identified("an Arrow/Feather file", "Write it out as CSV or JSON Lines (pandas: "
                                                   "`pd.read_feather(path).to_csv('out.csv', index=False)`).")),
    (b"SQLite format 3\x00", Identified("an SQLite database", "Export the table as CSV (`sqlite3 -csv -header DB "
                                                              "'select * from TABLE' > out.csv`).")),
    (b"\x89PNG\r\n\x1a\n", Identified("a PNG image", "Give the table itself as CSV, TSV or JSON Lines.")),
    (b"\xff\xd8\xff", Identified("a JPEG image", "Give the table itself as CSV, TSV or JSON Lines.")),
    (b"GIF8", Identified("a GIF image", "Give the table itself as CSV, TSV or JSON Lines.")),
)


def wide_encoding(data: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` from a byte-order mark, or from zero bytes in every other (fourth) byte of a
    text without one; None otherwise."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:4096]
    if len(head) >= 8 and head.count(0) < len(head):
        zeros = [head[i::4].count(0) / max(1, len(head[i::4])) for i in range(4)]
        if sum(z > 0.6 for z in zeros) >= 3:
            return "UTF-32"
        if (zeros[1] > 0.4 and zeros[3] > 0.4) or (zeros[0] > 0.4 and zeros[2] > 0.4):
            return "UTF-16"
    return None


def looks_binary(data: bytes) -> bool:
    """Binary data rather than text in some 8-bit encoding: a zero byte, or more than 1 in 100 bytes of the first
    8 kB being control characters other than tab, line ends and form feed."""
    head = data[:8192]
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = sum(head.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13)) + head.count(b"\x7f")
    return controls * 100 > len(head)


def identify_binary(data: bytes) -> Identified | None:
    """What the bytes are when a known non-text format (by its first bytes), else None (text, or unknown bytes:
    :func:`looks_binary` and :func:`wide_encoding` tell those apart)."""
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return _zip_kind(data)
    if data.startswith(b"BZh") and data[4:10] == b"1AY&SY":  # bzip2: its header, then the block magic
        return Identified("a bzip2-compressed file", _DECOMPRESS.format(command="`bunzip2 FILE.bz2`"))
    for magic, found in _MAGIC:
        if data.startswith(magic):
            # a printable signature ("%PDF-", "PAR1", "GIF8") may also begin a text: the rest must not be text
            if magic.isascii() and magic.decode("ascii").isprintable() and _text_like(data):
                return None
            return found
    return None


def _text_like(data: bytes) -> bool:
    """The first 64 kB are UTF-8 (a character cut at the end allowed) without control characters."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data[:65536], final=False)
    except UnicodeDecodeError:
        return False
    return not looks_binary(data)
