"""Write the inputs of the R scripts in tests/r to <system temp dir>/clusterstats-r, from the
datasets bundled with clusterstats."""

import tempfile
from pathlib import Path

import clusterstats

out = Path(tempfile.gettempdir()) / "clusterstats-r"
out.mkdir(exist_ok=True)
mmlu = clusterstats.datasets.load("mmlu_pro")
mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
mixtral[["src", "correct"]].to_csv(out / "mixtral.csv", index=False)
mixtral.to_csv(out / "mixtral_full.csv", index=False)
tau = clusterstats.datasets.load("tau_bench_airline")
tau[["user_id", "task_id", "reward", "n_messages"]].to_csv(out / "tau.csv", index=False)
print(f"wrote inputs to {out}")
