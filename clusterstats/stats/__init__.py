"""The statistics: each module holds a public function, the builder every backend calls, and
the results it returns (``mean``, ``paired``, ``comparison``, ``missing``, ``strata``,
``reruns``, ``planning``, ``diagnostics``, ``mixing``), with the closed-form helpers in
``formulas`` and the missing-data and lonely-stratum policies in ``_policies``. Import the
functions from :mod:`clusterstats` (or :mod:`clusterstats.api`) and the results from
:mod:`clusterstats.results`: those paths are the documented ones."""
