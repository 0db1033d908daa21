"""Write ``tests/reference/data/judged_fixture.csv``: a small clustered eval scored by an
LLM judge on every row and by humans on some rows, the input of ``tests/r/judged.R``.

Run from the repository root::

    python tests/reference/judged_fixture.py

Design (numpy only, seed 20261205):

- 30 clusters of 2 to 9 rows, sizes drawn unevenly;
- ``human_full`` = 3 + cluster effect (sd 0.6) + row noise (sd sqrt(0.6**2 * 7 / 3)), so the
  intraclass correlation is 0.3, clipped to the 1-5 scale;
- ``judge`` = 3 + 0.6 * (human - 3) + cluster-varying bias (sd 0.3) + row noise, chosen so the
  judge-human correlation is about 0.6, clipped to 1-5;
- ``labelled_clusters``: every row of 12 whole clusters drawn at random is labelled;
- ``labelled_rows``: a simple random sample of 2 rows inside every cluster (all rows of a
  cluster of 2).

The script prints the realised ICC (one-way ANOVA) and correlation as a check.
"""

from pathlib import Path

import numpy as np

SEED = 20261205
N_CLUSTERS = 30
N_LABELLED_CLUSTERS = 12
ROWS_LABELLED_PER_CLUSTER = 2
OUT = Path(__file__).resolve().parent / "data" / "judged_fixture.csv"


def make() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    sizes = rng.integers(2, 10, N_CLUSTERS)
    cluster = np.repeat(np.arange(1, N_CLUSTERS + 1), sizes)
    row = np.concatenate([np.arange(1, m + 1) for m in sizes])
    sd_between = 0.6
    # ICC = sb^2 / (sb^2 + sw^2) = 0.3  =>  sw^2 = sb^2 * 0.7 / 0.3
    sd_within = np.sqrt(sd_between**2 * 0.7 / 0.3)
    effect = rng.normal(0.0, sd_between, N_CLUSTERS)
    human = 3.0 + effect[cluster - 1] + rng.normal(0.0, sd_within, cluster.size)
    human = np.clip(human, 1.0, 5.0)
    bias = rng.normal(0.0, 0.3, N_CLUSTERS)
    # var(human) is about 1.2; slope 0.6 and noise sd 0.85 give r near
    # 0.6 * 1.1 / sqrt(0.43 + 0.09 + 0.72) = 0.59
    judge = 3.0 + 0.6 * (human - 3.0) + bias[cluster - 1] + rng.normal(0.0, 0.85, cluster.size)
    judge = np.clip(judge, 1.0, 5.0)
    chosen = rng.choice(np.arange(1, N_CLUSTERS + 1), N_LABELLED_CLUSTERS, replace=False)
    labelled_clusters = np.isin(cluster, chosen)
    labelled_rows = np.zeros(cluster.size, dtype=bool)
    start = 0
    for m in sizes:
        take = rng.choice(m, min(m, ROWS_LABELLED_PER_CLUSTER), replace=False)
        labelled_rows[start + take] = True
        start += m
    return {
        "cluster": cluster,
        "row": row,
        "judge": judge,
        "human_full": human,
        "labelled_clusters": labelled_clusters,
        "labelled_rows": labelled_rows,
    }


def icc_anova(y: np.ndarray, cluster: np.ndarray) -> float:
    """One-way ANOVA estimator of the intraclass correlation with unequal cluster sizes."""
    ids, idx, m = np.unique(cluster, return_inverse=True, return_counts=True)
    k, n = ids.size, y.size
    means = np.bincount(idx, weights=y) / m
    msb = np.sum(m * (means - y.mean()) ** 2) / (k - 1)
    msw = np.sum((y - means[idx]) ** 2) / (n - k)
    n0 = (n - np.sum(m**2) / n) / (k - 1)
    return float((msb - msw) / (msb + (n0 - 1) * msw))


def flag(x: bool) -> str:
    """R's spelling of a logical, so read.csv gives a logical column."""
    return "TRUE" if x else "FALSE"


def main() -> None:
    cols = make()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w") as f:
        f.write(",".join(cols) + "\n")
        for i in range(cols["cluster"].size):
            f.write(
                f"{cols['cluster'][i]},{cols['row'][i]},{float(cols['judge'][i])!r},"
                f"{float(cols['human_full'][i])!r},{flag(cols['labelled_clusters'][i])},"
                f"{flag(cols['labelled_rows'][i])}\n"
            )
    h, j = cols["human_full"], cols["judge"]
    print(f"wrote {OUT} ({h.size} rows, {np.unique(cols['cluster']).size} clusters)")
    print(f"sizes {np.bincount(cols['cluster'])[1:].tolist()}")
    icc, r = icc_anova(h, cols["cluster"]), np.corrcoef(h, j)[0, 1]
    print(f"ICC(human) {icc:.3f}, corr(judge, human) {r:.3f}")
    print(
        f"labelled rows: whole clusters {int(cols['labelled_clusters'].sum())}, "
        f"within clusters {int(cols['labelled_rows'].sum())}"
    )


if __name__ == "__main__":
    main()
