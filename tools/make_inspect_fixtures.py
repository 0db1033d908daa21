"""Write the inspect_ai logs that tests/integrations/test_inspect_logs.py reads
(tests/fixtures/inspect/).

Real output of inspect_ai on its mock model (``mockllm/model``, offline), one task of 12
samples in 4 documents, 3 epochs, run three ways:

* ``complete/``: every state a reader must handle in one log: sample ``q5`` raises in the
  solver (errored: no score); sample ``q8`` keeps generating until the message limit stops it
  (``limit: message``, and inspect still scores it and counts it in its metrics); the
  ``flaky`` scorer's value depends on the epoch (reruns disagree); the ``details`` scorer
  returns a dict (``{"correct": ..., "length": ...}``);
* ``retried/``: a fail-fast run (``fail_on_error=True``) that stops at the first error, and
  its ``eval_retry``, which carries the completed samples over and runs the rest: the same
  (sample, epoch) appears in both logs.

Usage (inspect_ai 0.3.285, as in the test extras)::

    python tools/make_inspect_fixtures.py        # rewrites tests/fixtures/inspect/
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import inspect_ai
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import _model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, includes, scorer
from inspect_ai.solver import TaskState, solver

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "inspect"
# q3 fails on its first attempt only, so the retry succeeds; a file remembers the attempt
# because eval_retry imports this script afresh.
FAILED_ONCE = OUT / "q3-failed-once"


@solver
def tools_that_misbehave():
    async def solve(state: TaskState, generate_):
        if state.sample_id == "q5" and not state.metadata.get("fail_fast"):
            raise RuntimeError("tool failure")
        fails_now = state.metadata.get("fail_fast") and not FAILED_ONCE.exists()
        if state.sample_id == "q3" and fails_now:
            FAILED_ONCE.touch()
            raise RuntimeError("transient failure")
        state = await generate_(state)
        if state.sample_id == "q8":  # keeps talking until the message limit stops it
            for _ in range(10):
                state = await generate_(state)
        return state

    return solve


@scorer(metrics=[accuracy()])
def flaky():
    async def score(state: TaskState, target: Target) -> Score:
        index = int(str(state.sample_id)[1:])
        return Score(value=CORRECT if (index + state.epoch) % 3 else INCORRECT)

    return score


@scorer(metrics={"correct": [accuracy()], "length": [accuracy()]})
def details():
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value={"correct": int("Default" in text), "length": len(text)})

    return score


@task
def fixture_task(fail_fast: bool = False):
    samples = [
        Sample(
            input=f"question {i}",
            target="Default" if i % 3 else "never said",
            id=f"q{i}",
            metadata={"doc": f"doc{i // 3}", "fail_fast": fail_fast},
        )
        for i in range(12)
    ]
    return Task(
        dataset=samples,
        solver=[tools_that_misbehave()],
        scorer=[includes(), flaky(), details()],
        message_limit=6,
    )


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "retried").mkdir(parents=True)
    # The mock provider counts tokens with a tiktoken vocabulary that it would download; a
    # character count keeps the run offline.
    _model.count_text_tokens = lambda text: max(1, len(text) // 4)
    (complete,) = inspect_ai.eval(
        fixture_task(),
        model="mockllm/model",
        log_dir=str(OUT / "complete"),
        epochs=3,
        fail_on_error=False,
        display="none",
    )
    (failed,) = inspect_ai.eval(
        fixture_task(fail_fast=True),
        model="mockllm/model",
        log_dir=str(OUT / "retried"),
        epochs=3,
        fail_on_error=True,
        max_samples=1,
        display="none",
    )
    retried = inspect_ai.eval_retry(failed, log_dir=str(OUT / "retried"), display="none")
    FAILED_ONCE.unlink()
    for log in (complete, failed, *retried):
        print(log.status, log.location)
    print(f"inspect_ai {inspect_ai.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
