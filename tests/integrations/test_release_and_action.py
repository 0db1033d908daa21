"""The repository's GitHub Action (``action.yml``) and release workflow
(``.github/workflows/release.yml``): their ``run:`` steps execute here as written, with the
``${{ ... }}`` expressions filled in as GitHub would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

import clusterstats

REPO = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # the shell GitHub runs a `shell: bash` step with
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _filled(script: str, values: dict[str, str]) -> str:
    """``${{ a || b }}`` replaced by the first of ``values[a]``, ``values[b]`` that is not
    empty (a name the runner would not know is an error; a step output not written is
    empty, as on GitHub)."""

    def value(name: str) -> str:
        return values[name] if not name.startswith("steps.") else values.get(name, "")

    def expression(match: re.Match) -> str:
        names = [part.strip() for part in match.group(1).split("||")]
        return next((v for v in map(value, names) if v), "")

    return re.sub(r"\$\{\{\s*([\w.|\s-]+?)\s*\}\}", expression, script)


def _environment(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
    }


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arms")
    bbh = clusterstats.datasets.load("bbh")
    for condition in ("cot", "direct"):
        bbh[bbh.condition == condition].to_csv(folder / f"{condition}.csv", index=False)
    return folder


#: The install command as action.yml writes it; the tests resolve it without installing
#: (``--dry-run``: this checkout is already installed in the interpreter under test), or,
#: for a fresh virtual environment, only check that its pip runs.
INSTALL = '"$python" -m pip install --quiet "$ACTION_PATH"'
#: A runner's PATH after actions/setup-python: its interpreter's bin folder first.
SET_UP = f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
#: A runner's PATH without a set-up step, and without this environment's bin folder.
BARE = f"/usr/bin{os.pathsep}/bin"


class Ran(NamedTuple):
    code: int  # the action's status: its last step's
    outputs: dict[str, str]  # the action's outputs, as action.yml maps them
    steps: dict[str, dict[str, str]]  # each step's own outputs
    log: str  # what the steps printed


def _run_action(
    tmp_path: Path,
    workdir: Path,
    *,
    path: str = SET_UP,
    install: str = '"$python" -m pip install --dry-run --quiet "$ACTION_PATH"',
    **given: str,
) -> Ran:
    """The action's steps as a runner runs them: each in bash with the step's ``env:``
    filled in, its own ``$GITHUB_OUTPUT`` file, the job's ``$GITHUB_STEP_SUMMARY`` and
    ``$RUNNER_TEMP``, the given ``PATH``; a step that fails skips the ones after it."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given)
    values = {f"inputs.{name}": value for name, value in inputs.items()}
    values["github.action_path"] = str(REPO)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    base = {key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV",))}
    base.update(
        PATH=path,
        RUNNER_TEMP=str(runner_temp),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
    )
    code, steps, log = 0, {}, ""
    for step in action["runs"]["steps"]:
        # inputs reach the scripts through env:, never pasted into the script's text
        assert "${{" not in step["run"], step["name"]
        script = step["run"]
        if step["id"] == "install":
            assert script.count(INSTALL) == 1
            script = script.replace(INSTALL, install)
        output = tmp_path / f"{step['id']}-output.txt"
        output.unlink(missing_ok=True)
        env = {**base, "GITHUB_OUTPUT": str(output)}
        env.update({k: _filled(str(v), values) for k, v in step.get("env", {}).items()})
        done = _bash(script, workdir, env)
        log += done.stdout + done.stderr
        text = output.read_text(encoding="utf-8") if output.exists() else ""
        steps[step["id"]] = dict(line.split("=", 1) for line in text.splitlines())
        values.update({f"steps.{step['id']}.outputs.{k}": v for k, v in steps[step["id"]].items()})
        code = done.returncode
        if code != 0:
            break
    outputs = {name: _filled(spec["value"], values) for name, spec in action["outputs"].items()}
    return Ran(code, outputs, steps, log)


def test_the_action_gates_a_change_against_its_baseline(tmp_path, arms):
    ran = _run_action(
        tmp_path,
        arms,
        results="cot.csv",
        baseline="direct.csv",
        margin="0.02",
        **{"item-key": "item_id"},
        outcome="correct",
        by="task",
    )
    assert (ran.code, ran.outputs) == (0, {"verdict": "pass", "exit-code": "0"}), ran.log
    assert "✅" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_the_action_fails_the_job_or_warns_on_an_inconclusive_gate(tmp_path, arms):
    options = {"results": "direct.csv", "outcome": "correct", "by": "task", "at-least": "0.5"}
    ran = _run_action(tmp_path, arms, **options)
    assert (ran.code, ran.outputs["verdict"]) == (2, "inconclusive")
    ran = _run_action(tmp_path, arms, **options, **{"fail-on-inconclusive": "false"})
    assert (ran.code, ran.outputs["verdict"]) == (0, "inconclusive")
    assert "::warning::" in ran.log
    ran = _run_action(tmp_path, arms, **{**options, "at-least": "0.9"})
    assert (ran.code, ran.outputs["verdict"]) == (1, "fail")


#: direct.csv's pass rate is 0.5234 (docs/cli.md, BBH direct): a gate at 0.3 passes.
PASSING = {"results": "direct.csv", "outcome": "correct", "by": "task", "at-least": "0.3"}


def test_the_action_runs_the_gate_with_its_python_input_off_path(tmp_path, arms):
    """An interpreter whose bin folder is not on PATH (no `clusterstats` command to find):
    the install and the gate both use it."""
    assert not any((Path(folder) / "clusterstats").exists() for folder in BARE.split(os.pathsep)), (
        "the bare PATH must not hold a clusterstats command for this test to mean anything"
    )
    python = str(Path(sys.executable).parent / "python")
    ran = _run_action(tmp_path, arms, path=BARE, python=python, **PASSING)
    assert (ran.code, ran.outputs) == (0, {"verdict": "pass", "exit-code": "0"}), ran.log
    assert ran.steps["install"]["python"] == python


def test_the_action_runs_with_the_set_up_python_by_default(tmp_path, arms):
    """The default python3 after a set-up step: the first python3 on PATH."""
    ran = _run_action(tmp_path, arms, path=SET_UP, **PASSING)
    assert (ran.code, ran.outputs) == (0, {"verdict": "pass", "exit-code": "0"}), ran.log
    assert Path(ran.steps["install"]["python"]).parent == Path(sys.executable).parent


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ("--confidence 95%", "invalid float value"),  # argparse's refusal
        ("--method nope", "invalid choice"),
    ],
)
def test_a_bad_option_is_the_documented_error(tmp_path, arms, options, problem):
    ran = _run_action(tmp_path, arms, options=options, **PASSING)
    assert (ran.code, ran.outputs) == (3, {"verdict": "error", "exit-code": "3"})
    assert problem in ran.log


