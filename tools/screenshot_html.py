"""Render the notebook HTML of every result class in a real headless browser and keep a
screenshot in the docs (``docs/img/html/results.png``).

Usage (from the repository root; needs Debian's ``chromium`` package, or any Chromium or
Chrome binary given with ``--browser``)::

    python tools/screenshot_html.py

The page shows each result's ``_repr_html_()`` as Jupyter would, with no stylesheet of its
own: what a reader sees is the inline styling the results carry (right-aligned numbers, a
caption, shaded rows, notes under the table). ``tests/repo/test_html_render.py`` renders the
same page when a browser is installed.
"""

from __future__ import annotations

import argparse
import html
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHOT = REPO / "docs" / "img" / "html" / "results.png"
FIXTURES = REPO / "tests" / "fixtures" / "lm_eval"


def results() -> dict[str, object]:
    """One result of each class, from the bundled data."""
    import clusterstats as cs

    mmlu = cs.load_demo_data()
    llama, gemini = (
        mmlu[mmlu.model == m] for m in ("Meta-Llama-3.1-70B-Instruct", "gemini-1.5-flash-002")
    )
    full = cs.datasets.load("mmlu_pro")  # with the pred_missing column
    mixtral = full[full.model == "Mixtral-8x7B-Instruct-v0.1"]
    tau = cs.datasets.load("tau_bench_airline")
    bbh = cs.datasets.load("bbh")
    hanna = cs.datasets.load("hanna").query("criterion == 'Coherence'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return {
            "ClusterCI": cs.cluster_ci(gemini, "correct", by="src"),
            "GroupedResults (ClusterCI over model)": cs.cluster_ci(
                mmlu, "correct", by="src", over="model"
            ),
            "PairedDelta": cs.paired_delta(llama, gemini, "correct", by="src", on="question_id"),
            "Comparison": cs.compare(mmlu, "correct", by="src", model="model", on="question_id"),
            "ICC": cs.icc(gemini, "correct", by="src"),
            "DesignEffect": cs.design_effect(gemini, "correct", by="src"),
            "PassAtK (k = 1..4)": cs.pass_hat_k(
                tau, "reward", case="task_id", rerun="trial", k=[1, 2, 3, 4]
            ),
            "Flakiness": cs.flakiness(tau, "reward", case="task_id", rerun="trial"),
            "MissingReport": cs.missing_report(
                mixtral.assign(answered=mixtral.pred_missing.eq(0)),
                "correct",
                by="src",
                responded="answered",
            ),
            "Plan": cs.pilot_plan(gemini, "correct", by="src", target_half_width=0.03),
            "Report": cs.report(mmlu, "correct", by="src", over="model"),
            "ClusteringCheck": cs.check_clustering(mmlu, "correct", ["src", "category"]),
            "GateReport": cs.gate(bbh, "correct", "task", at_least=0.5, over="condition"),
            "LmEvalTable": cs.lm_eval_table(FIXTURES / "dummy-b", by="passage"),
            "ConfidenceSequence": cs.confidence_sequence(
                bbh[bbh.condition == "cot"], "correct", by="task", order="item_index"
            ),
            "SequencePlan": cs.sequence_plan(
                bbh[bbh.condition == "cot"], "correct", by="task", at_least=0.6, runs=50
            ),
            "JudgedCI": cs.judged_ci(
                hanna.assign(human=hanna["human_score"].where(hanna["cluster"] < 24)),
                "human",
                by="cluster",
                judge="judge_score",
            ),
            "LabelPlan": cs.judged_plan(
                hanna.assign(human=hanna["human_score"].where(hanna["cluster"] < 24)),
                "human",
                by="cluster",
                judge="judge_score",
                target_half_width=0.06,
            ),
            "SliceComparison (compare over category)": cs.compare(
                full[full.category.isin(["law", "math"])],
                "correct",
                by="src",
                model="model",
                on="question_id",
                over="category",
            ),
        }


def page() -> str:
    """One HTML page: each result's notebook HTML under its class name."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>clusterstats results</title>"
        "</head><body style='font-family:sans-serif;font-size:13px;max-width:1250px'>"
    ]
    for name, result in results().items():
        parts.append(f"<h3 style='margin:1.2em 0 0.3em 0'>{html.escape(name)}</h3>")
        parts.append(result._repr_html_())  # type: ignore[attr-defined]
    parts.append("</body></html>")
    return "".join(parts)


def browser(given: str | None = None) -> str | None:
    """The browser binary: ``given``, else the first Chromium or Chrome on the PATH."""
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(source: str, target: Path, binary: str, *, height: int = 7200) -> None:
    """Save a screenshot of the HTML ``source`` to ``target`` with headless ``binary``."""
    with tempfile.TemporaryDirectory() as folder:
        html_file = Path(folder) / "results.html"
        html_file.write_text(source, encoding="utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={folder}/profile",
                f"--window-size=1280,{height}",
                f"--screenshot={target}",
                html_file.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def crop_to_content(image: Path, margin: int = 16) -> None:
    """Cut the blank bottom of a screenshot (the window is taller than the page)."""
    import numpy as np
    from PIL import Image

    with Image.open(image) as shot:
        pixels = np.asarray(shot.convert("L"))
        used = np.flatnonzero((pixels < 250).any(axis=1))
        bottom = min(int(used.max()) + margin, pixels.shape[0]) if used.size else pixels.shape[0]
        cropped = shot.convert("RGB").crop((0, 0, shot.width, bottom))
        cropped.quantize(colors=64).save(image, optimize=True)  # text needs few colours


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browser", help="path of a Chromium or Chrome binary")
    args = parser.parse_args(argv)
    binary = browser(args.browser)
    if binary is None:
        print("no Chromium or Chrome found: apt-get install chromium", file=sys.stderr)
        return 2
    screenshot(page(), SHOT, binary)
    crop_to_content(SHOT)
    print(f"{SHOT.relative_to(REPO)}: {SHOT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
