#!/usr/bin/env python3
"""Build mmlu_pro_per_question.csv from TIGER-AI-Lab/MMLU-Pro eval_results zips.

Standard library only.  Usage:
    python3 build_mmlu_pro.py RAW_DIR OUT_CSV
RAW_DIR must contain the unmodified files
    eval_results/model_outputs_<MODEL>_5shots.zip
from https://github.com/TIGER-AI-Lab/MMLU-Pro (commit 964a136e98ff17f81b0cd11c15c70784f6ee4378
or later, e.g. HEAD f418b116db00b065c2aea046518d8fcf74d39872) - one zip per model listed in MODELS.

Output: one row per (model, question_id) for the union of question ids seen in any
selected model file (12,032 = the full MMLU-Pro test set).
Columns
    model          model name as in the source file name ("3_1" written as "3.1")
    question_id    MMLU-Pro test question id (string of an int)
    category       MMLU-Pro category (14 values)            -> coarse cluster
    src            MMLU-Pro source/sub-subject (e.g. ori_mmlu-high_school_biology,
                   stemez-Physics, theoremQA-Math, scibench-...) -> fine cluster
    gold           gold answer letter (A-J) as stored in THAT model's output file
    pred           answer letter extracted by the MMLU-Pro harness ("" if none/absent)
    correct        1 if pred equals gold, 0 otherwise (a missing prediction is scored 0
                   here); empty if the question is absent from that model's output file
    pred_missing   1 if the model output has pred == null (no answer letter could be
                   extracted by the MMLU-Pro harness) OR the question is absent from
                   the model's file; else 0
    absent         1 if the question is absent from that model's output file; else 0
Note 1: MMLU-Pro was revised between evaluation runs; for 3-30 questions (depending on
the file) the gold letter and for <=7 questions the question text/options differ between
model files.  category and src never differ.  `correct` is scored against the gold stored
in each model's own file (what the MMLU-Pro authors used).
Note 2: the official MMLU-Pro scripts replace a missing prediction by a uniformly random
letter before scoring; we do not, we expose pred_missing instead.
"""

import csv
import json
import os
import sys
import zipfile

# Four of the 29 model files retrievable from the repo snapshot (28 complete + an
# incomplete DeepSeek-Coder-V2 file) were kept so that the CSV stays well under 5 MB.
# They form two "close" pairs (useful for paired comparisons) and differ in missingness.
MODELS = [
    "Meta-Llama-3_1-70B-Instruct",
    "gemini-1.5-flash-002",
    "Meta-Llama-3_1-8B-Instruct",
    "Mixtral-8x7B-Instruct-v0.1",
]


def load(raw_dir, model):
    path = os.path.join(raw_dir, "eval_results", f"model_outputs_{model}_5shots.zip")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert len(names) == 1, names
        data = json.loads(zf.read(names[0]))
    rows = {}
    for rec in data:
        if not isinstance(rec, dict):  # a few files contain stray strings; skip them
            continue
        qid = str(rec["question_id"])
        assert qid not in rows, (model, qid)
        rows[qid] = rec
    return rows


def main(raw_dir, out_csv):
    per_model = {m: load(raw_dir, m) for m in MODELS}
    meta = {}
    for m in MODELS:
        for qid, rec in per_model[m].items():
            item = (rec["category"], rec["src"])
            if qid in meta:
                assert meta[qid] == item, (qid, meta[qid], item)
            else:
                meta[qid] = item
    qids = sorted(meta, key=int)
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            [
                "model",
                "question_id",
                "category",
                "src",
                "gold",
                "pred",
                "correct",
                "pred_missing",
                "absent",
            ]
        )
        for m in MODELS:
            name = m.replace("3_1", "3.1")
            recs = per_model[m]
            for qid in qids:
                cat, src = meta[qid]
                rec = recs.get(qid)
                if rec is None:
                    w.writerow([name, qid, cat, src, "", "", "", 1, 1])
                    continue
                pred = rec.get("pred")
                missing = pred is None or pred == ""
                correct = int((not missing) and pred == rec["answer"])
                w.writerow(
                    [
                        name,
                        qid,
                        cat,
                        src,
                        rec["answer"],
                        "" if missing else pred,
                        correct,
                        int(missing),
                        0,
                    ]
                )


if __name__ == "__main__":
    raw = sys.argv[1] if len(sys.argv) > 1 else "src"
    out = sys.argv[2] if len(sys.argv) > 2 else "mmlu_pro_per_question.csv"
    main(raw, out)