def test_whatever_stops_the_gate_is_error_3_never_its_own_status(tmp_path, arms):
    """exit-code is one of the documented values whatever goes wrong: no interpreter, a
    program that is not Python, a Python without clusterstats (``-m`` would exit 1, a
    fail's status), or a gate that dies with a status of its own."""
    error = (3, {"verdict": "error", "exit-code": "3"})
    ran = _run_action(tmp_path, arms, python=str(tmp_path / "no-python"), **PASSING)
    assert (ran.code, ran.outputs) == error, ran.log
    assert "no Python" in ran.log
    assert "setup-python" in ran.log
    assert "gate" not in ran.steps  # a failed step skips the ones after it
    ran = _run_action(tmp_path, arms, path=BARE, python="/usr/bin/false", **PASSING)
    assert (ran.code, ran.outputs) == error, ran.log
    assert "does not run" in ran.log
    bare = tmp_path / "bare"  # a Python of its own without clusterstats (install skipped)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    ran = _run_action(tmp_path, arms, path=BARE, python=python, install="true", **PASSING)
    assert (ran.code, ran.outputs) == error, ran.log
    assert "cannot import clusterstats" in ran.log
    # a "Python" that imports anything and whose gate dies with status 5
    dying = tmp_path / "dying-python"
    dying.write_text('#!/bin/sh\n[ "$1" = -c ] && exit 0\nexit 5\n')
    dying.chmod(0o755)
    ran = _run_action(tmp_path, arms, path=BARE, python=str(dying), install="true", **PASSING)
    assert (ran.code, ran.outputs) == error, ran.log
    assert "exited with status 5" in ran.log


