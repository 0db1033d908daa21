"""The repository's GitHub Action (``action.yml``) and release workflow
(``.github/workflows/release.yml``): their ``run:`` steps execute here as written, with the
``${{ ... }}`` expressions filled in as GitHub would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clusterstats

REPO = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _filled(script: str, values: dict[str, str]) -> str:
    """``${{ name }}`` replaced by ``values[name]`` (an unknown name is an error)."""
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values[m.group(1)], script)


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


def _run_action(tmp_path: Path, arms: Path, **given: str) -> tuple[int, dict[str, str]]:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    inputs.update(given)
    values = {f"inputs.{name}": value for name, value in inputs.items()}
    values["inputs.python"] = sys.executable
    values["github.action_path"] = str(REPO)
    install, gate = action["runs"]["steps"]
    # the install step as written, but resolved without installing (the suite's own
    # environment already holds this checkout)
    script = _filled(install["run"], values).replace("install --quiet", "install --dry-run --quiet")
    done = _bash(script, tmp_path, _environment(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**_environment(tmp_path), **{k: _filled(v, values) for k, v in gate["env"].items()}}
    done = _bash(gate["run"], arms, env)
    outputs = dict(
        line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines()
    )
    return done.returncode, outputs


def test_the_action_gates_a_change_against_its_baseline(tmp_path, arms):
    code, outputs = _run_action(
        tmp_path,
        arms,
        results="cot.csv",
        baseline="direct.csv",
        margin="0.02",
        **{"item-key": "item_id"},
        outcome="correct",
        by="task",
    )
    assert (code, outputs) == (0, {"verdict": "pass", "exit-code": "0"})
    assert "✅" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_the_action_fails_the_job_or_warns_on_an_inconclusive_gate(tmp_path, arms):
    options = {"results": "direct.csv", "outcome": "correct", "by": "task", "at-least": "0.5"}
    code, outputs = _run_action(tmp_path, arms, **options)
    assert (code, outputs["verdict"]) == (2, "inconclusive")
    (tmp_path / "output.txt").unlink()
    code, outputs = _run_action(tmp_path, arms, **options, **{"fail-on-inconclusive": "false"})
    assert (code, outputs["verdict"]) == (0, "inconclusive")
    (tmp_path / "output.txt").unlink()
    code, outputs = _run_action(tmp_path, arms, **{**options, "at-least": "0.9"})
    assert (code, outputs["verdict"]) == (1, "fail")


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
    (step,) = yaml.safe_load(block)
    assert set(step["with"]) <= set(action["inputs"])
    required = {name for name, spec in action["inputs"].items() if spec.get("required")}
    assert required <= set(step["with"])
    for name in action["inputs"]:
        assert f"`{name}`" in page, name
