"""The layers keep to their rooms.

* the numeric core imports numpy, scipy and the standard library only (never pandas/xarray);
* adapters turn input into designs and import no statistic module;
* no module imports another module's underscore names, except from the shared private
  modules (whose own name starts with an underscore);
* the facades ``api`` and ``results`` contain only imports;
* every accessor method is one line that hands the data to a statistic function;
* a one-row result declares its fields once: ``columns`` is derived from them;
* every public function documents every parameter in a numpy ``Parameters`` section;
* the statistics live in ``stats/`` and import no integration; only the adapters and
  readers ask which backend the data is;
* every result derives from ``Result`` or ``TableResult`` and none renders itself;
* the tests mirror the package's folders;
* the documented choices of an option are one of its vocabularies, spelled once;
* every public parameter that names a column is a role of ``Columns``, and each kind of
  design dispatches on the backend through one table.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from pathlib import Path

import pytest

import clusterstats
from clusterstats import _accessors
from clusterstats import _options as opt
from clusterstats._result import Result

PACKAGE = Path(clusterstats.__file__).parent
CORE = PACKAGE / "core"
ADAPTERS = PACKAGE / "adapters"
STATS = PACKAGE / "stats"
STATISTICS = {
    "judged",
    "judged_compare",
    "judged_plan",
    "mean",
    "paired",
    "comparison",
    "slices",
    "missing",
    "strata",
    "reruns",
    "planning",
    "diagnostics",
    "mixing",
    "sequential",
}
STDLIB = {
    "math",
    "typing",
    "dataclasses",
    "__future__",
    "collections",
    "numbers",
    "itertools",
    "importlib",  # core/_lazy.py: scipy imported when first used
}


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import statement (names empty for ``import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def test_core_imports_only_numpy_scipy_and_itself():
    files = sorted(CORE.glob("*.py"))
    assert files
    for path in files:
        for module, _ in imports(path):
            top = module.split(".")[0]
            assert top in {"numpy", "scipy", "clusterstats"} | STDLIB, f"{path.name}: {module}"
            if top == "clusterstats":
                assert module.startswith(("clusterstats.core", "clusterstats.errors")), (
                    f"{path.name} imports {module}"
                )


def test_adapters_import_no_statistic_module():
    for path in sorted(ADAPTERS.glob("*.py")):
        for module, names in imports(path):
            parts = module.split(".")
            if parts[0] != "clusterstats":
                continue
            assert parts[1:2] != ["stats"], f"{path.name}: {module}"
            assert module not in ("clusterstats.api", "clusterstats.results", "clusterstats.cli")
            if module == "clusterstats":
                assert "stats" not in names, f"{path.name}: {names}"


def test_the_statistics_live_in_the_stats_package_and_import_no_integration():
    """Every statistic module sits in ``clusterstats/stats/``; none imports an integration
    (the CLI, the gate, the Inspect and lm-eval paths, the pytest assertions, the readers)
    or a facade: integrations call statistics, never the reverse."""
    assert {p.stem for p in STATS.glob("*.py")} >= STATISTICS | {"formulas", "_policies"}
    assert not [name for name in STATISTICS if (PACKAGE / f"{name}.py").exists()]
    integrations = {
        "clusterstats.cli",
        "clusterstats.gating",
        "clusterstats.inspect",
        "clusterstats.harness",
        "clusterstats.testing",
        "clusterstats.readers",
        "clusterstats.api",
        "clusterstats.results",
    }
    for path in sorted(STATS.glob("*.py")):
        for module, names in imports(path):
            top = ".".join(module.split(".")[:2])
            assert top not in integrations, f"stats/{path.name}: {module}"
            if module == "clusterstats":
                assert not {f"clusterstats.{n}" for n in names} & integrations, path.name


def test_no_module_imports_another_modules_private_names():
    for path in modules():
        for module, names in imports(path):
            if not module.startswith("clusterstats"):
                continue
            private = [n for n in names if n.startswith("_") and n != "__version__"]
            shared = module.rsplit(".", 1)[-1].startswith("_")
            if module == "clusterstats.stats":
                # "from clusterstats.stats import _policies": the shared private module whole
                private = [n for n in private if not (STATS / f"{n}.py").exists()]
            if private and module != "clusterstats":
                assert shared, f"{module_name(path)} imports {private} from {module}"
            if module == "clusterstats":
                # "from clusterstats import _accessors": a private module is a whole module
                assert all(n.startswith("_") or n in dir(clusterstats) for n in names)


def test_facades_contain_only_imports():
    for name in ("api.py", "results.py"):
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]:
                continue
            raise AssertionError(f"{name} holds more than imports: {ast.unparse(node)[:80]}")


def _delegation(method) -> ast.Call:
    """The single call a method's body consists of (its docstring aside)."""
    source = textwrap.dedent(inspect.getsource(method))
    body = ast.parse(source).body[0].body
    statements = [
        node
        for node in body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    assert len(statements) == 1, method.__qualname__
    assert isinstance(statements[0], ast.Return), method.__qualname__
    call = statements[0].value
    assert isinstance(call, ast.Call), method.__qualname__
    return call


@pytest.mark.parametrize(
    "accessor",
    [_accessors.EvalAccessor, _accessors.DatasetEvalAccessor, _accessors.DaskEvalAccessor],
)
def test_accessor_methods_are_one_line_delegations(accessor):
    methods = [m for m in dir(accessor) if not m.startswith("_")]
    assert {"cluster_ci", "compare", "report", "check_clustering", "pass_at_k"} <= set(methods)
    for name in methods:
        call = _delegation(getattr(accessor, name))
        module, _, function = ast.unparse(call.func).partition(".")
        assert module in STATISTICS, name
        assert function == {"plan": "pilot_plan"}.get(name, name), name
        assert ast.unparse(call.args[0]) == "self._obj", name


def test_results_declare_their_fields_once():
    results = [
        obj
        for name in clusterstats.__all__
        if inspect.isclass(obj := getattr(clusterstats, name)) and issubclass(obj, Result)
    ]
    assert {r.__name__ for r in results} >= {"ClusterCI", "ICC", "PairedDelta", "PassAtK"}
    for cls in results:
        assert "columns" not in vars(cls), f"{cls.__name__} restates its columns"
        frame_fields = [f.name for f in dataclasses.fields(cls) if f.metadata.get("frame", True)]
        assert list(cls.columns) == frame_fields
        shown = {name for name, _ in cls._html}
        assert shown <= set(frame_fields), cls.__name__


def _documented_parameters(doc: str) -> set[str]:
    lines = textwrap.dedent(doc).split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Parameters")
    except StopIteration:
        return set()
    names: set[str] = set()
    for line in lines[start + 2 :]:
        if (
            line
            and not line.startswith(" ")
            and line.strip()
            in (
                "Returns",
                "Raises",
                "Warns",
                "Examples",
                "Notes",
                "See Also",
                "References",
            )
        ):
            break
        if line and not line.startswith(" "):
            head = line.split(" : ")[0]
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


PUBLIC_FUNCTIONS = [
    name for name in clusterstats.__all__ if inspect.isfunction(getattr(clusterstats, name))
] + [f"datasets.{n}" for n in ("list", "load", "info")]


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_every_public_function_documents_every_parameter(name):
    obj = clusterstats
    for part in name.split("."):
        obj = getattr(obj, part)
    parameters = set(inspect.signature(obj).parameters)
    doc = inspect.getdoc(obj) or ""
    # read_inspect needs a log written by inspect_ai; its example comes with the committed
    # fixture logs of the readers' rework.
    if name != "read_inspect":
        assert "Examples" in doc, f"{name} has no example"
    if parameters:
        missing = parameters - _documented_parameters(doc)
        assert not missing, f"{name}'s Parameters section misses {sorted(missing)}"


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_docstrings_cite_no_internal_material(name):
    obj = clusterstats
    for part in name.split("."):
        obj = getattr(obj, part)
    doc = inspect.getdoc(obj) or ""
    for internal in ("REPORT", "seed 0", "seed article", "Seed 0", "§"):
        assert internal not in doc, f"{name} cites internal material: {internal!r}"


def test_every_interval_method_is_a_named_construction():
    """The interval methods are a table of named constructions in the core: every method of
    the vocabulary but the ones resolved before (``auto``, the ``bootstrap`` alias, the
    unions with the score interval) has exactly one entry, and nothing else has one."""
    from clusterstats.core.constructions import CONSTRUCTIONS
    from clusterstats.core.intervals import METHODS, SCORE_UNIONS

    resolved_before = {"auto", "bootstrap", *SCORE_UNIONS}
    assert set(CONSTRUCTIONS) == set(METHODS) - resolved_before
    assert set(SCORE_UNIONS.values()) <= set(CONSTRUCTIONS)


def test_the_tests_mirror_the_folders():
    """Test files sit in the folders of what they test (none at the top of ``tests/``)."""
    tests = PACKAGE.parent / "tests"
    assert not sorted(p.name for p in tests.glob("test_*.py"))
    folders = {p.parent.relative_to(tests).as_posix() for p in tests.rglob("test_*.py")}
    expected = {"stats", "core", "adapters", "integrations", "conformance", "hostile", "repo"}
    assert folders == expected


def test_every_result_class_derives_from_result_or_table_result():
    """One-row results render from their fields (``Result``); tables from their declared
    blocks (``TableResult``): no result class writes its own text, HTML or Markdown."""
    from clusterstats import results
    from clusterstats._result import GroupedResults, TableResult

    for name in results.__all__:
        cls = getattr(results, name)
        if cls is GroupedResults or name == "DatasetInfo":
            continue
        assert issubclass(cls, (Result, TableResult)), name
        if issubclass(cls, TableResult):
            own = {"__repr__", "_repr_html_", "to_markdown"} & set(vars(cls))
            assert not own, f"{name} renders itself: {own}"


def test_only_adapters_and_readers_sniff_backends():
    """Which backend the data is (pandas, dask, xarray, Arrow) is decided in ``adapters/``
    (and the readers); a statistic, the gate or a result never asks. ``weights_for_mix``
    takes pandas only and says so (the one check of its kind, listed here)."""
    sniffs = re.compile(
        r"npartitions|data_vars|is_dask_frame|is_table\(|"
        r"isinstance\(\w+, *\(?(pd\.DataFrame|xr\.Dataset)|"
        # asking an object what it has: hasattr(data, "dims"), getattr(other, "columns", ...)
        r"(hasattr|getattr)\((data|other|baseline|frame|table|\w*_data), *['\"]"
        r"(dims|columns|coords|data_vars|npartitions|dtypes|schema|compute)['\"]"
    )
    allowed = {("stats/mixing.py", "if not isinstance(data, pd.DataFrame):")}
    for path in modules():
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(("adapters/", "readers/")):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.split("#")[0].strip()
            if code.startswith(">>>") or not sniffs.search(code):
                continue
            assert (relative, code) in allowed, f"{relative}: {code}"


def test_the_documented_choices_are_the_vocabularies():
    """A vocabulary is spelled once, in ``_options`` (its tuple derived from its Literal),
    and every public function's docstring offers exactly one of the vocabularies of that
    option: ``estimand : {"pooled", "cluster_mean"}`` cannot drift from the code."""

    vocabularies = {
        "estimand": {opt.ESTIMANDS, opt.STRATIFIED_ESTIMANDS},
        "missing": {opt.MISSING, opt.MISSING_OR_IPW},
        "how": {opt.ALIGNMENTS},
        "adjust": {opt.ADJUSTMENTS},
        "lonely": {opt.LONELY},
        "propensity": {opt.PROPENSITIES},
        "empty_clusters": {opt.EMPTY_CLUSTERS},
        "fewer_runs": {opt.FEWER_RUNS},
    }
    choice = re.compile(r"^\s{4}(\w+) : \{(.*)\}", re.MULTILINE)
    checked = 0
    for name in clusterstats.api.__all__:
        doc = inspect.getdoc(getattr(clusterstats.api, name)) or ""
        for option, listed in choice.findall("    " + doc.replace("\n", "\n    ")):
            if option not in vocabularies:
                continue
            offered = {value.strip().strip('"') for value in listed.split(",")}
            assert any(offered == set(v) for v in vocabularies[option]), (name, option, offered)
            checked += 1
    assert checked >= 20


# Public parameters whose description speaks of columns but that are not a column role of a
# statistic, each with why: the table itself; how the by= columns combine; the names shown
# for the two sides; one metric of a results file; the (case, rerun) layout conversion's own
# dims and coordinates; the shape simulate returns.
NOT_ROLES = {
    ("check_clustering", "data"),
    ("paired_delta", "data"),
    ("cluster_ci", "crossed"),
    ("compare", "crossed"),
    ("gate", "crossed"),
    ("paired_delta", "crossed"),
    ("paired_delta", "labels"),
    ("read_lm_eval", "metric"),
    ("to_case_rerun", "dims"),
    ("to_case_rerun", "coords"),
    ("simulate", "layout"),
}
# check_clustering's candidate groupings are the Columns role "groupings".
ROLE_OF = {"candidates": "groupings"}


def _parameter_descriptions(doc: str) -> dict[str, str]:
    section = re.search(r"Parameters\n-+\n(.*?)(\n\n[A-Z][a-z]+\n-+|\Z)", doc, re.S)
    if not section:
        return {}
    entries = re.finditer(r"^(\w+)(?: : [^\n]*)?\n((?:    [^\n]*\n?)*)", section.group(1), re.M)
    return {name: " ".join(text.split()) for name, text in (e.groups() for e in entries)}


def test_every_column_parameter_is_a_role():
    """A public parameter that names a column (its description says so in its first
    sentences) is a role of :class:`~clusterstats.adapters.labels.Columns`: the adapters
    read it, and check it, through the call's ``Columns``, so a new column option is a new
    role in one place, not a new keyword relayed through every backend."""
    from clusterstats.adapters.labels import _ROLES

    seen = set()
    for name in PUBLIC_FUNCTIONS:
        obj = clusterstats
        for part in name.split("."):
            obj = getattr(obj, part)
        for parameter, text in _parameter_descriptions(inspect.getdoc(obj) or "").items():
            if not re.search(r"\bcolumns?\b", text[:120], re.I):
                continue
            if (name, parameter) in NOT_ROLES:
                seen.add((name, parameter))
                continue
            role = ROLE_OF.get(parameter, parameter)
            assert role in _ROLES, f"{name}({parameter}=) names a column but is no Columns role"
    assert seen == NOT_ROLES, f"listed but no longer a column parameter: {NOT_ROLES - seen}"


def test_each_design_dispatches_through_one_table():
    """``adapters/__init__.py`` looks each backend up in one table per kind of design
    rather than testing ``kind ==`` in a chain (``compare``'s table holds the two layouts it
    slices and reduces: a dask DataFrame is computed and arrays refused before it)."""
    from clusterstats import adapters

    source = (ADAPTERS / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"\bkind\s*(==|in)\b", source)
    tables = {
        name: table
        for name, table in vars(adapters).items()
        if re.fullmatch(r"_[A-Z_]+", name) and isinstance(table, dict)
    }
    backends = {"pandas", "arrays", "dask", "xarray"}
    assert len(tables) == 9, sorted(tables)
    for name, table in tables.items():
        expected = {"pandas", "xarray"} if name == "_COMPARISON_DESIGNS" else backends
        assert set(table) == expected, name


def test_the_columns_travel_as_one_value_from_the_front():
    """Each public statistic builds its call's ``Columns`` once, at its front
    (``adapters.columns_of``), and every design entry of the adapters takes it as one value
    (``columns``) instead of the roles one by one; the options hold options only."""
    from clusterstats import adapters
    from clusterstats.adapters.labels import _ROLES

    entries = set(adapters.__all__) - {"backend", "is_dataset", "columns_of", "in_slice", "naming"}
    for name in entries:
        parameters = inspect.signature(getattr(adapters, name)).parameters
        assert "columns" in parameters, name
        assert not {"outcome", "by", "strata", "weights", "over", "case"} & set(parameters), name
    fronts = 0
    for name in PUBLIC_FUNCTIONS:
        if "." in name:  # the datasets' functions read no results
            continue
        body = inspect.getsource(getattr(clusterstats, name))
        if re.search(r"adapters\.(" + "|".join(sorted(entries)) + r")\(", body):
            assert body.count("columns_of(") == 1, name
            fronts += 1
    assert fronts >= 10
    for options in (opt.IntervalOptions, opt.PairedOptions, opt.SequenceOptions):
        roles = {f.name for f in dataclasses.fields(options)} & set(_ROLES)
        assert not roles, f"{options.__name__} holds column roles {roles}"


def _loaded_after(code: str) -> list[str]:
    """The clusterstats and scipy modules a fresh interpreter holds after ``code``."""
    import json
    import subprocess
    import sys

    report = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"], capture_output=True, text=True, check=True
    )
    return [
        name
        for name in json.loads(done.stdout.splitlines()[-1])
        if name.startswith(("clusterstats.", "scipy"))
    ]


