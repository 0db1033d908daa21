"""Render the images of ``docs/plots.md``, ``docs/sequential.md`` and ``docs/leaderboards.md``
by running the pages.

Usage (from the repository root)::

    python tools/render_plots.py

Each ```python block of a page runs in order, in one namespace per page, with
``docs/img/plots/`` as the working folder, so the ``savefig`` calls of the page write the
images the page shows (the test suite runs the same blocks in an empty folder).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "repo"))

from test_docs import examples  # noqa: E402  (the suite's own parser)

PAGES = ("plots.md", "sequential.md", "leaderboards.md")


def main() -> int:
    target = REPO / "docs" / "img" / "plots"
    target.mkdir(parents=True, exist_ok=True)
    previous = Path.cwd()
    os.chdir(target)
    try:
        for name in PAGES:
            page = REPO / "docs" / name
            namespace: dict = {}
            for block, _ in examples(page):
                with contextlib.redirect_stdout(sys.stderr):
                    exec(compile(block.code, str(page), "exec"), namespace)
    finally:
        os.chdir(previous)
    for image in sorted(target.glob("*.png")):
        print(f"{image.relative_to(REPO)}: {image.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
