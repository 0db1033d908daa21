"""The package can be published: ``python -m build`` makes a wheel and an sdist that
``twine check`` accepts, with the licence, the README, the changelog and the bundled data,
and one version written once."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import clusterstats

REPO = Path(__file__).resolve().parents[2]


def test_the_version_is_written_once():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "clusterstats.__version__"
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{clusterstats.__version__}]" in changelog
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


def test_build_makes_a_wheel_and_an_sdist_that_twine_accepts(built):
    pytest.importorskip("twine")
    version = clusterstats.__version__
    wheel = built / f"clusterstats-{version}-py3-none-any.whl"
    sdist = built / f"clusterstats-{version}.tar.gz"
    assert wheel.exists()
    assert sdist.exists()
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    data = {n for n in names if n.startswith("clusterstats/data/")}
    assert {f"clusterstats/data/{d}.csv.xz" for d in clusterstats.datasets.list()} <= data
    assert "clusterstats/data/PROVENANCE.md" in data
    assert f"clusterstats-{version}.dist-info/licenses/LICENSE" in names
    assert not [n for n in names if n.startswith("tests/")]
    with tarfile.open(sdist) as archive:
        inside = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"} <= inside
    assert "clusterstats/data/PROVENANCE.md" in inside
    assert not [n for n in inside if n.startswith("tests/")]
