"""Reproduce, in numpy, the documented example of glide's clustered PPI++ estimator and write
``tests/reference/glide_example.json``.

Run from the repository root::

    python tests/reference/glide_example.py

Source: glide-py 0.11.0 (Apache-2.0), ``glide/estimators/clustered_ppi.py``, the docstring
example of ``ClusteredPPIMeanEstimator`` (lines 29-43), which prints
``Point Estimate: 2.744`` and ``Confidence Interval (95%): [1.020, 4.468]`` for the 8 rows
below (4 clusters of 2 rows, clusters A and B labelled). The conventions, from the same
package (this script does not import it):

- units are cluster means (``estimators/clustered_core.py`` lines 51-59): ``u`` human and
  ``s`` judge means of the labelled clusters, ``v`` judge means of the unlabelled clusters;
- lambda = cov(u, s; ddof 1) / ((1 + M_L / M_U) * var(s and v pooled; ddof 1))
  (``engines/ppi_core.py`` lines 16-27);
- estimate = mean(u) + lambda * (mean(v) - mean(s)): the judge term is the mean of the
  UNLABELLED clusters only (``engines/ppi_core.py`` lines 36-38);
- variance = var(u - lambda * s; ddof 1) / M_L + lambda**2 * var(v; ddof 1) / M_U
  (``engines/ppi_core.py`` lines 48-53);
- interval = estimate -/+ z * se with the normal quantile (``confidence_intervals/clt.py``
  lines 57-60); no t, no finite-population correction.
"""

import json
from pathlib import Path

import numpy as np
from scipy.stats import norm

Y_TRUE = [1.0, 2.0, 3.0, 4.0, None, None, None, None]
Y_PROXY = [1.1, 2.2, 3.1, 3.9, 1.5, 1.8, 4.5, 4.8]
CLUSTERS = ["A", "A", "B", "B", "C", "C", "D", "D"]
OUT = Path(__file__).resolve().parent / "glide_example.json"


def clustered_ppi(
    y_true: np.ndarray, y_proxy: np.ndarray, clusters: np.ndarray, *, level: float = 0.95
) -> dict[str, float]:
    labelled = ~np.isnan(y_true)
    ids = np.unique(clusters)
    lab_ids = [c for c in ids if labelled[clusters == c].all()]
    unl_ids = [c for c in ids if not labelled[clusters == c].any()]
    u = np.array([y_true[clusters == c].mean() for c in lab_ids])
    s = np.array([y_proxy[clusters == c].mean() for c in lab_ids])
    v = np.array([y_proxy[clusters == c].mean() for c in unl_ids])
    m_l, m_u = u.size, v.size
    lam = np.cov(u, s, ddof=1)[0, 1] / ((1 + m_l / m_u) * np.var(np.concatenate([s, v]), ddof=1))
    est = u.mean() + lam * (v.mean() - s.mean())
    var = np.var(u - lam * s, ddof=1) / m_l + lam**2 * np.var(v, ddof=1) / m_u
    se = float(np.sqrt(var))
    z = norm.ppf(0.5 + level / 2)
    return {
        "lambda": float(lam),
        "estimate": float(est),
        "se": se,
        "lower": float(est - z * se),
        "upper": float(est + z * se),
        "labelled_cluster_means_true": u.tolist(),
        "labelled_cluster_means_proxy": s.tolist(),
        "unlabelled_cluster_means_proxy": v.tolist(),
    }


def main() -> None:
    y_true = np.array([np.nan if y is None else y for y in Y_TRUE])
    res = clustered_ppi(y_true, np.array(Y_PROXY), np.array(CLUSTERS))
    printed = f"{res['estimate']:.3f} [{res['lower']:.3f}, {res['upper']:.3f}]"
    if printed != "2.744 [1.020, 4.468]":
        raise SystemExit(f"does not reproduce glide's documented example: {printed}")
    doc = {
        "source": "glide-py 0.11.0, glide/estimators/clustered_ppi.py lines 29-43 (docstring)",
        "documented": "Point Estimate: 2.744, Confidence Interval (95%): [1.020, 4.468]",
        "data": {"y_true": Y_TRUE, "y_proxy": Y_PROXY, "clusters": CLUSTERS},
        "produced_by": "python tests/reference/glide_example.py",
        **res,
    }
    OUT.write_text(json.dumps(doc, indent=2) + "\n")
    print(printed, f"lambda {res['lambda']!r} se {res['se']!r}")


if __name__ == "__main__":
    main()
