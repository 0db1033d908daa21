"""The documentation is executable: run it.

* Every ```python block of every ``docs/*.md`` page (and of the README) runs, in order, in one
  namespace per page, in an empty temporary folder (the data come from
  ``clusterstats.datasets``, so a user who has only installed the package can run every page).
  Every ```bash (``sh``, ``shell``, ``console``) block runs too, in page order in the same
  folder, so a command reads the files the blocks above it wrote: each of its commands must be
  ``clusterstats ...`` (or ``python -m clusterstats ...``), run as ``python -m clusterstats``
  with the interpreter running the tests, and must exit 0 (or the status a
  ``<!-- exit status: N -->`` line just above the block names). A shell block that cannot run
  offline (``pip install``, ``git``) says so in a ``<!-- not run: reason -->`` line just above
  it; a shell block neither run nor marked fails the test, and so does a command written in a
  ```text block that is not a block's output. The pages run offline: HTTP(S) goes to a closed
  local port, so an example that would download something fails here rather than on a user's
  machine without a network.
  Where a ```text block follows a ```python or shell block (only blank lines between), what
  the block prints (a command's standard output, then its standard error, as a terminal shows
  them) must match it, up to trailing whitespace.
* ``docs/api.md`` is generated from the docstrings (mkdocstrings ``::: clusterstats.name``
  directives): it must render every public function, class and accessor, and the
  docstrings must describe every result field and table column.
* A number written in prose is followed by a hidden marker that computes it,
  ``148.5<!--={cot.n_eff:.1f}-->``: the marker is an f-string field evaluated in the page's
  namespace where it stands (after the blocks above it ran), and the text just before it
  must end with what it gives. Prose cannot drift from the outputs it describes.
* No page and no rendered docstring cites material outside the published package.
* The docstring examples of every ``clusterstats`` module must pass (``doctest``).

To refresh a page's output blocks after a deliberate change, run
``CLUSTERSTATS_UPDATE_DOCS=1 python -m pytest tests/repo/test_docs.py -k test_docs_page``, which
writes what each block prints into the ```text block after it, and review the diff; the
failure message of ``test_docs_page`` shows the expected and actual output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import doctest
import importlib
import inspect
import io
import math
import os
import pkgutil
import re
import shlex
import subprocess
import sys
import textwrap
import unicodedata
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import clusterstats
from clusterstats import errors, results
from clusterstats._accessors import DaskEvalAccessor, DatasetEvalAccessor, EvalAccessor
from clusterstats.core import intervals

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
RUNNABLE = [*PAGES, REPO / "README.md"]  # the README's example runs too
UPDATE = os.environ.get("CLUSTERSTATS_UPDATE_DOCS") == "1"


# A closed local port: an example that reaches for the network fails at once, as it would on
# a machine without one (the discard port; nothing listens there).
OFFLINE_PROXY = "http://127.0.0.1:9"
OFFLINE = {
    name: OFFLINE_PROXY
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
}


@pytest.fixture
def in_empty_folder(monkeypatch, tmp_path):
    """Run in an empty folder, offline, as a user who has only installed the package would."""
    monkeypatch.chdir(tmp_path)
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    # An empty tokenizer cache: a vocabulary cached by an earlier run with a network would hide
    # an example that needs it (Inspect's mock model counts tokens with tiktoken's).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / ".tiktoken-cache"))
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


SHELL = ("bash", "sh", "shell", "console")
# The line just above a block (blank lines aside) may say how the docs test treats it.
_NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>\S.*?)\s*-->\s*$")
_EXIT_STATUS = re.compile(r"^\s*<!--\s*exit status:\s*(?P<status>\d+)\s*-->\s*$")


def _line_above(lines: list[str], block: Block) -> str:
    """The nearest non-blank line above a block's opening fence ("" if none)."""
    for line in reversed(lines[: block.start]):
        if line.strip():
            return line
    return ""


def not_run_reason(lines: list[str], block: Block) -> str | None:
    """The reason a ``<!-- not run: reason -->`` line just above the block gives, if any."""
    found = _NOT_RUN.match(_line_above(lines, block))
    return found["reason"] if found else None


def expected_status(lines: list[str], block: Block) -> int:
    """The exit status a ``<!-- exit status: N -->`` line just above the block names (0)."""
    found = _EXIT_STATUS.match(_line_above(lines, block))
    return int(found["status"]) if found else 0


def _output_after(lines: list[str], blocks: list[Block], k: int) -> Block | None:
    """The ```text block that directly follows block ``k`` (only blank lines between)."""
    if k + 1 < len(blocks) and blocks[k + 1].lang == "text":
        between = lines[blocks[k].end + 1 : blocks[k + 1].start]
        if all(not line.strip() for line in between):
            return blocks[k + 1]
    return None


