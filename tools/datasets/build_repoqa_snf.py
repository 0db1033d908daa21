#!/usr/bin/env python3
"""Build repoqa_snf_leaderboard.csv from evalplus/evalplus.github.io (RepoQA results).

Standard library only.  Deterministic.  Usage:
    python3 build_repoqa_snf.py RAW_DIR OUT_CSV

RAW_DIR is a checkout of https://github.com/evalplus/evalplus.github.io (Apache-2.0)
that holds BOTH of these unmodified inputs:
  results/repoqa/ntoken_16384/<model>-SCORES.json   30 files, per-needle results.
      They exist up to commit f088873bfbacba1696b4d2a204d7c93ca1e7de4c (2024-05-19);
      commit 5b9abbd6f87d3193b3f5390ddd4828887f8f16ba removed them.
      Git tree id of the folder: d149ab3964a0ecfb25186d7702ff0c53d7dc4404.
  results/repoqa/COMBINED-RESULTS.json             the published leaderboard numbers,
      taken at HEAD 87418456d3a8c2bc6265f24ff91d2dd0e7993f4b (2024-12-26),
      git blob ed3e96955017b6d27be6573e6f3c00dd0ab19b04.
One way to get both:
    git clone https://github.com/evalplus/evalplus.github.io src
    git -C src checkout 87418456d3a8c2bc6265f24ff91d2dd0e7993f4b
    git -C src checkout f088873bfbacba1696b4d2a204d7c93ca1e7de4c -- results/repoqa/ntoken_16384

The data are the RepoQA authors' (EvalPlus team) own runs of the "Search Needle
Function" task: 500 needle functions = 5 languages x 10 repositories x 10 functions,
each hidden in a ~16k-token code context; the model must reproduce the function from
a natural-language description.  A needle counts as found ("pass") when the model's
output is more similar to the needle than to any other candidate function in the
context AND that best similarity is >= a threshold (leaderboard default 0.8).

Output: one row per (system, needle), 30 x 500 = 15,000 rows.
Columns
    system               model name as stored in the source (HF id or API model name)
    instance_id          "<repo>::<function name>"  (unique over the 500 needles)
    language             python / cpp / java / typescript / rust   -> coarse cluster (5 x 100)
    repo                 GitHub repository the needle comes from   -> cluster (50 x 10)
    needle_position      relative position of the needle in the context
                         (0.05, 0.15, ..., 0.95; each repo has one needle per position)
    is_best_similar      1 if the output is most similar to the true needle, else 0
    best_similar_score   that best similarity (BLEU-based, 0..1), as stored in the source
    correct              1 if is_best_similar and best_similar_score >= 0.8, else 0
                         (the leaderboard's default pass criterion)
    eval_date            date of the run, from the source file (YYYY-MM-DD)
    claimed_ctx          claimed context window shown on the leaderboard ("Claimed Ctx")
    open_weights         1 if the system name is a Hugging Face id (contains "/"), 0 for
                         API-only models (the source tool draws the same distinction)
    leaderboard_pass1    the published pass@1 at threshold 0.8 over all 500 needles
                         (COMBINED-RESULTS.json at HEAD)
    matches_leaderboard  1 if the per-needle rows reproduce the published numbers at every
                         threshold and language; 0 for Qwen/Qwen1.5-72B-Chat, whose
                         leaderboard entry was replaced by a re-run on 2024-05-31 (commit
                         6b95c3c "fix: qwen 72b result") that has no per-needle file.

Checks (assertion errors if the source differs from what is documented):
  * exactly the 30 systems in SYSTEMS, each with the same 500 needles, 5 x 100 per
    language, 10 per repo, one repo per language, same needle_position everywhere;
  * recomputed pass@1 at all 11 thresholds, overall and per language, equals the
    "scores" block in each system's own file;
  * the same equals COMBINED-RESULTS.json for 29 systems; for Qwen/Qwen1.5-72B-Chat it
    must differ (0.500 here vs 0.670 published at threshold 0.8).
"""

import csv
import json
import os
import sys

