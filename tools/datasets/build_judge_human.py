"""Build hanna_judge_human.csv: HANNA story ratings (human + LLM judges), clustered by prompt.

Source: GitHub dig-team/hanna-benchmark-asg, branch main,
commit 282f27536a5d05ad4ce14298abcd70c45668fed2,
file hanna_metric_scores_llm.csv (3,294,679 bytes, MIT licence; Chhun, Suchanek & Clavel,
TACL 2024, doi:10.1162/tacl_a_00689; HANNA: Chhun et al., COLING 2022).
That file has one row per generating system (11) and, in each cell, a Python list of 96 values,
one per WritingPrompts prompt, in the same prompt order for every system (checked below:
Text length x Compression = prompt length is identical across systems at every position).
HANNA story id = 96 * system_index + prompt_index (README: 0-95 Human, 96-191 BertGeneration, ...).

Usage: python build_judge_human.py SOURCE_CSV OUT_CSV
  SOURCE_CSV: e.g. `git show 282f275:hanna_metric_scores_llm.csv > hanna_metric_scores_llm.csv`
              in a clone of dig-team/hanna-benchmark-asg.
"""

import ast
import sys

import numpy as np
import pandas as pd

CRIT = ["RE", "CH", "EM", "SU", "EG", "CX"]
CRIT_FULL = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
JUDGES = {  # column prefix in the source -> output column
    "ChatGPT": "judge_chatgpt",
    "Beluga-13B": "judge_beluga13b",
    "Mistral-7B": "judge_mistral7b",
    "Llama-13B": "judge_llama13b",
    "OrcaPlatypus": "judge_orcaplatypus13b",
}
METRICS = {"BERTScore F1 Ξε": "bertscore_f1", "BARTScore-SH ΞΔ": "bartscore_sh"}


def main(src, out):
    d = pd.read_csv(src, index_col="Model")
    systems = list(d.index)
    assert len(systems) == 11, systems

    def col(c):
        a = np.array([ast.literal_eval(v) for v in d[c]], dtype=float)
        assert a.shape == (11, 96), (c, a.shape)
        return a

    # prompt alignment check: prompt length = story length * compression, same for all systems
    plen = col("Text length ¤§") * col("Compression ¤§")
    assert np.allclose(plen, plen[0], rtol=1e-6), "prompt order differs across systems"

    rows = []
    for c, cf in zip(CRIT, CRIT_FULL, strict=True):
        human_mean = col(cf)
        raters = [col(f"Human {k} {c}") for k in (1, 2, 3)]
        assert np.allclose(np.mean(raters, axis=0), human_mean)
        judge = {out_c: col(f"{pre} {c} 1") for pre, out_c in JUDGES.items()}
        metric = {out_c: col(src_c) for src_c, out_c in METRICS.items()}
        for s, sysname in enumerate(systems):
            for p in range(96):
                r = {
                    "cluster": p,  # WritingPrompts prompt index (the natural cluster)
                    "item": 96 * s + p,  # HANNA Story ID
                    "system": sysname,
                    "criterion": cf,
                    "human_score": human_mean[s, p],
                    "human_1": raters[0][s, p],
                    "human_2": raters[1][s, p],
                    "human_3": raters[2][s, p],
                    "judge_score": judge["judge_chatgpt"][s, p],
                }
                r.update({k: v[s, p] for k, v in judge.items() if k != "judge_chatgpt"})
                r.update({k: v[s, p] for k, v in metric.items()})
                rows.append(r)
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False, float_format="%.6g")
    print("wrote", out, df.shape)


if __name__ == "__main__" and sys.argv[1] != "--topicalchat":
    main(sys.argv[1], sys.argv[2])


# ---------------------------------------------------------------------------------------------
# Second candidate (topicalchat_judge_human.csv): Topical-Chat (USR, Mehri & Eskenazi 2020)
# human ratings with UniEval predictions, from GitHub maszhongming/UniEval, commit d33e7b6
# (MIT licence for the repository), file reproduce/unieval_predict/dialogue/topical_chat_result.json
# (785,420 bytes): 360 responses = 60 dialogue contexts x 6 response systems.
# Usage: python build_judge_human.py --topicalchat SOURCE_JSON OUT_CSV
def build_topicalchat(src, out):
    import json

    with open(src) as fh:
        recs = json.load(fh)
    rows = []
    ctx_ids = {}
    for i, e in enumerate(recs):
        key = e["source"]
        cid = ctx_ids.setdefault(key, len(ctx_ids))
        hs = ast.literal_eval(e["scores"]) if isinstance(e["scores"], str) else e["scores"]
        ps = (
            ast.literal_eval(e["predict_scores"])
            if isinstance(e["predict_scores"], str)
            else e["predict_scores"]
        )
        for dim in ("naturalness", "coherence", "engagingness", "groundedness"):
            rows.append(
                {
                    "cluster": cid,
                    "item": i,
                    "system": e["system_id"],
                    "criterion": dim,
                    "human_score": hs[dim],
                    "judge_score": ps[dim],
                    "human_overall": hs.get("overall"),
                }
            )
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False, float_format="%.6g")
    print("wrote", out, df.shape)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--topicalchat":
    build_topicalchat(sys.argv[2], sys.argv[3])
