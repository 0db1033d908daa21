"""Which reader a path needs, from the names the two harnesses give their files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from clusterstats.readers.inspect_logs import is_inspect_log
from clusterstats.readers.lm_eval import is_samples_file

__all__ = ["log_format"]


def log_format(path: Any) -> str | None:
    """``"lm-eval"`` for lm-evaluation-harness samples (a ``samples_<task>_<date>.jsonl``
    file, or a folder holding one), ``"inspect"`` for inspect_ai logs (a ``.eval`` file or
    a ``.json`` log named by its timestamp, or a folder holding one), None otherwise; a
    folder holding both kinds is None, to be told with ``--format``."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    p = Path(path)
    if p.is_file():
        if is_samples_file(p):
            return "lm-eval"
        return "inspect" if is_inspect_log(p) else None
    if not p.is_dir():
        return None
    kinds = set()
    for file in p.rglob("*"):
        if file.is_file() and is_samples_file(file):
            kinds.add("lm-eval")
        elif file.is_file() and is_inspect_log(file):
            kinds.add("inspect")
        if len(kinds) > 1:
            return None
    return kinds.pop() if kinds else None
