#!/usr/bin/env python3
"""Build tau_bench_airline_gpt4o_trials.csv from sierra-research/tau-bench.

Standard library only.  Usage:
    python3 build_tau_bench_airline.py RAW_DIR OUT_CSV
RAW_DIR must contain the unmodified file
    historical_trajectories/gpt-4o-airline.json
from https://github.com/sierra-research/tau-bench (added in commit
7362a1708d720a4d697d042f21fd8637ea144c3b, unchanged at HEAD
59a200c6d575d595120f1cb70fea53cef0632f6b; MIT license).

The file holds the benchmark authors' historical gpt-4o agent runs on the 50 tau-bench
airline test tasks, 4 independent trials per task (the trials used for pass^k).
Each record has task_id, trial, reward (0.0/1.0 from the environment's reward function)
and info.task.user_id (the simulated customer; several tasks share one customer, i.e.
one user database record) and info.task.actions (ground-truth action list).

Columns: model (gpt-4o), domain (airline), task_id (0..49 = cluster of the 4 reruns),
user_id (simulated customer; 34 distinct -> coarser cluster), trial (0..3 = rerun),
reward (0/1), hit_step_limit (1 if the record has no reward_info, i.e. the episode was cut
off by the agent's 30-step limit and the harness recorded reward 0 - an "incomplete run"
flag; 5 of 200 runs), n_gt_actions (length of the ground-truth action list, a task
covariate), n_messages (number of messages in the logged trajectory).
"""

import csv
import json
import os
import sys


def main(raw_dir, out_csv):
    with open(os.path.join(raw_dir, "historical_trajectories", "gpt-4o-airline.json")) as fh:
        d = json.load(fh)
    rows = []
    seen = set()
    user_of_task = {}
    for rec in d:
        tid, trial = int(rec["task_id"]), int(rec["trial"])
        assert (tid, trial) not in seen
        seen.add((tid, trial))
        task = rec["info"]["task"]
        uid = task["user_id"]
        assert user_of_task.setdefault(tid, uid) == uid
        reward = float(rec["reward"])
        assert reward in (0.0, 1.0)
        rinfo = rec["info"].get("reward_info")
        if rinfo is None:
            # episode never reached a terminal state: the agent loop ran out of its
            # max_num_steps (=30 -> 62 logged messages) and the harness kept reward 0.0
            assert reward == 0.0
            assert len(rec["traj"]) == 62
            hit_limit = 1
        else:
            assert float(rinfo["reward"]) == reward
            hit_limit = 0
        rows.append(
            [
                "gpt-4o",
                "airline",
                tid,
                uid,
                trial,
                int(reward),
                hit_limit,
                len(task["actions"]),
                len(rec["traj"]),
            ]
        )
    rows.sort(key=lambda r: (r[2], r[4]))
    with open(out_csv, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(
            [
                "model",
                "domain",
                "task_id",
                "user_id",
                "trial",
                "reward",
                "hit_step_limit",
                "n_gt_actions",
                "n_messages",
            ]
        )
        w.writerows(rows)


if __name__ == "__main__":
    raw = sys.argv[1] if len(sys.argv) > 1 else "src"
    out = sys.argv[2] if len(sys.argv) > 2 else "tau_bench_airline_gpt4o_trials.csv"
    main(raw, out)
