"""The notebook HTML of every result class, rendered in a real headless browser (optional:
runs where Chromium or Chrome is installed, e.g. Debian's ``chromium`` package; skipped
elsewhere, CI included). ``tools/screenshot_html.py`` keeps the screenshot in the docs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import screenshot_html  # noqa: E402

BROWSER = screenshot_html.browser()


@pytest.mark.skipif(BROWSER is None, reason="no Chromium or Chrome installed")
def test_every_result_renders_in_a_browser(tmp_path):
    np = pytest.importorskip("numpy")
    image = pytest.importorskip("PIL.Image")
    target = tmp_path / "results.png"
    screenshot_html.screenshot(screenshot_html.page(), target, BROWSER)
    screenshot_html.crop_to_content(target)
    with image.open(target) as shot:
        pixels = np.asarray(shot.convert("L"))
    # the page drew text all the way down (13 results), not a blank or an error page
    assert pixels.shape[0] > 2000
    assert (pixels < 128).mean() > 0.01


def test_the_screenshot_in_the_docs_shows_every_result_class():
    names = set(screenshot_html.results())
    import clusterstats

    shown = {name.split(" ")[0] for name in names}
    classes = {n for n in clusterstats.results.__all__ if n != "DatasetInfo"}
    assert classes <= shown | {"Gate"}  # a Gate is a row of the GateReport shown
    assert screenshot_html.SHOT.exists()
