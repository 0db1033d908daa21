"""Re-run the examples of docs pages and rewrite their output blocks.

Usage (from the repository root)::

    python tools/refresh_docs.py docs/estimands-and-methods.md [README.md ...]

Each ```python block runs in order, one namespace per page, in an empty temporary folder (as
``tests/repo/test_docs.py`` runs them); a ```text block that directly follows it is replaced by
what the block printed. On ``docs/cli.md`` the ```bash blocks run instead, as
``tests/integrations/test_cli.py`` runs them (the ``clusterstats`` command, in order, in one
empty folder).
Review the diff: the test suite then holds the pages to it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "repo"))

from test_docs import examples, fenced_blocks  # noqa: E402  (the suite's own parser)


def refresh_commands(page: Path) -> int:
    """Rewrite the ```text block after each ```bash block with what the command prints."""
    import shlex

    from clusterstats.cli import main

    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = fenced_blocks("\n".join(lines))
    replacements = []
    for block, after in itertools.pairwise(blocks):
        if block.lang != "bash" or after.lang != "text":
            continue
        argv = shlex.split(block.code)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            main(argv[1:])
        new = [line.rstrip() for line in printed.getvalue().rstrip("\n").split("\n")]
        replacements.append((after.start + 1, after.end, new))
    for start, end, new in reversed(replacements):
        lines[start:end] = new
    page.write_text("\n".join(lines), encoding="utf-8")
    return len(replacements)


def refresh(page: Path) -> int:
    if page.name == "cli.md":
        return refresh_commands(page)
    lines = page.read_text(encoding="utf-8").split("\n")
    namespace: dict = {"__name__": f"docs.{page.stem}"}
    replacements = []
    for block, output in examples(page):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block.code, f"{page.name}:{block.start + 1}", "exec"), namespace)
        if output is not None:
            new = [line.rstrip() for line in printed.getvalue().rstrip("\n").split("\n")]
            replacements.append((output.start + 1, output.end, new))
    for start, end, new in reversed(replacements):
        lines[start:end] = new
    page.write_text("\n".join(lines), encoding="utf-8")
    return len(replacements)


if __name__ == "__main__":
    import os
    import tempfile

    pages = [Path(name).resolve() for name in sys.argv[1:]]
    with tempfile.TemporaryDirectory() as empty:
        os.chdir(empty)
        for page in pages:
            print(f"{page.relative_to(REPO)}: {refresh(page)} output blocks rewritten")
