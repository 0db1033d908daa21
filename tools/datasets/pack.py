"""Compress a dataset CSV built by one of the ``build_*.py`` scripts beside this file into the
form shipped in the package (``clusterstats/data/<name>.csv.xz``).

The bytes inside the ``.xz`` file are the CSV exactly as the build script wrote it, so the
SHA-256 recorded in ``clusterstats/data/PROVENANCE.md`` can be checked after decompression.
xz (LZMA) is read by pandas through Python's standard library, so no runtime dependency is
added. Deterministic: the same CSV always gives the same ``.xz`` bytes.

Usage, from the repository root, after building a CSV from its upstream source::

    python tools/datasets/build_tau_bench_airline.py <checkout of tau-bench> tau.csv
    python tools/datasets/pack.py tau.csv tau_bench_airline
"""

from __future__ import annotations

import hashlib
import lzma
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "clusterstats" / "data"
NAMES = (
    "mmlu_pro",
    "bbh",
    "cruxeval",
    "tau_bench_airline",
    "repoqa_snf",
    "hanna",
    "topicalchat",
)


def pack(csv_path: str, name: str) -> Path:
    if name not in NAMES:
        raise SystemExit(f"unknown dataset {name!r}; expected one of {', '.join(NAMES)}")
    raw = Path(csv_path).read_bytes()
    packed = lzma.compress(raw, format=lzma.FORMAT_XZ, preset=9 | lzma.PRESET_EXTREME)
    target = DATA / f"{name}.csv.xz"
    target.write_bytes(packed)
    print(
        f"{name}: {len(raw):,} bytes of CSV (sha256 {hashlib.sha256(raw).hexdigest()}) -> "
        f"{target.name}, {len(packed):,} bytes"
    )
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    pack(sys.argv[1], sys.argv[2])