def examples(
    page: Path, languages: tuple[str, ...] = ("python",)
) -> list[tuple[Block, Block | None]]:
    """Each block in ``languages`` with the ```text block that directly follows it (or None),
    in page order; shell blocks marked ``<!-- not run: ... -->`` are left out."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = fenced_blocks("\n".join(lines))
    return [
        (block, _output_after(lines, blocks, k))
        for k, block in enumerate(blocks)
        if block.lang in languages
        and not (block.lang in SHELL and not_run_reason(lines, block) is not None)
    ]


_CLI = (["clusterstats"], ["python", "-m", "clusterstats"], ["python3", "-m", "clusterstats"])
_SHELL_SYNTAX = {"|", "||", "&&", "&", ";", ">", ">>", "<", "2>", "2>&1"}


def shell_commands(code: str) -> list[list[str]]:
    """The ``clusterstats`` arguments of each command of a shell block.

    A ``$ `` prompt is dropped, a line ending in a backslash continues on the next, and
    comments are dropped. A command that is not ``clusterstats ...`` (or ``python -m
    clusterstats ...``), or that needs a shell (a pipe, a redirection, a glob), raises
    ``ValueError``: mark its block ``<!-- not run: reason -->`` instead.
    """
    commands, pending = [], ""
    for raw in code.split("\n"):
        line = raw.strip()
        line = line[2:] if line.startswith("$ ") else line
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        words = shlex.split(pending + line, comments=True)
        pending = ""
        if not words:
            continue
        prefix = next((p for p in _CLI if words[: len(p)] == p), None)
        if prefix is None:
            raise ValueError(f"not a clusterstats command: {' '.join(words)!r}")
        syntax = [w for w in words if w in _SHELL_SYNTAX or any(c in w for c in "*?[")]
        if syntax:
            raise ValueError(f"needs a shell ({' '.join(syntax)}): {' '.join(words)!r}")
        commands.append(words[len(prefix) :])
    if pending.strip():
        raise ValueError(f"a continuation line ends the block: {pending.strip()!r}")
    return commands


def run_shell_block(code: str, folder: Path, status: int = 0) -> str:
    """Run a shell block's commands in ``folder``, offline, with this interpreter's
    clusterstats; returns what they print (standard output, then standard error, as a
    terminal shows the command line's output and its ``warning:`` lines after it)."""
    environment = {**os.environ, **OFFLINE, "MPLBACKEND": "Agg"}
    for name in ("NO_PROXY", "no_proxy"):
        environment.pop(name, None)
    printed = []
    for arguments in shell_commands(code):
        done = subprocess.run(
            [sys.executable, "-m", "clusterstats", *arguments],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        command = shlex.join(["clusterstats", *arguments])
        assert done.returncode == status, (
            f"`{command}` exited {done.returncode}, not {status}:\n{done.stderr}"
        )
        printed += [done.stdout, done.stderr]
    return "".join(printed)


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip("\n")


# -- the pages -------------------------------------------------------------------------------


def test_prose_numbers_are_checked_where_the_issue_found_drift():
    # the getting-started page and the README state numbers of their outputs in prose
    for page in (DOCS / "getting-started.md", REPO / "README.md", DOCS / "planning.md"):
        assert len(prose_numbers(page)) >= 3, page.name


def test_prose_number_markers_catch_a_drifted_number(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```python\nx = 2.5\n```\n\nIt is 2.4<!--={x:.1f}--> and 2.5<!--={x:.1f}-->.\n")
    failures: list[str] = []
    namespace: dict = {}
    numbers = prose_numbers(page)
    exec("x = 2.5", namespace)
    _check_prose(numbers, namespace, page, math.inf, failures)
    assert len(failures) == 1
    assert "says '2.4'" in failures[0]


def test_shell_blocks_are_read_as_a_terminal_reads_them():
    code = "$ clusterstats ci a.csv \\\n  --outcome y --by g  # why\n\npython -m clusterstats demo"
    assert shell_commands(code) == [["ci", "a.csv", "--outcome", "y", "--by", "g"], ["demo"]]
    with pytest.raises(ValueError, match="not a clusterstats command"):
        shell_commands("pip install clusterstats")
    for code in ("clusterstats ci *.csv", "clusterstats demo | head"):
        with pytest.raises(ValueError, match="needs a shell"):
            shell_commands(code)


def test_a_shell_block_is_run_marked_or_a_failure(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- not run: installs a package -->\n```bash\npip install x\n```\n\n"
        "```bash\nclusterstats datasets\n```\n\n```bash\ngit clone x\n```\n"
    )
    run = [block.code for block, _ in examples(page, SHELL)]
    assert run == ["clusterstats datasets", "git clone x"]  # the marked block is left out
    with pytest.raises(ValueError, match="not a clusterstats command: 'git clone x'"):
        shell_commands(run[1])


def test_a_shell_block_runs_offline_and_its_status_is_checked(tmp_path):
    printed = run_shell_block("clusterstats datasets", tmp_path)
    assert "mmlu_pro" in printed
    with pytest.raises(AssertionError, match="exited 2, not 0"):
        run_shell_block("clusterstats ci nope.csv --outcome y --by g", tmp_path)
    printed = run_shell_block("clusterstats ci nope.csv --outcome y --by g", tmp_path, status=2)
    assert printed.strip() == "clusterstats: error: cannot read 'nope.csv': no such file"


def test_the_mock_model_left_to_itself_needs_the_network_as_the_inspect_page_says(
    in_empty_folder,
):
    """docs/inspect.md gives the mock model its answers with their token usage because,
    without them, it downloads a tokenizer: when Inspect stops doing that, simplify the page."""
    inspect_ai = pytest.importorskip("inspect_ai")
    from inspect_ai.dataset import Sample

    task = inspect_ai.Task(dataset=[Sample(input="question 0", target="Default")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Inspect's own, of its retries
        (log,) = inspect_ai.eval(task, model="mockllm/model", log_dir="logs", display="none")
    host = "openaipublic.blob.core.windows.net"
    assert log.status == "error"
    assert host in log.error.message
    page = " ".join((DOCS / "inspect.md").read_text(encoding="utf-8").split())
    assert f"without a network the run ends in a `ConnectionError` naming `{host}`" in page


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


# ``<!--={expression:format}-->`` right after a number in prose: the text it checks is the
# run of non-space characters before it.
_PROSE_NUMBER = re.compile(r"(\S*)<!--=\{(.+?)\}-->")


def prose_numbers(page: Path) -> list[tuple[int, str, str]]:
    """``(line, written, field)`` for each checked number outside code blocks."""
    lines = page.read_text(encoding="utf-8").split("\n")
    inside = set()
    for block in fenced_blocks("\n".join(lines)):
        inside.update(range(block.start, block.end + 1))
    return [
        (i, m[1], m[2])
        for i, line in enumerate(lines)
        if i not in inside
        for m in _PROSE_NUMBER.finditer(line)
    ]


def _check_prose(numbers, namespace, page, before: float, failures: list[str]) -> None:
    """Check (and drop from ``numbers``) the prose numbers above line ``before``."""
    while numbers and numbers[0][0] < before:
        line, written, field = numbers.pop(0)
        value = eval('f"""{' + field + '}"""', namespace)  # the marker's f-string field
        if not written.endswith(value):
            failures.append(
                f"{page.name}, line {line + 1}: the prose says {written!r}, {field} is {value!r}"
            )


def _run_python(block: Block, page: Path, namespace: dict) -> str:
    # Leading newlines keep traceback line numbers equal to the page's line numbers.
    source = "\n" * (block.start + 1) + block.code
    stdout = io.StringIO()
    with warnings.catch_warnings():
        # Same rule as pyproject: a clusterstats warning that an example does not handle
        # itself is an error (examples that demonstrate warnings catch them explicitly).
        warnings.simplefilter("error", clusterstats.ClusterStatsWarning)
        # A library's deprecation notices about its own calls, which a user's script does
        # not show either (Python shows DeprecationWarning only for the script's own code).
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"inspect_ai\.")
        with contextlib.redirect_stdout(stdout):
            exec(compile(source, str(page), "exec"), namespace)
    return stdout.getvalue()


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_docs_page(page: Path, in_empty_folder):
    namespace: dict = {"__name__": f"docs.{page.stem}"}
    mismatches = []
    replacements = []
    numbers = prose_numbers(page)
    lines = page.read_text(encoding="utf-8").split("\n")
    for block, expected in examples(page, ("python", *SHELL)):
        _check_prose(numbers, namespace, page, block.start, mismatches)
        if block.lang == "python":
            printed = _run_python(block, page, namespace)
        else:
            try:
                shell_commands(block.code)
            except ValueError as problem:
                pytest.fail(
                    f"{page.name}, line {block.start + 1}: {problem}; a shell block that "
                    "cannot run offline says why in a `<!-- not run: reason -->` line above it"
                )
            printed = run_shell_block(block.code, in_empty_folder, expected_status(lines, block))
        if expected is None:
            continue
        want, got = normalise(expected.code), normalise(printed)
        if want != got and UPDATE:
            replacements.append((expected, got))
        elif want != got:
            diff = "\n".join(
                difflib.unified_diff(
                    want.split("\n"), got.split("\n"), "documented", "printed", lineterm=""
                )
            )
            mismatches.append(f"{page.name}, block at line {block.start + 1}:\n{diff}")
    _check_prose(numbers, namespace, page, math.inf, mismatches)
    if replacements:
        lines = page.read_text(encoding="utf-8").split("\n")
        for block, printed in sorted(replacements, key=lambda r: -r[0].start):
            lines[block.start + 1 : block.end] = printed.split("\n")
        page.write_text("\n".join(lines), encoding="utf-8")
    assert not mismatches, "documented output differs:\n\n" + "\n\n".join(mismatches)


# The first line of a command a reader would type (a shell prompt, this package, an installer).
_COMMAND_LINE = re.compile(r"^\s*(\$ |clusterstats |python3? -m |pip |git |inspect )")


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_no_command_hides_in_a_text_block(page: Path):
    """A command shown in a ```text block would escape the run above: a command is a shell
    block (run, or marked ``<!-- not run: reason -->``), or its text block carries the mark."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = fenced_blocks("\n".join(lines))
    hidden = []
    for k, block in enumerate(blocks):
        if block.lang not in ("text", ""):
            continue
        is_output = k > 0 and blocks[k - 1].lang in ("python", *SHELL)
        if is_output and _output_after(lines, blocks, k - 1) is block:
            continue
        first = next((line for line in block.code.split("\n") if line.strip()), "")
        if _COMMAND_LINE.match(first) and not_run_reason(lines, block) is None:
            hidden.append(f"line {block.start + 1}: {first.strip()}")
    assert not hidden, f"{page.name} shows commands in text blocks: {hidden}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading (and Python-Markdown's: both keep underscores)."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _outside_code(text: str) -> str:
    for block in fenced_blocks(text):  # headings inside code blocks are not headings
        text = text.replace(block.code, "")
    return text


def _anchors(page: Path) -> set[str]:
    """The anchors of a page: one per heading, and one per object that mkdocstrings renders
    (``::: clusterstats.plan`` is the anchor ``clusterstats.plan``; a rendered module's
    public members get ``clusterstats.errors.AlignmentError`` and the like)."""
    text = _outside_code(page.read_text(encoding="utf-8"))
    anchors = {_slug(m[1]) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}
    for path in _directives(page):
        anchors.add(path)
        anchors.update(f"{path}.{name}" for name, _ in _members(_resolve(path)))
    return anchors


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


# -- the API reference is generated from the docstrings ---------------------------------------

API = DOCS / "api.md"
_DIRECTIVE = re.compile(r"^:::\s+([\w.]+)\s*$", re.M)


def _directives(page: Path) -> list[str]:
    """The objects a page renders with mkdocstrings (``::: clusterstats.cluster_ci``)."""
    return _DIRECTIVE.findall(_outside_code(page.read_text(encoding="utf-8")))


def _resolve(path: str) -> Any:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)


def _members(obj: Any) -> list[tuple[str, Any]]:
    """What a directive renders besides its object: a module's public names (``__all__``)."""
    if inspect.ismodule(obj):
        return [(name, getattr(obj, name)) for name in getattr(obj, "__all__", [])]
    return []


def _documented() -> list[Any]:
    """Every object rendered on the API page, with the members of rendered modules."""
    found = []
    for path in _directives(API):
        obj = _resolve(path)
        found += [obj, *(member for _, member in _members(obj))]
    return found


def test_api_directives_resolve_to_objects():
    paths = _directives(API)
    assert paths, "docs/api.md has no ::: directive"
    assert len(paths) == len(set(paths)), "an object is rendered twice on docs/api.md"
    for path in paths:
        _resolve(path)  # raises when the directive names nothing


def _public_objects() -> list[tuple[str, Any]]:
    """Every public function and class: ``clusterstats.__all__``, the bundled datasets'
    functions, the result classes and the three accessors."""
    objects = []
    for name in clusterstats.__all__:
        obj = getattr(clusterstats, name)
        if inspect.ismodule(obj):  # clusterstats.datasets
            objects += [(f"{name}.{n}", getattr(obj, n)) for n in obj.__all__]
        else:
            objects.append((name, obj))
    objects += [(name, getattr(results, name)) for name in results.__all__]
    objects += [
        (cls.__name__, cls) for cls in (EvalAccessor, DatasetEvalAccessor, DaskEvalAccessor)
    ]
    return objects


PUBLIC_OBJECTS = _public_objects()


@pytest.mark.parametrize(("name", "obj"), PUBLIC_OBJECTS, ids=[n for n, _ in PUBLIC_OBJECTS])
def test_api_renders_every_public_name(name, obj):
    assert any(obj is documented for documented in _documented()), (
        f"docs/api.md has no ::: directive for {name}"
    )


def test_accessor_methods_name_their_function():
    for accessor in (EvalAccessor, DatasetEvalAccessor, DaskEvalAccessor):
        methods = [m for m in dir(accessor) if not m.startswith("_")]
        for method in methods:
            function = {"plan": "pilot_plan"}.get(method, method)
            doc = inspect.getdoc(getattr(accessor, method)) or ""
            assert f"clusterstats.{function}" in doc, f"{accessor.__name__}.{method}"
        assert "eval" in (inspect.getdoc(accessor.__call__) or ""), accessor.__name__


def test_docs_describe_every_method_and_error():
    methods = (DOCS / "estimands-and-methods.md").read_text(encoding="utf-8")
    for method in intervals.METHODS:
        assert f"`{method}`" in methods or f'"{method}"' in methods, method
    for name in errors.__all__:
        if name != "warn":
            assert f"`{name}`" in methods, f"estimands-and-methods.md does not cover {name}"


def _section_names(doc: str, section: str) -> set[str]:
    """The names a numpy section (``Attributes``, ``Parameters``) documents."""
    lines = textwrap.dedent(doc).split("\n")
    names: set[str] = set()
    for start, line in enumerate(lines[:-1]):
        if line.strip() == section and set(lines[start + 1].strip()) == {"-"}:
            break
    else:
        return names
    for i in range(start + 2, len(lines)):
        line = lines[i]
        heading = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        if line and not line.startswith(" ") and heading:
            break  # the next section
        if line and not line.startswith(" "):
            names.update(n.strip() for n in line.split(" : ")[0].split(","))
    return names


RESULTS = [getattr(results, name) for name in results.__all__]


@pytest.mark.parametrize("cls", RESULTS, ids=lambda c: c.__name__)
def test_result_docstrings_describe_every_field(cls):
    fields = {f.name for f in dataclasses.fields(cls)}
    missing = fields - _section_names(inspect.getdoc(cls) or "", "Attributes")
    assert not missing, f"{cls.__name__}'s Attributes section misses {sorted(missing)}"


ONE_ROW = [
    clusterstats.ClusterCI,
    clusterstats.ICC,
    clusterstats.DesignEffect,
    clusterstats.PairedDelta,
    clusterstats.PassAtK,
    clusterstats.Flakiness,
]


@pytest.mark.parametrize("cls", ONE_ROW, ids=lambda c: c.__name__)
def test_one_row_results_document_their_columns(cls):
    missing = set(cls.columns) - _section_names(inspect.getdoc(cls) or "", "Attributes")
    assert not missing, f"{cls.__name__} does not document the columns {sorted(missing)}"


TABLES = {
    clusterstats.Comparison: (
        clusterstats.Comparison.LEADERBOARD_COLUMNS + clusterstats.Comparison.PAIR_COLUMNS
    ),
    clusterstats.MissingReport: clusterstats.MissingReport.columns,
    clusterstats.Plan: clusterstats.Plan.columns,
    clusterstats.Report: clusterstats.Report.columns,
    clusterstats.ClusteringCheck: clusterstats.ClusteringCheck.columns,
}


@pytest.mark.parametrize("cls", list(TABLES), ids=lambda c: c.__name__)
def test_table_results_document_their_columns(cls):
    docs = [inspect.getdoc(cls) or ""] + [
        inspect.getdoc(member) or ""
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_")
    ]
    text = "\n".join(docs)
    missing = [column for column in TABLES[cls] if f"``{column}``" not in text]
    assert not missing, f"{cls.__name__} does not document the columns {missing}"


def test_grouped_results_document_the_mapping():
    doc = inspect.getdoc(clusterstats.GroupedResults) or ""
    for member in ("sel(", "items()", "to_frame()", "to_xarray()", "dims", "plot()"):
        assert member in doc, member
    assert "sorted label order" in doc


# Material that lives outside the published package and its sources.
INTERNAL = ("REPORT", "seed 0", "Seed 0", "seed article", "§")
PUBLISHED_PAGES = [p for p in PAGES if not p.name.startswith("coverage")]


@pytest.mark.parametrize("page", PUBLISHED_PAGES, ids=[p.name for p in PUBLISHED_PAGES])
def test_docs_cite_no_internal_material(page: Path):
    text = page.read_text(encoding="utf-8")
    found = [word for word in INTERNAL if word in text]
    assert not found, f"{page.name} cites internal material: {found}"


def _rendered_docstrings() -> list[tuple[str, str]]:
    """The docstrings the API page renders: each object's, and its public members'."""
    docs = []
    for path in _directives(API):
        obj = _resolve(path)
        docs.append((path, inspect.getdoc(obj) or ""))
        methods = [
            (name, inspect.getattr_static(obj, name))
            for name in (dir(obj) if inspect.isclass(obj) else [])
            if not name.startswith("_") or name == "__call__"
        ]
        for name, member in _members(obj) + methods:
            if callable(member) or isinstance(member, property):
                docs.append((f"{path}.{name}", inspect.getdoc(member) or ""))
    return docs


def test_rendered_docstrings_cite_no_internal_material():
    for path, doc in _rendered_docstrings():
        found = [word for word in INTERNAL if word in doc]
        assert not found, f"{path} cites internal material: {found}"


def test_documented_auto_rule_and_thresholds_match_the_code():
    # docs/estimands-and-methods.md ("How method="auto" chooses") states this rule, the
    # 2,000-cluster switch and the 20-cluster threshold; when auto_method is revised, revise
    # that section too.
    for g in (2, 5, 19, 20, 30, 1000, 2000, 2001, 100_000):
        assert intervals.auto_method(is_binary=True, n_clusters=g) == "korn_graubard_hybrid"
        ratio = intervals.auto_method(is_binary=True, n_clusters=g, uneven_ratio=True)
        assert ratio == ("korn_graubard_hybrid_or_score" if g >= 20 else "korn_graubard_hybrid")
        expected = "bootstrap_t" if g <= 2000 else "cr2"
        assert intervals.auto_method(is_binary=False, n_clusters=g) == expected
        assert intervals.auto_method(is_binary=False, n_clusters=g, uneven_ratio=True) == expected
    assert intervals.AUTO_BOOTSTRAP_MAX_CLUSTERS == 2000
    assert intervals.FEW_CLUSTERS == 20
    text = (DOCS / "estimands-and-methods.md").read_text()
    assert "**binary outcome → `korn_graubard_hybrid`**" in text
    ratio_rule = (
        "**binary outcome, `pooled` estimand, 20 or more clusters of uneven sizes → "
        "`korn_graubard_hybrid_or_score`**"
    )
    assert ratio_rule in " ".join(text.split())
    rule = "`bootstrap_t`** (never narrower than `cr3_ik`) up to 2,000 clusters, **`cr2`** above"
    assert rule in " ".join(text.split())


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


def _power_checks() -> list[dict[str, str]]:
    """The table of docs/power-real-data.md, one dict per check."""
    lines = [
        ln for ln in (DOCS / "power-real-data.md").read_text().splitlines() if ln.startswith("|")
    ]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [
        dict(zip(header, (c.strip() for c in ln.strip("|").split("|")), strict=True))
        for ln in lines[2:]
    ]


def test_planning_prose_states_the_power_study_as_measured():
    # the planning page's sentences about realised power are read from the study's page
    text = " ".join((DOCS / "planning.md").read_text().split())
    checks = _power_checks()
    old = next(c for c in checks if c["check"] == "MMLU-Pro Llama-8B − Mixtral-8x7B by src")
    k_old, power_old = old["mean-size plan: K, power"].split(", ")
    assert f"said {k_old} sources; drawing {k_old} sources" in text
    assert f"gave the default test {float(power_old.rstrip('%')):.0f}% power" in text
    checked = [c for c in checks if c["realised power"].endswith("%")]
    gap = {
        c["check"]: float(c["realised power"].rstrip("%")) - float(c["promised power"].rstrip("%"))
        for c in checked
    }

    def planned(c: dict[str, str]) -> int:
        return int(c["planned K"].replace(",", ""))

    # no plan asks for fewer than 20 clusters; those at 20 are judged apart
    assert min(planned(c) for c in checks) >= 20
    large = [gap[c["check"]] for c in checked if planned(c) > 20]
    floor = [c for c in checked if planned(c) == 20]
    floor_gaps = [gap[c["check"]] for c in floor]
    assert (
        f"within {-min(large):.1f} points below to {max(large):.1f} points above "
        f"({len(large)} checks" in text
    )
    assert (
        f"plans of 20 deliver within {-min(floor_gaps):.1f} points below to "
        f"{max(floor_gaps):.1f} above ({len(floor)} checks)" in text
    )
    # the BBH rates, whose pilot interval is the union, projected without its excess width
    bbh_rates = ("BBH cot by task", "BBH direct by task")
    bbh = [float(c["realised power"][:-1]) for c in checked if c["check"].startswith(bbh_rates)]
    assert f"those plans deliver {min(bbh):.1f}–{max(bbh):.1f}% where 80% is promised" in text
    # the floor check whose sources are most uneven, named in the prose
    uneven = next(
        c for c in floor if c["check"] == "MMLU-Pro Mixtral-8x7B − gemini-1.5-flash-002 by src"
    )
    assert (
        f"the plan promises {float(uneven['promised power'][:-1]):.0f}% there and "
        f"{float(uneven['realised power'][:-1]):.0f}% is realised" in text
    )


def test_methods_prose_states_the_real_data_study_as_measured():
    # the sentences about the real-data study are read from its committed cells
    import pandas as pd

    cells = pd.read_csv(DOCS / "coverage-real-data.csv")
    default = cells[cells["default"].astype(bool)]
    large, ten = default[default.K >= 20], default[default.K == 10]
    worst = {kind: large[large.kind == kind].coverage.min() for kind in large.kind.unique()}
    methods = " ".join((DOCS / "estimands-and-methods.md").read_text().split())
    paired = " ".join((DOCS / "paired.md").read_text().split())
    hybrid = cells[(cells.K >= 20) & (cells.method == "korn_graubard_hybrid")]
    before = hybrid[hybrid.kind == "rate"].coverage.min()
    assert (
        f"the binary default's worst cell is {worst['rate']:.2f}% (the hybrid alone: "
        f"{before:.2f}%" in methods
    )
    assert f"{worst['paired']:.1f}% for paired differences" in methods
    floor = math.floor(10 * min(worst["score"], worst["rerun"])) / 10
    assert f"at least {floor:.1f}% for scores and rerun statistics" in methods
    ten_paired = ten[ten.kind == "paired"].coverage.min()
    assert f"a paired difference falls to {ten_paired:.2f}%" in methods
    page = " ".join((DOCS / "coverage-real-data.md").read_text().split())
    ratio = float(re.search(r"1\.15 × CR2's \| ([\d.]+) \|", page).group(1))
    assert f"at a mean width {ratio:.2f} times CR2's" in methods
    chance = re.search(
        r"\| paired: worst K ≥ 20 cell ≥ 94 \|[^|]*\|[^|]*\|[^|]*probability ([\d.]+)\)", page
    )
    assert f"is as low with probability {chance.group(1)})" in methods
    now, then = re.search(r"1\.15 × CR2's \| ([\d.]+) \| ([\d.]+) \|", page).group(1, 2)
    assert (
        f"from {before:.2f}% (the hybrid alone) to {worst['rate']:.2f}%, at a mean width over "
        f"all cells of {now} times CR2's (the hybrid's {then})" in methods
    )
    cr2 = cells[(cells.kind == "paired") & (cells.method == "cr2") & (cells.K >= 20)]
    worst_cr2 = cr2.coverage.min()
    said = f"worst cell is {worst['paired']:.1f}% with 20 or more clusters, where CR2's is"
    assert f"{said} {worst_cr2:.1f}%" in paired
    assert f"it falls to {ten_paired:.2f}%" in paired


def test_methods_prose_states_the_score_coverage_as_measured():
    # the bootstrap_t paragraph of the methods page, read from the coverage study's cells
    import pandas as pd

    cells = pd.read_csv(DOCS / "coverage.csv")
    scores = cells[cells.family == "scores"]
    large, ten = scores[scores.n_clusters >= 20], scores[scores.n_clusters == 10]

    def worst(part, method):
        rows = part[part.method == method]
        return 100 * rows.coverage.min(), (100 * rows.groupby("outcome").coverage.min()).to_dict()

    boot, boot_by = worst(large, "bootstrap_t")
    _, cr2_by = worst(large, "cr2")
    _, boot10 = worst(ten, "bootstrap_t")
    _, cr2_10 = worst(ten, "cr2")
    keys = ["outcome", "n_clusters", "cluster_size", "size_cv", "mean", "icc"]
    widths = large.pivot_table(index=keys, columns="method", values="median_width")
    ratio = (widths["bootstrap_t"] / widths["cr2"]).groupby(level=0).mean()
    normal = cells[cells.family == "continuous"]
    text = " ".join((DOCS / "estimands-and-methods.md").read_text().split())
    n_cells = len(large[large.method == "bootstrap_t"])
    assert (
        f"over the {n_cells} cells of those three score models with 20 or more clusters, its "
        f"worst cell is {boot:.1f}% (judge scores {boot_by['judge']:.1f}%, ROUGE-like "
        f"{boot_by['rouge']:.1f}%, zero-inflated rewards {boot_by['reward']:.1f}%) where CR2's "
        f"is {cr2_by['judge']:.1f}%, {cr2_by['rouge']:.1f}% and {cr2_by['reward']:.1f}%, and "
        f"{min(boot10.values()):.1f}–{max(boot10.values()):.1f}% with 10 clusters where CR2's "
        f"is {min(cr2_10.values()):.0f}–{max(cr2_10.values()):.0f}%; the price is width "
        f"({ratio.min():.2f}–{ratio.max():.2f} times CR2's on average) and over-coverage where "
        "the cluster means are bimodal (up to "
        f"{100 * large[large.method == 'bootstrap_t'].coverage.max():.1f}%)" in text
    )
    boot_n, cr2_n = (normal[normal.method == m].coverage * 100 for m in ("bootstrap_t", "cr2"))
    assert (
        f"it covers {boot_n.min():.1f}–{boot_n.max():.1f}% where CR2 covers "
        f"{cr2_n.min():.1f}–{cr2_n.max():.1f}%" in text
    )


def test_methods_prose_states_the_score_candidate_as_measured():
    # the paragraph on the cluster score interval, read from the real-data study's cells
    import pandas as pd

    cells = pd.read_csv(DOCS / "coverage-real-data.csv")
    large = cells[cells.K >= 20]
    rates = large[large.method == "hybrid_or_score"].coverage.min()
    paired = large[(large.kind == "paired") & (large.method == "bootstrap_t_or_score")]
    ten = cells[(cells.K == 10) & (cells.kind == "paired")]
    paired10 = ten[ten.method == "bootstrap_t_or_score"].coverage.min()
    score = cells[cells.method == "score"]
    zero = int((score.zero_width > 0).sum())
    page = " ".join((DOCS / "coverage-real-data.md").read_text().split())
    union20, default20 = re.search(
        r"cells with K ≥ 20 \(no target\) \| ([\d.]+) \| [\d.]+ \| [\d.]+ \| ([\d.]+) \|", page
    ).group(2, 1)
    text = " ".join((DOCS / "estimands-and-methods.md").read_text().split())
    assert (
        f"has a worst cell of {rates:g}% for rates and {paired.coverage.min():g}% for paired "
        f"differences with 20 or more clusters, and {paired10:g}% for a paired difference with "
        f"10 clusters, at {union20} times CR2's width with 20 or more clusters, against the "
        f"default's {default20};" in text
    )
    assert f"it has zero width in {zero} real-data cells" in text
    paired_prose = " ".join((DOCS / "paired.md").read_text().split())
    assert (
        f"covers at least {paired.coverage.min():g}% there with 20 or more clusters and "
        f"{paired10:g}% with 10" in paired_prose
    )
    paired_page = (DOCS / "coverage-paired.md").read_text()
    worst_score = re.search(r"\| `score_inverted` \| ([\d.]+) \|", paired_page).group(1)
    assert f"falls to {worst_score}% where a few clusters carry every discordant item" in text
    # the paired union on the simulated grid, read from the paired study's summary table
    union = {
        k: re.search(
            rf"\| {k} \| `bootstrap_t_or_score` \| ([\d.]+) \| .*? \| ([\d.]+) \| "
            r"([\d.]+) \|",
            paired_page,
        ).groups()
        for k in ("≥ 20", "10")
    }
    worst20, gap20, width20 = union["≥ 20"]
    default_gap = re.search(
        r"\| ≥ 20 \| `bootstrap_t` \(default\) \| [\d.]+ \| .*? \| ([\d.]+) \|", paired_page
    ).group(1)
    assert f"(the goal is 1.5; `bootstrap_t`'s {default_gap})" in text
    assert (
        f"paired union's worst cell with 20 or more clusters is {worst20}% but its mean gap to "
        f"95% is {gap20} points" in text
    )
    assert f"at {width20} times CR2's width, and {union['10'][2]} times with 10 clusters" in text
    assert (
        f"covers at least {worst20}% with 20 or more clusters, but over-covers on average (a "
        f"mean gap to 95% of {gap20} points" in paired_prose
    )
    assert f"at {width20} times CR2's width, and {union['10'][2]} times" in paired_prose


def _rates_figures() -> dict[str, str]:
    """The figures the methods page states from docs/coverage-rates.csv (K >= 20 unless said)."""
    import pandas as pd

    cells = pd.read_csv(DOCS / "coverage-rates.csv")
    large = cells[cells.K >= 20]

    def worst(method: str, family: str) -> str:
        sel = large[(large.method == method) & (large.family == family)]
        return f"{sel.coverage.min():.1f}"

    def gaps(method: str) -> str:
        sel = large[(large.method == method) & (large.family == "beta")]
        found = sorted((sel.coverage - 95).abs().groupby(sel.estimand).mean())
        return f"{found[0]:.2f}–{found[-1]:.2f}"

    def widths(method: str, base: str) -> str:
        beta = cells[cells.family == "beta"]
        key = ["estimand", "K", "m", "size_cv", "mean", "icc"]
        mine = beta[beta.method == method].set_index(key).mean_width
        other = beta[beta.method == base].set_index(key).mean_width
        ratio = (mine / other)[other > 0].groupby(level="estimand").mean()
        found = sorted(ratio)
        return f"{found[0]:.2f}–{found[-1]:.2f}"

    # the default's cells: the column method="auto" resolves to in each cell
    auto = cells[
        cells.method
        == cells.apply(
            lambda r: intervals.auto_method(
                is_binary=True,
                n_clusters=int(r.K),
                uneven_ratio=r.estimand == "pooled" and r.size_cv > 0,
            ).replace("korn_graubard_hybrid_or_score", "hybrid_or_score"),
            axis=1,
        )
    ].assign(method="auto")
    cells = pd.concat([cells, auto])
    large = cells[cells.K >= 20]
    return {
        "auto_beta": worst("auto", "beta"),
        "auto_logit": worst("auto", "logit_normal"),
        "auto_size": worst("auto", "size_difficulty"),
        "auto_gap": gaps("auto"),
        "auto_width": widths("auto", "korn_graubard_hybrid"),
        "inverted_gap": gaps("korn_graubard_inverted"),
        "hybrid_beta": worst("korn_graubard_hybrid", "beta"),
        "hybrid_logit": worst("korn_graubard_hybrid", "logit_normal"),
        "hybrid_size": worst("korn_graubard_hybrid", "size_difficulty"),
        "hybrid_gap": gaps("korn_graubard_hybrid"),
        "hybrid_width": widths("korn_graubard_hybrid", "korn_graubard_inverted"),
        "union_beta": worst("hybrid_or_score", "beta"),
        "union_gap": gaps("hybrid_or_score"),
        "union_width": widths("hybrid_or_score", "korn_graubard_hybrid"),
    }


def test_methods_prose_states_the_rates_grid_as_measured():
    # the hybrid's and the union's figures on the simulated rates grid, read from its cells
    f = _rates_figures()
    text = " ".join((DOCS / "estimands-and-methods.md").read_text().split())
    assert (
        f"is {f['hybrid_beta']}% (beta rates), {f['hybrid_logit']}% (logit-normal rates) and "
        f"{f['hybrid_size']}% (size related to difficulty), its mean gap to 95% "
        f"{f['hybrid_gap']} points (beta rates), at {f['hybrid_width']} times the inverted "
        "interval's width" in text
    )
    assert (
        f"worst cell with 20 or more clusters is {f['auto_beta']}% (beta rates), "
        f"{f['auto_logit']}% (logit-normal rates) and {f['auto_size']}% (size related to "
        f"difficulty), but it over-covers: its mean gap to 95% is {f['auto_gap']} points (beta "
        f"rates), the hybrid's {f['hybrid_gap']} and the model-based inversion's "
        f"{f['inverted_gap']}, at {f['auto_width']} times the hybrid's width" in text
    )
    assert (
        f"worst cell with 20 or more clusters is {f['union_beta']}% (beta rates) and its mean "
        f"gap to 95% {f['union_gap']} points, at {f['union_width']} times the hybrid's width"
        in text
    )


def test_the_api_page_says_where_each_listed_function_is_defined():
    """``docs/api.md`` is readable in the repository: its table names, for each function it
    lists, the module that defines it (the module holds ``def <name>(``)."""
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\s*\| (\[`\w+`\].*?) \| .*? \| `([\w/]+\.py)` \|$", page, re.M)
    assert len(rows) >= 10
    for names, module in rows:
        source = (DOCS.parent / module).read_text(encoding="utf-8")
        for name in re.findall(r"\[`(\w+)`\]", names):
            assert f"\ndef {name}(" in source, (name, module)
