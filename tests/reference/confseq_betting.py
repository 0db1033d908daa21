"""Write the reference values of ``tests/core/test_core_sequential.py`` with the authors'
own implementation of betting confidence sequences, the ``confseq`` package (Howard,
Waudby-Smith & Ramdas; ``confseq.betting.betting_cs``).

Run with an interpreter where ``confseq`` imports (it builds on Python 3.10 with numpy < 2
and Debian's libboost-dev; ``.ci/run`` makes one when it can)::

    python tests/reference/confseq_betting.py > tests/reference/confseq_betting.json

or, to print the values for data given on standard input (the live test)::

    python tests/reference/confseq_betting.py --stdin < data.json

Each case is a vector ``x`` in [0, 1] (one value per cluster), ``alpha`` and ``breaks``;
the output holds confseq's lower and upper sequence with the running intersection.
"""

import json
import sys

import numpy as np
from confseq.betting import betting_cs


def cases():
    rng = np.random.default_rng(20261203)
    yield {"name": "beta(2, 5), 300 clusters", "x": rng.beta(2, 5, 300), "alpha": 0.05}
    yield {
        "name": "bernoulli(0.3), 200 clusters",
        "x": rng.binomial(1, 0.3, 200) * 1.0,
        "alpha": 0.05,
    }
    sizes = rng.integers(1, 12, 250)
    yield {
        "name": "cluster means of 250 clusters of 1-11 rows",
        "x": rng.binomial(sizes, rng.beta(3, 2, 250)) / sizes,
        "alpha": 0.1,
    }
    yield {
        "name": "uniform, 60 clusters, alpha 0.01",
        "x": rng.uniform(size=60),
        "alpha": 0.01,
        "breaks": 500,
    }


def run(case):
    x = np.asarray(case["x"], dtype=float)
    breaks = case.get("breaks", 1000)
    low, high = betting_cs(x, alpha=case["alpha"], breaks=breaks, running_intersection=True)
    return {**case, "x": x.tolist(), "breaks": breaks, "low": low.tolist(), "high": high.tolist()}


if __name__ == "__main__":
    given = json.load(sys.stdin) if "--stdin" in sys.argv else list(cases())
    json.dump([run(case) for case in given], sys.stdout)
