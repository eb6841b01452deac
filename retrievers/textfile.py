"""Read a user's text file (a catalog, a query list) in the encoding it was saved in.

Tried strictly, in order: UTF-8 (with or without a BOM), UTF-16 with a BOM (Excel's "Unicode
text"), GB18030 (a superset of GBK/GB2312, what Excel saves a Chinese CSV in), then Windows-1252 /
Latin-1. Bytes that are not UTF-8 often decode as GB18030 too, so GB18030 is taken only when the
text reads as Chinese: at least 90% of its non-ASCII characters are GB2312 characters (both bytes
0xA1-0xFE, the 7,445 common hanzi and CJK punctuation). Latin-1 text almost never passes: an
accented letter is one high byte followed by an ASCII one. charset-normalizer would guess among
many more encodings, but a guess that is wrong gives silently wrong ids; this order is explainable.
"""

from __future__ import annotations

import codecs
import logging
from pathlib import Path

from signatures.errors import BadInput

log = logging.getLogger(__name__)

CHINESE_SHARE = 0.9
_FIX = "save it as UTF-8 (in Excel: Save As > CSV UTF-8; in an editor: Save with Encoding > UTF-8)"


class EncodingProblem(BadInput):  # a ValueError too, as before
    """The file's bytes fit none of the encodings tried; the message says how to fix it."""


def read_text(path: str | Path) -> str:
    path = Path(path)
    data = path.read_bytes()
    text, encoding = decode(data)
    if text is None:
        raise EncodingProblem(f"{path} is neither UTF-8, GB18030/GBK nor Latin-1 text: {_FIX}")
    if encoding not in ("utf-8", "utf-16"):
        log.warning("read %s as %s (not UTF-8); if any name looks garbled, %s", path, encoding, _FIX)
    return text


def decode(data: bytes) -> tuple[str | None, str]:
    """(text, encoding name); (None, "") when no encoding fits."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            return None, ""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        text = None
    if text is not None and _reads_as_chinese(text):
        return text, "GB18030"
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text:  # binary or UTF-16 without a BOM: not text in this encoding
            return text, "Latin-1 (Windows-1252)" if encoding == "cp1252" else "Latin-1"
    return None, ""


def _reads_as_chinese(text: str) -> bool:
    wide = [ch for ch in text if ord(ch) > 0x7F]
    if not wide:
        return True

    def gb2312(ch: str) -> bool:
        raw = ch.encode("gb18030")
        return len(raw) == 2 and raw[0] >= 0xA1 and raw[1] >= 0xA1

    return sum(map(gb2312, wide)) >= CHINESE_SHARE * len(wide)
