"""The documentation is executable: run it.

* Every ```python block of every ``docs/*.md`` page runs, in order, in one namespace per page,
  in an empty temporary folder (the data come from ``clusterstats.datasets``, so a user who
  has only installed the package can run every page).
  Where a ```text block follows a ```python block (only blank lines between), the block's
  printed output must match it, up to trailing whitespace.
* ``docs/api.md`` must mention every public name, signature, result field and column.
* The docstring examples of every ``clusterstats`` module must pass (``doctest``).

To refresh a page's output blocks after a deliberate change, run its blocks and paste what
they print; the failure message of ``test_docs_page`` shows the expected and actual output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import doctest
import importlib
import inspect
import io
import json
import pkgutil
import re
import unicodedata
import warnings
from pathlib import Path
from typing import NamedTuple

import pytest

import clusterstats
from clusterstats import errors
from clusterstats._accessors import EvalAccessor
from clusterstats.core import intervals

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
RUNNABLE = [*PAGES, REPO / "README.md"]  # the README's example runs too


@pytest.fixture
def in_empty_folder(monkeypatch, tmp_path):
    """Run in an empty folder, as a user who has only installed the package would."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- parsing Markdown fences (CommonMark) ---------------------------------------------------

_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class Block(NamedTuple):
    lang: str  # first word of the info string ("" if none)
    code: str
    start: int  # 0-based line index of the opening fence
    end: int  # 0-based line index of the closing fence (or len(lines) if unclosed)


def fenced_blocks(text: str) -> list[Block]:
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence = m["fence"]
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        info = m["info"].strip()
        blocks.append(Block(info.split()[0] if info else "", "\n".join(lines[i + 1 : j]), i, j))
        i = j + 1
    return blocks


