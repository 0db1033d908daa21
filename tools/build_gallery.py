"""Write the notebooks of ``docs/gallery/``, executed in a real Jupyter kernel and saved
with their outputs, so that a reader on a code host sees the tables and plots (the test
suite runs them again and checks that the saved outputs are the ones the code gives).

Cells tagged ``result`` must display one of clusterstats' results (HTML in Jupyter); cells
tagged ``plot`` must draw a figure inline.

Usage::

    python tools/build_gallery.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

GALLERY = Path(__file__).resolve().parents[1] / "docs" / "gallery"

# The notebooks read the datasets bundled with the package, so they run anywhere.
SETUP = """\
import warnings

import clusterstats

warnings.simplefilter("ignore", clusterstats.ClusterStatsWarning)"""


def code(source: str, *tags: str):
    cell = new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


NOTEBOOKS = {
    "01_getting_started.ipynb": [
        new_markdown_cell(
            "# Getting started\n\nThe MMLU-Pro results bundled with the package: four models on "
            "the same 12,032 questions, drawn from 91 sources of 17 to 1,003 questions. Questions "
            "from one source move together, so the source is the cluster."
        ),
        code("import clusterstats\n\ndf = clusterstats.load_demo_data()\ndf.head()"),
        code(
            'mixtral = df[df.model == "Mixtral-8x7B-Instruct-v0.1"]\n'
            'mixtral.eval.cluster_ci("correct", by="src")',
            "result",
        ),
        code(
            'by_model = df.eval.cluster_ci("correct", by="src", over="model")\nby_model', "result"
        ),
        new_markdown_cell(
            "The forest plot puts the clustered interval (thick) above the naive one that "
            "treats every question as independent (thin)."
        ),
        code("by_model.plot();", "plot"),
    ],
    "02_questions_per_document.ipynb": [
        new_markdown_cell(
            "# Many questions per document\n\nIn a RAG eval, many questions are written from "
            "one document; in MMLU-Pro, many questions come from one source. How much do the "
            "questions of one source move together, and which grouping should the interval "
            "use?"
        ),
        code(
            SETUP + '\ndf = clusterstats.datasets.load("mmlu_pro")\n'
            'llama = df[df.model == "Meta-Llama-3.1-8B-Instruct"]'
        ),
        code('llama.eval.icc("correct", by="src")', "result"),
        code('llama.eval.design_effect("correct", by="src")', "result"),
        code('llama.eval.check_clustering("correct", ["src", "category"])', "result"),
        code('llama.eval.report("correct", "src")', "result"),
    ],
    "03_agent_reruns.ipynb": [
        new_markdown_cell(
            "# Agent reruns: pass^k and flakiness\n\nτ-bench airline: 50 tasks, 4 trials each, "
            "tasks nested in 34 simulated users. The (case, rerun) layout lives in an xarray "
            "Dataset."
        ),
        code(
            SETUP.replace("import warnings\n", "import warnings\n\nimport pandas as pd\n")
            + '\ntau = clusterstats.datasets.load("tau_bench_airline")\n'
            'ds = clusterstats.to_case_rerun(tau, case="task_id", rerun="trial", '
            'outcome="reward")\nds'
        ),
        code('ds.eval.cluster_ci("reward", "user_id")', "result"),
        code('ds.eval.pass_hat_k("reward", k=4)', "result"),
        code(
            'rows = [ds.eval.pass_hat_k("reward", k=k).to_dict() for k in range(1, 5)]\n'
            'pd.DataFrame(rows)[["statistic", "k", "estimate", "low", "high", "method"]]'
        ),
        code('ds.eval.flakiness("reward")', "result"),
    ],
    "04_comparing_models.ipynb": [
        new_markdown_cell(
            "# Comparing models\n\nEvery pair of the four models on the same questions, with "
            "Holm-adjusted p-values, and a leaderboard with simultaneous rank sets, tiers and "
            "the models that could be first."
        ),
        code(
            "import clusterstats\n\ndf = clusterstats.load_demo_data()\n"
            'comparison = df.eval.compare("correct", by="src", model="model", '
            'on="question_id", rng=0)\ncomparison',
            "result",
        ),
        code(
            'a = df[df.model == "Meta-Llama-3.1-8B-Instruct"]\n'
            'b = df[df.model == "Mixtral-8x7B-Instruct-v0.1"]\n'
            'a.eval.paired_delta(b, "correct", by="src", on="question_id")',
            "result",
        ),
    ],
    "05_missing_responses.ipynb": [
        new_markdown_cell(
            "# Missing responses\n\nMixtral-8x7B gave no extractable answer on 1,426 MMLU-Pro "
            "questions. Where are they, and how much could they change the answer?"
        ),
        code(
            SETUP + '\ndf = clusterstats.datasets.load("mmlu_pro")\n'
            'df["answered"] = df.pred_missing == 0\n'
            'mixtral = df[df.model == "Mixtral-8x7B-Instruct-v0.1"]'
        ),
        code('mixtral.eval.missing_report("correct", "src", responded="answered")', "result"),
        code(
            'mixtral.eval.cluster_ci("correct", by="src", responded="answered", missing="ipw")',
            "result",
        ),
    ],
    "06_planning.ipynb": [
        new_markdown_cell(
            "# Planning the next budget\n\nFrom a pilot: how many more sources would a ±2-point "
            "interval need, and what does doubling the budget buy?"
        ),
        code(
            "import clusterstats\n\ndf = clusterstats.load_demo_data()\n"
            'pilot = df[df.model == "Mixtral-8x7B-Instruct-v0.1"]\n'
            'plan = pilot.eval.plan("correct", "src", target_half_width=0.02,\n'
            "                       cost_per_cluster=50, cost_per_row=1)\nplan",
            "result",
        ),
        code("plan.plot();", "plot"),
    ],
}


def main() -> int:
    GALLERY.mkdir(parents=True, exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=cells)
        for index, cell in enumerate(notebook.cells):  # stable ids: rebuilding changes nothing
            cell["id"] = f"{Path(name).stem[:2]}-{index:02d}"
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nbclient.NotebookClient(
            notebook,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(GALLERY)}},
            record_timing=False,  # no timestamps: a rebuild changes only what changed
        ).execute()
        nbformat.write(notebook, GALLERY / name)
        print(f"wrote docs/gallery/{name}, executed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
