"""Write the lm-evaluation-harness output that tests/integrations/test_lm_eval_logs.py reads
(tests/fixtures/lm_eval/).

Real output of lm-evaluation-harness 0.4.13 (``lm_eval --log_samples``) on its ``dummy``
model, which needs no weights and no network: ``generate_until`` always answers "lol", and a
loglikelihood is ``-random.random()`` from the run's ``--seed``. Four local JSON tasks, each
a shape a reader must handle:

* ``cs_gen``: ``generate_until`` with ``repeats: 3`` and two filters (``first``, the first of
  the three responses; ``maj@3``, their majority vote), scored by ``exact_match`` and by
  ``bleu`` (a corpus-level metric whose per-sample value is a (reference, prediction) pair);
* ``cs_mc``: ``multiple_choice`` with ``acc`` and ``acc_norm``;
* ``cs_yesno``: a yes/no ``multiple_choice`` with ``acc``, ``f1`` and ``mcc`` (corpus-level);
* ``cs_rolling``: ``loglikelihood_rolling`` with the perplexities (per-sample pairs too).

Twelve documents per task in four passages (the cluster). Two models, ``dummy-a`` (seed 0)
and ``dummy-b`` (seed 1), run every task into ``<out>/<model>/`` (``--model_args
pretrained=<model>`` names the folder); ``cs_mc`` is then run a second time into
``dummy-a`` (seed 2), as a user does who reruns one task into the same folder.

The harness is not in the test extras (it pulls torch, datasets and evaluate); install it in
a separate environment and run this script with that environment's ``lm_eval`` on the PATH::

    python -m venv /tmp/lm-eval && /tmp/lm-eval/bin/pip install torch lm_eval==0.4.13
    PATH=/tmp/lm-eval/bin:$PATH python tools/make_lm_eval_fixtures.py

The task folder's temporary path, which the harness writes into each results file's
configuration, is replaced by ``<tasks>``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "lm_eval"
PASSAGES = ("p0", "p1", "p2", "p3")

GEN = """\
task: cs_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/gen.jsonl
test_split: test
output_type: generate_until
doc_to_text: "Q: {{{{question}}}}\\nA:"
doc_to_target: "{{{{answer}}}}"
repeats: 3
generation_kwargs:
  until: ["\\n"]
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
  - metric: bleu
    aggregation: bleu
    higher_is_better: true
filter_list:
  - name: first
    filter:
      - function: take_first
  - name: maj@3
    filter:
      - function: majority_vote
      - function: take_first
"""

MC = """\
task: cs_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/mc.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
"""

YESNO = """\
task: cs_yesno
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/yesno.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}?"
doc_to_choice: ["no", "yes"]
doc_to_target: label
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: f1
    aggregation: f1
    higher_is_better: true
  - metric: mcc
    aggregation: matthews_corrcoef
    higher_is_better: true
"""

ROLLING = """\
task: cs_rolling
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}/rolling.jsonl
test_split: test
output_type: loglikelihood_rolling
doc_to_text: ""
doc_to_target: "{{{{text}}}}"
metric_list:
  - metric: word_perplexity
  - metric: byte_perplexity
  - metric: bits_per_byte
"""


def documents() -> dict[str, list[dict[str, object]]]:
    """The four tasks' documents: three per passage."""
    gen, mc, yesno, rolling = [], [], [], []
    for i in range(12):
        passage = PASSAGES[i // 3]
        # the dummy model answers "lol": a document whose answer is "lol" is answered right
        gen.append(
            {"question": f"question {i}", "answer": "lol" if i % 3 else "no", "passage": passage}
        )
        mc.append(
            {
                "question": f"Question {i}:",
                "choices": [f" option {c}" for c in "ABCD"],
                "label": i % 4,
                "passage": passage,
            }
        )
        yesno.append({"question": f"Is statement {i} true", "label": i % 2, "passage": passage})
        rolling.append(
            {"text": f"Passage {passage}, sentence {i}: " + "words " * (i + 3), "passage": passage}
        )
    return {"gen": gen, "mc": mc, "yesno": yesno, "rolling": rolling}


def run(tasks: Path, out: Path, model: str, names: str, seed: int) -> None:
    command = [
        "lm_eval",
        "--model", "dummy",
        "--model_args", f"pretrained={model}",
        "--tasks", names,
        "--include_path", str(tasks),
        "--output_path", str(out),
        "--log_samples",
        "--seed", str(seed),
    ]  # fmt: skip
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(command, check=True, env=environment, cwd=tasks)
    time.sleep(1.1)  # the harness names its files by the second: keep runs apart


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        tasks = Path(scratch) / "tasks"
        tasks.mkdir()
        for name, rows in documents().items():
            text = "".join(json.dumps(row) + "\n" for row in rows)
            (tasks / f"{name}.jsonl").write_text(text, encoding="utf-8")
        for name, template in (("gen", GEN), ("mc", MC), ("yesno", YESNO), ("rolling", ROLLING)):
            (tasks / f"{name}.yaml").write_text(template.format(data=tasks), encoding="utf-8")
        out = Path(scratch) / "out"
        every = "cs_gen,cs_mc,cs_yesno,cs_rolling"
        run(tasks, out, "dummy-a", every, 0)
        run(tasks, out, "dummy-b", every, 1)
        run(tasks, out, "dummy-a", "cs_mc", 2)
        if OUT.exists():
            shutil.rmtree(OUT)
        for file in sorted(out.rglob("*")):
            if file.is_file():
                target = OUT / file.relative_to(out)
                target.parent.mkdir(parents=True, exist_ok=True)
                text = file.read_text(encoding="utf-8").replace(str(tasks), "<tasks>")
                target.write_text(text, encoding="utf-8")
    for file in sorted(OUT.rglob("*")):
        if file.is_file():
            print(file.relative_to(OUT.parent), file.stat().st_size)


if __name__ == "__main__":
    main()
