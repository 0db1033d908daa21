"""The documentation site builds in strict mode (warnings are errors): MkDocs Material, the
API reference from the docstrings (mkdocstrings), and the gallery executed and rendered
with its outputs (mkdocs-jupyter)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterstats._docstrings import PASSAGES

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocs_jupyter")

REPO = Path(__file__).resolve().parents[2]


def test_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The API reference is one page generated from the docstrings: every ::: directive of
    # docs/api.md became a heading whose id is the object's path (the anchors other pages
    # link to), with the docstring's sections rendered.
    api = (site / "api" / "index.html").read_text()
    directives = re.findall(r"^:::\s+([\w.]+)\s*$", (REPO / "docs" / "api.md").read_text(), re.M)
    assert "clusterstats.cluster_ci" in directives
    for path in directives:
        assert f'id="{path}"' in api, f"api/index.html does not render {path}"
    assert 'id="clusterstats._accessors.DatasetEvalAccessor.pass_hat_k"' in api
    assert 'id="clusterstats.errors.AlignmentError"' in api
    for section in ("Parameters:", "Returns:", "Raises:", "Attributes:", "Examples:"):
        assert section in api, section
    assert "n_missing_clusters" in api  # a field described in ClusterCI's Attributes
    # The passages several result methods share (clusterstats/_docstrings.py) are filled in
    # the sources griffe reads by tools/griffe_shared_docstrings.py: no placeholder is left,
    # and a shared parameter renders as a row of its method's Parameters table.
    for name in PASSAGES:
        assert f"{{{name}}}" not in api, name
    for method, parameter, text in (
        ("GroupedResults.plot", "percent", "Show the values as percentages."),
        ("ClusterCI.plot", "ax", "Where to draw (a new figure by default)."),
        ("GateReport.to_metrics", "prefix", "Put before every key,"),
    ):
        # from the method's heading to the next heading
        section = api.split(f'id="clusterstats.{method}"', 1)[1].split("doc-heading", 2)[1]
        assert f"<code>{parameter}</code>" in section, method
        assert text in section, method
    assert not (site / "reference").exists()
    notebook = (site / "gallery" / "01_getting_started" / "index.html").read_text()
    assert "clusterstats-result" in notebook  # the result's HTML, rendered from execution
    assert "data:image/png" in notebook or "image/png" in notebook
    assert (site / "coverage" / "index.html").exists()
