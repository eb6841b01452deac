"""Document ids and their folders in an index: which ids are usable, and one folder per id, never shared.

A folder name keeps an id's letters, digits, `.`, `_` and `-` and percent-encodes every other
character's UTF-8 bytes (`doc one` -> `doc%20one`, `%` itself -> `%25`). That is injective, so two
ids can never share a folder, and Chinese ids stay distinct (the earlier mapping replaced every
other character by `_`: `doc one` and `doc_one` shared `doc_one`, and so did any two Chinese ids of
the same length). Ids made only of the kept characters get the very folder they always had, so an
existing index loads unchanged; an id that had another character is found in its old folder through
`legacy_folder_name` (its meta.json names the id, so no other document's folder is ever taken).
"""

from __future__ import annotations

import hashlib
import re

_KEPT = re.compile(r"[A-Za-z0-9._-]")
_LEGACY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
# File names are limited to 255 bytes; a long Chinese id encodes to 9 bytes a character.
_MAX_NAME = 200


def id_problem(doc_id: str) -> str | None:
    """Why `doc_id` cannot name a document (None when it can); the text says what to do instead."""
    if not doc_id or not doc_id.strip():
        return "an empty id: give every document an id (e.g. its file name without .pdf)"
    if doc_id in (".", ".."):
        return f"id {doc_id!r} names a folder, not a document: give it an id of its own (e.g. its file name without .pdf)"
    if "/" in doc_id or "\\" in doc_id:
        suggestion = re.sub(r"[/\\]+", "_", doc_id).strip("_") or "doc"
        return (
            f"id {doc_id!r} contains a path separator: ids are names, not paths (e.g. {suggestion!r}); "
            "give the file's location in the catalog's path column instead"
        )
    if "\x00" in doc_id:
        return f"id {doc_id!r} contains a NUL character: remove it"
    return None


def folder_name(doc_id: str) -> str:
    """The id's folder under docs/: injective (see the module docstring). Raises ValueError on a bad id."""
    problem = id_problem(doc_id)
    if problem:
        raise ValueError(problem)
    name = "".join(ch if _KEPT.match(ch) else "".join(f"%{b:02X}" for b in ch.encode()) for ch in doc_id)
    if len(name) > _MAX_NAME:
        # '~' is never in an unshortened name, so a shortened one cannot equal any of those
        name = f"{name[: _MAX_NAME - 40]}~{hashlib.sha256(doc_id.encode()).hexdigest()[:32]}"
    return name


def legacy_folder_name(doc_id: str) -> str:
    """The folder an index built before the injective mapping used (not injective: check meta's doc_id)."""
    return _LEGACY_UNSAFE.sub("_", doc_id)


def folder_clash(doc_ids: list[str]) -> tuple[str, str] | None:
    """Two ids whose folders differ only in letter case, which one folder on a case-insensitive disk
    (macOS, Windows) would hold: an index is a folder a user may copy there. None when there is none."""
    seen: dict[str, str] = {}
    for doc_id in doc_ids:
        key = folder_name(doc_id).casefold()
        if key in seen and seen[key] != doc_id:
            return seen[key], doc_id
        seen.setdefault(key, doc_id)
    return None