def test_import_defers_the_statistics_adapters_and_scipy():
    """``import clusterstats`` registers the accessors and loads the errors and the bundled
    datasets' index only: no statistic, adapter, core module or scipy (start-up time, which
    ``benchmarks/startup.py`` measures). The first lookup of a public name, or the first
    accessor call, imports what it needs."""
    heavy = ("clusterstats.stats", "clusterstats.adapters", "scipy")
    loaded = _loaded_after("import clusterstats")
    assert not [m for m in loaded if m.startswith(heavy)], loaded
    assert {m for m in loaded if m.startswith("clusterstats.core.")} == {"clusterstats.core._lazy"}
    after_lookup = _loaded_after("import clusterstats; clusterstats.cluster_ci")
    assert "clusterstats.stats.mean" in after_lookup
    after_call = _loaded_after(
        "import pandas as pd, clusterstats\n"
        "pd.DataFrame({'y': [1.0, 0.0, 1.0, 1.0], 'g': [1, 1, 2, 2]}).eval.icc('y', by='g')"
    )
    assert "clusterstats.stats.mean" in after_call


def test_the_command_line_parser_imports_no_statistic():
    """``clusterstats --help`` and ``--version`` build the parser only: a sub-command's
    statistic loads when that sub-command runs."""
    loaded = _loaded_after("from clusterstats.cli import build_parser\nbuild_parser()")
    assert not [m for m in loaded if m.startswith(("clusterstats.stats", "scipy"))], loaded


