"""Write the inputs of tests/r/verify.R to <system temp dir>/clusterstats-r."""

import tempfile
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
out = Path(tempfile.gettempdir()) / "clusterstats-r"
out.mkdir(exist_ok=True)
mmlu = pd.read_csv(DATA / "mmlu_pro_per_question.csv")
mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"][["src", "correct"]].to_csv(
    out / "mixtral.csv", index=False
)
tau = pd.read_csv(DATA / "tau_bench_airline_gpt4o_trials.csv")
tau[["user_id", "task_id", "reward", "n_messages"]].to_csv(out / "tau.csv", index=False)
print(f"wrote inputs to {out}")
