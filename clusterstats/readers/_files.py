"""Shared pieces of the eval-log readers: path arguments, and JSON that refuses what JSON
itself would silently lose (a key given twice)."""

from __future__ import annotations

import json
import os
import reprlib
from pathlib import Path
from typing import Any

from clusterstats.errors import FileReadError, InvalidInputError

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def paths(value: Any, parameter: str) -> list[Any]:
    """The items of a path-or-list argument."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (str, os.PathLike)):
        return [value]
    raise InvalidInputError(
        f"{parameter} must be a path, a folder or a list of these; got {reprlib.repr(value)} (of "
        f"type {type(value).__name__})"
    )


def listed(value: Any) -> str:
    """Paths for a message: one quoted, or a list of quoted ones."""
    if isinstance(value, (list, tuple)):
        return ", ".join(repr(str(item)) for item in value)
    return repr(str(value))


def unique(files: list[Any]) -> list[Any]:
    """Each file once, however often (and by whichever path) it was given: a file read twice
    would count every sample twice."""
    seen: set[Any] = set()
    kept = []
    for file in files:
        key = os.path.realpath(file) if isinstance(file, Path) else id(file)
        if key not in seen:
            seen.add(key)
            kept.append(file)
    return kept


class _DuplicateKey(ValueError):
    """A JSON object that names one key twice (raised while parsing, turned into a
    :class:`FileReadError` by the caller, which knows the file and line)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=...)`` that refuses a key given twice: JSON would
    keep only the last value, and the other would be lost unseen."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def shown(value: Any) -> str:
    """A value as JSON writes it (``null``, not ``None``), cut short: for messages."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def load_json(text: str, path: Any, where: str) -> Any:
    """``json.loads`` that refuses an object naming one key twice (JSON would keep only the
    last value, and the other would be lost unseen): a :class:`FileReadError` naming the
    file and ``where`` ("line 3"). Malformed JSON still raises ``json.JSONDecodeError``, for
    the caller to describe."""
    try:
        return json.loads(text, object_pairs_hook=_object_without_duplicates)
    except _DuplicateKey as duplicate:
        raise FileReadError(
            path,
            f"{where} has the key {duplicate.key!r} twice (JSON would keep only the last "
            "value); keep one",
        ) from None


def kind_of(value: Any) -> str:
    """A JSON value's kind for messages: "an object", "a list", "null", ..."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
    }
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")
