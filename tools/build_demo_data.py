"""Build the small MMLU-Pro slice bundled with clusterstats (``clusterstats/data``).

Run from the repository root, with the project's shared data beside it::

    python tools/build_demo_data.py ../shared/data/mmlu_pro_per_question.csv

The slice keeps, for each of the 91 ``src`` clusters, its first 24 questions (by
``question_id``; clusters with fewer keep them all) for all four models, and only the
columns the demo needs. Deterministic: two runs give byte-identical output.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

QUESTIONS_PER_SOURCE = 24
COLUMNS = ["model", "question_id", "category", "src", "correct"]


def main(source: str) -> None:
    full = pd.read_csv(source)
    questions = full[["question_id", "src"]].drop_duplicates().sort_values("question_id")
    kept = questions.groupby("src", sort=True).head(QUESTIONS_PER_SOURCE)["question_id"]
    out = full[full["question_id"].isin(set(kept))][COLUMNS]
    out = out.sort_values(["model", "question_id"], kind="stable")
    out["correct"] = out["correct"].astype("Int64")
    target = Path(__file__).resolve().parents[1] / "clusterstats" / "data" / "mmlu_pro_slice.csv"
    out.to_csv(target, index=False, lineterminator="\n")
    print(f"wrote {len(out)} rows, {out['src'].nunique()} clusters to {target}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/mmlu_pro_per_question.csv")
