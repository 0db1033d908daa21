"""Reference values of ``ppi_py.ppi_mean_ci`` (ppi-python 0.2.3) for ``judged_ci``'s
``method="ppi_py"`` with clusters of one row.

Writes ``tests/reference/data/judged_ppi_py.csv`` (300 rows: ``y`` the human label, missing
where unlabelled, ``f`` the judge's score) and ``tests/reference/judged_ppi_py.json`` (the
intervals ``ppi_py`` gives, with each call). Needs ``pip install ppi-python``; the test reads
the committed files and calls ``ppi_py`` only when it is installed.

    python tests/reference/judged_ppi_py.py
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import ppi_py

HERE = Path(__file__).parent
rng = np.random.default_rng(20261205)
n = 300
y = rng.normal(3.0, 1.0, n)
f = 0.6 * y + 1.5 + rng.normal(0.0, 0.8, n)
labelled = rng.random(n) < 0.3
frame = pd.DataFrame({"id": np.arange(n), "y": np.where(labelled, y, np.nan), "f": f})
frame.to_csv(HERE / "data" / "judged_ppi_py.csv", index=False, float_format="%.17g")

frame = pd.read_csv(HERE / "data" / "judged_ppi_py.csv")
has = frame["y"].notna().to_numpy()
Y, Yhat, Yhat_unlabeled = (
    frame["y"][has].to_numpy(),
    frame["f"][has].to_numpy(),
    frame["f"][~has].to_numpy(),
)
cases = []
for lam in (None, 0.0, 0.4, 1.0):
    for alpha in (0.05, 0.1):
        low, high = ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=alpha, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=lam)
        cases.append(
            {
                "call": f"ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha={alpha}, lam={lam})",
                "lam": lam,
                "alpha": alpha,
                "low": float(low[0]),
                "high": float(high[0]),
                "estimate": float(point[0]),
            }
        )
(HERE / "judged_ppi_py.json").write_text(
    json.dumps(
        {"produced_by": "python tests/reference/judged_ppi_py.py",
         "ppi_python": version("ppi-python"), "cases": cases},
        indent=2,
    ) + "\n",
    encoding="utf-8",
)  # fmt: skip