def test_the_package_defers_exactly_the_names_it_declares():
    """``clusterstats/__init__.py`` imports its heavy names for type checkers only (under
    ``TYPE_CHECKING``) and looks them up through ``_DEFERRED`` at run time: the two lists are
    the same, and with the names imported at once they are ``__all__``."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    typed, eager = set(), set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            typed = {
                (statement.module, alias.name)
                for statement in node.body
                if isinstance(statement, ast.ImportFrom)
                for alias in statement.names
            }
        elif isinstance(node, ast.ImportFrom) and node.module != "typing":
            eager |= {alias.name for alias in node.names if not alias.name.startswith("_")}
    deferred = {(m, n) for m, names in clusterstats._DEFERRED.items() for n in names}
    assert typed == deferred
    assert set(clusterstats.__all__) == {n for _, n in deferred} | eager


def _module_table() -> list[str]:
    """The rows of the module table of ``docs/architecture.md`` (below "## The modules")."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The modules", 1)[1]
    return [line for line in section.splitlines() if line.startswith("| ") and ".py" in line]


def _modules_named(row: str) -> set[str]:
    """The modules a row of the table names: ``stats/: mean.py, paired.py`` and
    ``adapters/labels.py, layout.py`` name ``stats/mean.py``... (a bare name belongs to the
    folder of the list it is in, in its row: a folder followed by a colon, or a module with a
    folder);
    a folder alone (``core/``, ``readers/ (...)``) names all of it."""
    named: set[str] = set()
    folder = ""  # the description cell speaks of the modules of the list before it
    for cell in row.split("|"):
        for token, after in re.findall(r"`([\w/.]+)`(:?)", cell):
            if token.endswith("/"):
                folder = token if after else ""
                if not after:  # a folder alone, not the head of a list of its modules
                    named.add(token)
            elif token.endswith(".py"):
                if "/" in token:
                    folder = token.rsplit("/", 1)[0] + "/"
                    named.add(token)
                else:
                    named.add(folder + token)
    return named


def test_the_architecture_page_lists_exactly_the_modules_in_the_tree():
    named = set().union(*(_modules_named(row) for row in _module_table()))
    folders = {n for n in named if n.endswith("/")}
    tree = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}
    missing = sorted(
        m
        for m in tree
        if m not in named
        and not any(m.startswith(f) for f in folders if f.count("/") == m.count("/"))
    )
    assert not missing, f"docs/architecture.md's module table does not list {missing}"
    gone = sorted(n for n in named if not n.endswith("/") and n not in tree)
    assert not gone, f"docs/architecture.md's module table lists modules not in the tree: {gone}"
