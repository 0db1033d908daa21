"""Synthetic eval frames shared by the benchmark scripts."""

from __future__ import annotations

import numpy as np
import pandas as pd


def make_frame(n_rows: int, n_clusters: int, seed: int) -> pd.DataFrame:
    """Binary outcome, unequal cluster sizes (each >= 1), per-cluster pass rates, shuffled."""
    rng = np.random.default_rng(seed)
    weights = rng.gamma(2.0, size=n_clusters)
    sizes = 1 + rng.multinomial(n_rows - n_clusters, weights / weights.sum())
    cluster = rng.permutation(np.repeat(np.arange(n_clusters, dtype=np.int64), sizes))
    rate = rng.beta(2.0, 2.0, size=n_clusters)
    y = (rng.random(n_rows) < rate[cluster]).astype(np.int8)
    return pd.DataFrame({"cluster": cluster, "y": y})