SYSTEMS = [
    "CohereForAI/c4ai-command-r-plus",
    "Qwen/CodeQwen1.5-7B-Chat",
    "Qwen/Qwen1.5-14B-Chat",
    "Qwen/Qwen1.5-32B-Chat",
    "Qwen/Qwen1.5-72B-Chat",
    "Qwen/Qwen1.5-7B-Chat",
    "claude-3-haiku-20240307",
    "claude-3-opus-20240229",
    "claude-3-sonnet-20240229",
    "codellama/CodeLlama-13b-Instruct-hf",
    "codellama/CodeLlama-34b-Instruct-hf",
    "codellama/CodeLlama-7b-Instruct-hf",
    "deepseek-ai/DeepSeek-V2-Chat",
    "deepseek-ai/DeepSeek-V2-Lite-Chat",
    "deepseek-ai/deepseek-coder-33b-instruct",
    "deepseek-ai/deepseek-coder-6.7b-instruct",
    "gemini-1.5-flash-latest",
    "gemini-1.5-pro-latest",
    "google/codegemma-7b-it",
    "gpt-3.5-turbo-0125",
    "gpt-4-turbo-2024-04-09",
    "gpt-4o-2024-05-13",
    "ise-uiuc/Magicoder-S-DS-6.7B",
    "meta-llama/Meta-Llama-3-70B-Instruct",
    "meta-llama/Meta-Llama-3-8B-Instruct",
    "microsoft/Phi-3-mini-128k-instruct",
    "mistralai/Mistral-7B-Instruct-v0.1",
    "mistralai/Mistral-7B-Instruct-v0.2",
    "mistralai/Mixtral-8x22B-Instruct-v0.1",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
]
RERUN_ON_LEADERBOARD = {"Qwen/Qwen1.5-72B-Chat"}
LANGUAGES = ["python", "cpp", "java", "typescript", "rust"]
THRESHOLDS = ["0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
PASS_THRESHOLD = 0.8
TOL = 1e-9


def passed(rec, threshold):
    return bool(rec["is_best_similar"]) and float(rec["best_similar_score"]) >= threshold


def pass_rates(results):
    """{scope: {threshold: rate}} for scope in 'all' + languages."""
    out = {}
    scopes = [("all", [r for lang in LANGUAGES for r in results[lang]])]
    scopes += [(lang, results[lang]) for lang in LANGUAGES]
    for scope, recs in scopes:
        out[scope] = {t: sum(passed(r, float(t)) for r in recs) / len(recs) for t in THRESHOLDS}
    return out


def same_scores(rates, scores):
    return all(abs(rates[s][t] - scores[s][t]["pass@1"]) <= TOL for s in rates for t in THRESHOLDS)


def main(raw_dir, out_csv):
    base = os.path.join(raw_dir, "results", "repoqa")
    score_dir = os.path.join(base, "ntoken_16384")
    with open(os.path.join(base, "COMBINED-RESULTS.json")) as fh:
        board = json.load(fh)

    per_system = {}
    for fname in sorted(os.listdir(score_dir)):
        if not fname.endswith("-SCORES.json"):
            continue
        with open(os.path.join(score_dir, fname)) as fh:
            blob = json.load(fh)
        assert len(blob) == 1, fname
        ((name, entry),) = blob.items()
        assert name not in per_system, name
        per_system[name] = entry
    assert sorted(per_system) == sorted(SYSTEMS), sorted(per_system)

    needles = None  # (language, repo, function) -> needle_position
    for name in SYSTEMS:
        results = per_system[name]["results"]
        assert sorted(results) == sorted(LANGUAGES), (name, sorted(results))
        seen = {}
        for lang in LANGUAGES:
            assert len(results[lang]) == 100, (name, lang)
            for r in results[lang]:
                key = (lang, r["repo"], r["name"])
                assert key not in seen, (name, key)
                seen[key] = r["needle_position"]
        if needles is None:
            needles = seen
        assert seen == needles, name

        rates = pass_rates(results)
        assert same_scores(rates, per_system[name]["scores"]), name
        on_board = same_scores(rates, board[name]["scores"])
        assert on_board == (name not in RERUN_ON_LEADERBOARD), name

    repos = {}
    for lang, repo, _fn in needles:
        assert repos.setdefault(repo, lang) == lang, repo
    assert len(repos) == 50
    per_repo = {}
    for (_lang, repo, _fn), pos in needles.items():
        per_repo.setdefault(repo, []).append(pos)
    assert all(len(v) == 10 for v in per_repo.values())
    assert len({(repo, fn) for (_l, repo, fn) in needles}) == 500

    order = {lang: i for i, lang in enumerate(LANGUAGES)}
    rows = []
    for name in SYSTEMS:
        entry = per_system[name]
        date = entry["eval_date"][:10]
        ctx = entry["train_size"]
        lb = board[name]["scores"]["all"]["0.8"]["pass@1"]
        match = 0 if name in RERUN_ON_LEADERBOARD else 1
        for lang in LANGUAGES:
            for r in entry["results"][lang]:
                rows.append(
                    (
                        name,
                        f"{r['repo']}::{r['name']}",
                        lang,
                        r["repo"],
                        repr(float(r["needle_position"])),
                        int(bool(r["is_best_similar"])),
                        repr(float(r["best_similar_score"])),
                        int(passed(r, PASS_THRESHOLD)),
                        date,
                        ctx,
                        int("/" in name),
                        repr(float(lb)),
                        match,
                        (order[lang], r["repo"], r["name"]),
                    )
                )
    rows.sort(key=lambda row: (row[0], row[-1]))

    with open(out_csv, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(
            [
                "system",
                "instance_id",
                "language",
                "repo",
                "needle_position",
                "is_best_similar",
                "best_similar_score",
                "correct",
                "eval_date",
                "claimed_ctx",
                "open_weights",
                "leaderboard_pass1",
                "matches_leaderboard",
            ]
        )
        for row in rows:
            w.writerow(row[:-1])


if __name__ == "__main__":
    raw = sys.argv[1] if len(sys.argv) > 1 else "src"
    out = sys.argv[2] if len(sys.argv) > 2 else "repoqa_snf_leaderboard.csv"
    main(raw, out)