def examples(page: Path) -> list[tuple[Block, Block | None]]:
    """Each ```python block with the ```text block that directly follows it (or None)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = fenced_blocks("\n".join(lines))
    pairs = []
    for k, block in enumerate(blocks):
        if block.lang != "python":
            continue
        output = None
        if k + 1 < len(blocks) and blocks[k + 1].lang == "text":
            between = lines[block.end + 1 : blocks[k + 1].start]
            if all(not line.strip() for line in between):
                output = blocks[k + 1]
        pairs.append((block, output))
    return pairs


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip("\n")


# -- the pages -------------------------------------------------------------------------------


def test_docs_exist():
    names = {p.name for p in PAGES}
    assert {
        "index.md",
        "getting-started.md",
        "estimands-and-methods.md",
        "api.md",
        "cli.md",
    } <= names
    assert all(
        examples(DOCS / name)
        for name in ("getting-started.md", "estimands-and-methods.md", "api.md")
    )


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_docs_page(page: Path, in_empty_folder):
    namespace: dict = {"__name__": f"docs.{page.stem}"}
    mismatches = []
    for block, expected in examples(page):
        # Leading newlines keep traceback line numbers equal to the page's line numbers.
        source = "\n" * (block.start + 1) + block.code
        stdout = io.StringIO()
        with warnings.catch_warnings():
            # Same rule as pyproject: a clusterstats warning that an example does not handle
            # itself is an error (examples that demonstrate warnings catch them explicitly).
            warnings.simplefilter("error", clusterstats.ClusterStatsWarning)
            with contextlib.redirect_stdout(stdout):
                exec(compile(source, str(page), "exec"), namespace)
        if expected is None:
            continue
        want, got = normalise(expected.code), normalise(stdout.getvalue())
        if want != got:
            diff = "\n".join(
                difflib.unified_diff(
                    want.split("\n"), got.split("\n"), "documented", "printed", lineterm=""
                )
            )
            mismatches.append(f"{page.name}, block at line {block.start + 1}:\n{diff}")
    assert not mismatches, "documented output differs:\n\n" + "\n\n".join(mismatches)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    for block in fenced_blocks(text):  # headings inside code blocks are not headings
        text = text.replace(block.code, "")
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_docs_links_resolve(page: Path):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path) if path else page
        assert linked.exists(), f"{page.name} links to missing {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{page.name} links to missing anchor {target}"


def test_index_links_the_pages():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in ("getting-started.md", "estimands-and-methods.md", "api.md"):
        assert f"]({name})" in text, f"index.md does not link {name}"


# -- the API reference matches the code ------------------------------------------------------

API = DOCS / "api.md"


def _api_text() -> str:
    return API.read_text(encoding="utf-8")


def _render_signature(func, skip_self: bool = False) -> str:
    parts, star = [], False
    for p in inspect.signature(func).parameters.values():
        if skip_self and p.name == "self":
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append("*" + p.name)
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        text = p.name
        if p.default is not p.empty:
            d = p.default
            text += "=" + (json.dumps(d) if isinstance(d, str) else repr(d))
        parts.append(text)
    return "(" + ", ".join(parts) + ")"


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_api_mentions_every_public_name():
    text = _api_text()
    missing = [name for name in clusterstats.__all__ if f"`{name}`" not in text]
    assert not missing, f"docs/api.md does not mention {missing}"


@pytest.mark.parametrize(
    "cls",
    [clusterstats.ClusterCI, clusterstats.ICC, clusterstats.DesignEffect, clusterstats.PairedDelta],
    ids=lambda c: c.__name__,
)
def test_api_lists_every_column_and_field(cls):
    text = _api_text()
    names = list(cls.columns) + [f.name for f in dataclasses.fields(cls)]
    missing = sorted({c for c in names if f"`{c}`" not in text})
    assert not missing, f"docs/api.md does not mention {cls.__name__} columns {missing}"
    assert set(cls.columns) == {f.name for f in dataclasses.fields(cls)}


def test_api_lists_grouped_results_members():
    text = _api_text()
    names = [f.name for f in dataclasses.fields(clusterstats.GroupedResults)] + [
        "items()",
        "to_frame()",
    ]
    assert all(f"`{n}`" in text for n in names)


def test_api_signatures_match_the_code():
    text = _squash(_api_text())
    functions = [
        name for name in clusterstats.__all__ if inspect.isfunction(getattr(clusterstats, name))
    ]
    assert functions, "no public functions found"
    for name in functions:
        sig = f"clusterstats.{name}{_render_signature(getattr(clusterstats, name))}"
        assert _squash(sig) in text, f"docs/api.md lacks the signature {sig}"
    for name in ("cluster_ci", "icc", "design_effect"):
        sig = f"df.eval.{name}{_render_signature(getattr(EvalAccessor, name), skip_self=True)}"
        assert _squash(sig) in text, f"docs/api.md lacks the signature {sig}"


def test_docs_describe_every_method_and_error():
    api, methods = _api_text(), (DOCS / "estimands-and-methods.md").read_text(encoding="utf-8")
    for method in intervals.METHODS:
        assert f'"{method}"' in api, f"api.md does not list method {method!r}"
        assert f"`{method}`" in methods or f'"{method}"' in methods, method
    for name in errors.__all__:
        if name != "warn":
            assert f"`{name}`" in methods, f"estimands-and-methods.md does not cover {name}"


def test_documented_auto_rule_and_thresholds_match_the_code():
    # docs/estimands-and-methods.md ("How method="auto" chooses") states this rule and the
    # 20-cluster threshold; when auto_method is revised, revise that section too.
    for g in (2, 5, 19, 20, 30, 1000):
        assert intervals.auto_method(is_binary=True, n_clusters=g) == "korn_graubard_guarded"
        assert intervals.auto_method(is_binary=False, n_clusters=g) == "cr2"
    assert intervals.FEW_CLUSTERS == 20


# -- docstring examples ----------------------------------------------------------------------

# ``__main__`` modules run the command line on import, so they are not doctested.
MODULES = [
    "clusterstats",
    *sorted(
        m.name
        for m in pkgutil.walk_packages(clusterstats.__path__, "clusterstats.")
        if m.name.rpartition(".")[2] != "__main__"
    ),
]


@pytest.mark.parametrize("module_name", MODULES)
def test_doctests(module_name):
    """The docstring examples of every module pass."""
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, report=True, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
