"""The notebook gallery runs in a real Jupyter kernel (nbclient + ipykernel).

Every cell must run without error; cells tagged ``result`` must display HTML (the
``_repr_html_`` of a clusterstats result), and cells tagged ``plot`` an inline PNG.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

GALLERY = Path(__file__).resolve().parents[2] / "docs" / "gallery"
NOTEBOOKS = sorted(GALLERY.glob("*.ipynb"))


def test_gallery_has_the_six_notebooks():
    assert [p.name for p in NOTEBOOKS] == [
        "01_getting_started.ipynb",
        "02_questions_per_document.ipynb",
        "03_agent_reruns.ipynb",
        "04_comparing_models.ipynb",
        "05_missing_responses.ipynb",
        "06_planning.ipynb",
    ]


def _shown(cell) -> list[str]:
    """What a code cell shows: its printed output and clusterstats' HTML (other HTML, such
    as xarray's with its random element ids, and images, whose bytes depend on the
    matplotlib build, only as their kind)."""
    shown = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            shown.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            data = output.get("data", {})
            page = data.get("text/html", "")
            shown.append(page if "clusterstats-result" in page else "html" if page else "")
            shown.append("image" if "image/png" in data else "")
    return shown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_in_a_kernel(path):
    notebook = nbformat.read(path, as_version=4)
    saved = [_shown(cell) for cell in notebook.cells if cell.cell_type == "code"]
    # committed with outputs, so that a code host shows them (tools/build_gallery.py)
    for cell in notebook.cells:
        if {"result", "plot"} & set(cell.metadata.get("tags", [])):
            assert _shown(cell), f"{path.name}: {cell.source!r} is saved without its output"
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(GALLERY)}},
    )
    client.execute()
    tagged = {"result": 0, "plot": 0}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs = cell.get("outputs", [])
        assert not [o for o in outputs if o.output_type == "error"], cell.source
        tags = cell.metadata.get("tags", [])
        data = [
            o.get("data", {})
            for o in outputs
            if o.output_type in ("execute_result", "display_data")
        ]
        if "result" in tags:
            tagged["result"] += 1
            html = [d["text/html"] for d in data if "text/html" in d]
            assert html, f"no HTML output for {cell.source!r}"
            assert "clusterstats" in html[0]
        if "plot" in tags:
            tagged["plot"] += 1
            assert any("image/png" in d for d in data), f"no inline image for {cell.source!r}"
    assert tagged["result"] >= 1
    rerun = [_shown(cell) for cell in notebook.cells if cell.cell_type == "code"]
    assert rerun == saved, f"{path.name}: the saved outputs are stale; run tools/build_gallery.py"
