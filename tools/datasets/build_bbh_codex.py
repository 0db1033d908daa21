#!/usr/bin/env python3
"""Build bbh_codex_cot_vs_direct.csv from suzgunmirac/BIG-Bench-Hard model outputs.

Standard library only.  Usage:
    python3 build_bbh_codex.py RAW_DIR OUT_CSV
RAW_DIR must contain the unmodified directory
    code-davinci-002-outputs/code-davinci-002-{cot,direct}/<task>_few_shot_template_0-255000.json
    (+ the matching *_eval_metrics.jsonl files, used only for a self-check)
from https://github.com/suzgunmirac/BIG-Bench-Hard at commit
9ee07bd481feebf959a6b59d61ea57bdcf30964d (MIT license).

These are the authors' own released generations of OpenAI code-davinci-002 on the 27
BIG-Bench Hard tasks (3-shot), once with answer-only ("direct") prompting and once with
chain-of-thought ("cot") prompting.  Both conditions contain the same items in the same
order (checked below), so the two conditions form a paired comparison.

Scoring (reproduces the per-task "accuracy" in every *_eval_metrics.jsonl exactly,
asserted below):
  direct: correct = prediction.strip() == target.strip()
  cot:    answer  = text after the LAST "So the answer is " (fallback: last
          "the answer is "), stripped, one trailing "." removed;
          correct = answer == target.strip(); if neither phrase occurs the
          answer is missing (no_answer=1) and correct = 0.
("accuracy_with_calc", which post-processes arithmetic with a calculator, is NOT used.)

Columns: model, condition (cot|direct), task, item_id (<task>-<index>), item_index
(0-based position in the task file = position in bbh/<task>.json), correct (0/1),
no_answer (1 if no final answer could be extracted; always 0 for direct).
"""

import csv
import glob
import json
import os
import sys

COT_MARK = "So the answer is "
FALLBACK = "the answer is "


def final_question(inp):
    q = inp[inp.rfind("Q: ") + 3 :]
    for suf in ("\nA: Let's think step by step.", "\nA:"):
        if q.endswith(suf):
            return q[: -len(suf)]
    return q


def extract_cot(pred):
    i = pred.rfind(COT_MARK)
    if i >= 0:
        ans = pred[i + len(COT_MARK) :]
    else:
        j = pred.rfind(FALLBACK)
        if j < 0:
            return None
        ans = pred[j + len(FALLBACK) :]
    ans = ans.strip()
    if ans.endswith("."):
        ans = ans[:-1]
    return ans.strip()


def main(raw_dir, out_csv):
    base = os.path.join(raw_dir, "code-davinci-002-outputs")
    files = sorted(glob.glob(os.path.join(base, "code-davinci-002-cot", "*_0-255000.json")))
    assert len(files) == 27, len(files)
    rows = []
    for f_cot in files:
        task = os.path.basename(f_cot).split("_few_shot")[0]
        f_dir = f_cot.replace("code-davinci-002-cot", "code-davinci-002-direct")
        out = {}
        for cond, f in (("cot", f_cot), ("direct", f_dir)):
            with open(f) as fh:
                out[cond] = json.load(fh)["outputs"]
        assert len(out["cot"]) == len(out["direct"])
        for a, b in zip(out["cot"], out["direct"], strict=False):
            assert final_question(a["input"]) == final_question(b["input"])
            assert a["target"] == b["target"]
        for cond, f in (("cot", f_cot), ("direct", f_dir)):
            n_correct = 0
            for idx, rec in enumerate(out[cond]):
                target = rec["target"].strip()
                ans = extract_cot(rec["prediction"]) if cond == "cot" else rec["prediction"].strip()
                no_answer = int(ans is None)
                correct = int(ans is not None and ans == target)
                n_correct += correct
                rows.append(
                    ["code-davinci-002", cond, task, f"{task}-{idx:03d}", idx, correct, no_answer]
                )
            with open(f.replace(".json", "_eval_metrics.jsonl")) as fh:
                ref = json.loads(fh.read())["accuracy"]
            mine = 100.0 * n_correct / len(out[cond])
            assert abs(mine - ref) < 1e-9, (task, cond, mine, ref)
    with open(out_csv, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["model", "condition", "task", "item_id", "item_index", "correct", "no_answer"])
        w.writerows(rows)


if __name__ == "__main__":
    raw = sys.argv[1] if len(sys.argv) > 1 else "src"
    out = sys.argv[2] if len(sys.argv) > 2 else "bbh_codex_cot_vs_direct.csv"
    main(raw, out)