def _externally_managed_python() -> str | None:
    """A system Python that refuses pip install (PEP 668), if this machine has one."""
    check = (
        "import os, sys, sysconfig; print(sys.prefix == sys.base_prefix and os.path.isfile("
        "os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"
    )
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).exists():
            done = subprocess.run([candidate, "-c", check], capture_output=True, text=True)
            if done.stdout.strip() == "True":
                return candidate
    return None


def test_an_externally_managed_python_gets_a_virtual_environment(tmp_path, arms):
    """Without a set-up step, on a runner whose python3 is externally managed (Ubuntu
    24.04's): the install step makes a virtual environment under $RUNNER_TEMP and installs
    with its pip (checked here by running that pip; installing would need the network), and
    the gate step is handed that environment's Python."""
    python = _externally_managed_python()
    if python is None:
        pytest.skip("no externally managed Python on this machine")
    ran = _run_action(
        tmp_path,
        arms,
        path=BARE,
        python=python,
        install='"$python" -m pip --version',
        **PASSING,
    )
    venv = tmp_path / "runner-temp" / "clusterstats-venv"
    assert ran.steps["install"]["python"] == str(venv / "bin" / "python"), ran.log
    assert "externally managed (PEP 668)" in ran.log
    assert f"{venv}" in ran.log  # its pip ran
    # clusterstats is not installed there (the install was not run): the documented error
    assert (ran.code, ran.outputs) == (3, {"verdict": "error", "exit-code": "3"}), ran.log


def test_the_release_workflow_builds_and_tests_the_wheel_in_a_clean_environment(tmp_path):
    pytest.importorskip("build")
    workflow = yaml.safe_load(
        (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    )
    steps = workflow["jobs"]["build"]["steps"]
    scripts = [step["run"] for step in steps if "run" in step]
    assert len(scripts) == 3
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(checkout)], check=True)
    env = {k: v for k, v in _environment(tmp_path).items() if k != "GITHUB_REF_NAME"}
    for script in scripts:  # in a clone of the committed tree, as the workflow checks it out
        done = _bash(script, checkout, env)
        assert done.returncode == 0, (script, done.stdout[-2000:], done.stderr[-2000:])
    # the clean environment ran the demo and a clustered interval from the installed wheel
    assert "ClusterCI over model" in done.stdout
    assert sorted(p.suffix for p in (checkout / "dist").iterdir()) == [".gz", ".whl"]


def test_the_documented_use_of_the_action_names_its_real_inputs():
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    page = (REPO / "docs" / "gate.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if "clusterstats@" in b]
    set_up, step = yaml.safe_load(block)
    # the documented use sets Python up first: the action installs into that python3
    assert set_up["uses"].startswith("actions/setup-python@")
    assert "clusterstats@" in step["uses"]
    assert set(step["with"]) <= set(action["inputs"])
    required = {name for name, spec in action["inputs"].items() if spec.get("required")}
    assert required <= set(step["with"])
    for name in action["inputs"]:
        assert f"`{name}`" in page, name
    # and it says what happens without the set-up step
    assert "externally managed" in page
    assert "$RUNNER_TEMP" in page
