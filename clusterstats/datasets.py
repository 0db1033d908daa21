"""Small real datasets shipped with clusterstats."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_demo_data"]


def load_demo_data() -> pd.DataFrame:
    """Per-question results of four LLMs on a slice of MMLU-Pro, clustered by source.

    8,692 rows: 2,173 questions in 91 ``src`` clusters (sub-subjects or sources, nested in 14
    ``category`` values), for four models. ``correct`` is a nullable 0/1 integer (missing where
    a question is absent from a model's released file). Licence (Apache-2.0) and provenance are
    in ``clusterstats/data/PROVENANCE.md``.

    Examples
    --------
    >>> import clusterstats
    >>> df = clusterstats.load_demo_data()
    >>> df.shape, df["src"].nunique(), sorted(df["model"].unique())[0]
    ((8692, 5), 91, 'Meta-Llama-3.1-70B-Instruct')
    """
    source = resources.files("clusterstats") / "data" / "mmlu_pro_slice.csv"
    with resources.as_file(source) as path:
        return pd.read_csv(path, dtype={"correct": "Int64"})
