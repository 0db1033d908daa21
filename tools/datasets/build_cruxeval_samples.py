#!/usr/bin/env python3
"""Build cruxeval_codellama7b_samples.csv from facebookresearch/cruxeval sample results.

Standard library only.  Usage:
    python3 build_cruxeval_samples.py RAW_DIR OUT_CSV
RAW_DIR must contain the unmodified files
    samples/evaluation_results/sample_scored_codellama-7b_temp0.2_input.json
    samples/evaluation_results/sample_scored_codellama-7b_temp0.2_output.json
    data/cruxeval.jsonl                      (only used to check the 800 problem ids)
from https://github.com/facebookresearch/cruxeval (files unchanged since the initial commit
10d71b4ca99f2b6624bef9533ade5a0594ab7716; verified at HEAD 190faf16d175b5847b0af05d937872b1fb395942;
MIT license).

These are the CRUXEval authors' released, already-executed results for Code Llama 7B
(temperature 0.2, 10 samples per problem) on CRUXEval-I (input prediction) and
CRUXEval-O (output prediction).  `raw_scored_generations[problem][k]` is the authors'
pass/fail for sample k; we only reshape it.  The script checks that the mean of the
per-sample outcomes reproduces the file's own `pass_at_1`.

Columns: model, task (input_prediction|output_prediction), problem_id (sample_0..799,
the CRUXEval id = cluster of the 10 reruns), sample_index (0..9 = rerun), correct (0/1).
"""

import csv
import json
import os
import sys

FILES = {
    "input_prediction": "sample_scored_codellama-7b_temp0.2_input.json",
    "output_prediction": "sample_scored_codellama-7b_temp0.2_output.json",
}


def main(raw_dir, out_csv):
    with open(os.path.join(raw_dir, "data", "cruxeval.jsonl")) as fh:
        ids = [json.loads(line)["id"] for line in fh]
    assert len(ids) == 800
    assert len(set(ids)) == 800
    rows = []
    for task, fn in FILES.items():
        with open(os.path.join(raw_dir, "samples", "evaluation_results", fn)) as fh:
            d = json.load(fh)
        scored = d["raw_scored_generations"]
        assert set(scored) == set(ids), task
        tot = n = 0
        for pid in sorted(scored, key=lambda s: int(s.split("_")[1])):
            outcomes = scored[pid]
            assert len(outcomes) == 10, (task, pid, len(outcomes))
            for k, ok in enumerate(outcomes):
                assert isinstance(ok, bool)
                rows.append(["codellama-7b", task, pid, k, int(ok)])
                tot += int(ok)
                n += 1
        assert abs(100.0 * tot / n - d["pass_at_1"]) < 1e-9, (task, 100.0 * tot / n, d["pass_at_1"])
    with open(out_csv, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["model", "task", "problem_id", "sample_index", "correct"])
        w.writerows(rows)


if __name__ == "__main__":
    raw = sys.argv[1] if len(sys.argv) > 1 else "src"
    out = sys.argv[2] if len(sys.argv) > 2 else "cruxeval_codellama7b_samples.csv"
    main(raw, out)
