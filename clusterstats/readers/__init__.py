"""Readers for eval logs: inspect_ai logs and lm-evaluation-harness ``--log_samples`` files.

Both return ordinary long DataFrames (one row per graded run), so everything else is
``df.eval...``. A file that is not what its reader expects raises :class:`FileReadError`
naming the file (and the line, for lm-evaluation-harness): a reader never returns a silently
wrong number.
"""

from clusterstats.readers._files import kind_of, load_json
from clusterstats.readers.inspect_logs import INSPECT_HINT, read_inspect, sample_scores, score_entry
from clusterstats.readers.lm_eval import read_lm_eval, read_lm_eval_results

__all__ = [
    "INSPECT_HINT",
    "kind_of",
    "load_json",
    "read_inspect",
    "read_lm_eval",
    "read_lm_eval_results",
    "sample_scores",
    "score_entry",
]
