"""The statistics: each module holds a public function, the builder every backend calls, and
the results it returns (``mean``, ``paired``, ``comparison``, ``missing``, ``strata``,
``reruns``, ``planning``, ``diagnostics``, ``mixing``), with the closed-form helpers in
``formulas``, the missing-data and lonely-stratum policies in ``_policies`` and the variance
designs by name in ``_variance``. Import the
functions from :mod:`clusterstats` (or :mod:`clusterstats.api`) and the results from
:mod:`clusterstats.results`: those paths are the documented ones."""
