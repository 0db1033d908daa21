"""One command line: help on every option, the same ``--output`` choices wherever a result is
printed, ``--baseline`` on every command that compares two runs, messages that spell options
as the command line does, and warnings (the library's and its logger's) as one ``warning:``
line each."""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
from pathlib import Path

import pytest

import clusterstats as cs
from clusterstats import cli
from clusterstats._display import number
from clusterstats.cli import CI_OUTPUTS, OUTPUTS, build_parser, command_line_spelling, main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _run(argv, capsys):
    status = main([str(word) for word in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def files(tmp_path_factory, bbh, tau):
    folder = tmp_path_factory.mktemp("runs")
    for condition in ("cot", "direct"):
        bbh[bbh.condition == condition].to_csv(folder / f"{condition}.csv", index=False)
    bbh.to_csv(folder / "bbh.csv", index=False)
    tau.to_csv(folder / "tau.csv", index=False)
    # the direct run without its first 3,000 rows: items only the new run has
    cot_only = bbh[bbh.condition == "direct"].iloc[3000:]
    cot_only.to_csv(folder / "direct-part.csv", index=False)
    return folder


# -- help --------------------------------------------------------------------------------------


def test_every_option_of_every_command_has_help():
    without = [
        f"{name} {action.option_strings or action.dest}"
        for name, command in _commands().items()
        for action in command._actions
        if not action.help or action.help == argparse.SUPPRESS
    ]
    assert without == []


def test_method_help_names_the_methods_without_argparse_s_brace_list(capsys):
    with pytest.raises(SystemExit):
        main(["ci", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--method METHOD" in text
    assert "{auto,naive," not in text  # argparse's own listing of 19 choices
    assert "the interval method (default auto): auto, naive, cr1," in text


# -- --output ------------------------------------------------------------------------------------


def test_output_offers_the_same_choices_wherever_a_result_is_printed():
    offered = {}
    for name, command in _commands().items():
        for action in command._actions:
            if "--output" in action.option_strings and action.choices is not None:
                offered[name] = tuple(action.choices)
    # annotate's --output is the file it writes; demo and datasets print no result
    assert set(offered) == set(_commands()) - {"annotate", "demo", "datasets"}
    assert offered.pop("ci") == CI_OUTPUTS
    assert set(offered.values()) == {OUTPUTS}
    assert "markdown" in OUTPUTS


@pytest.mark.parametrize(
    "words",
    [
        ["ci", "tau.csv", "--outcome", "reward", "--by", "task_id"],
        ["ci", "bbh.csv", "--outcome", "correct", "--by", "task", "--over", "condition"],
        [
            "paired",
            "cot.csv",
            "--baseline",
            "direct.csv",
            "--outcome",
            "correct",
            "--by",
            "task",
            "--on",
            "item_id",
        ],
        [
            "passk",
            "tau.csv",
            "--outcome",
            "reward",
            "--case",
            "task_id",
            "--rerun",
            "trial",
            "--k",
            "2",
        ],
        ["flakiness", "tau.csv", "--outcome", "reward", "--case", "task_id", "--rerun", "trial"],
        ["check", "tau.csv", "--outcome", "reward", "--candidate", "task_id"],
        ["plan", "tau.csv", "--outcome", "reward", "--by", "task_id"],
        ["gate", "tau.csv", "--outcome", "reward", "--by", "task_id", "--at-least", "0.3"],
    ],
    ids=lambda words: " ".join(words[:1] + words[-2:]),
)
def test_markdown_wherever_a_result_is_printed(capsys, files, words, monkeypatch):
    monkeypatch.chdir(files)
    status, out, _ = _run([*words, "--output", "markdown"], capsys)
    assert status == 0
    assert out.startswith(("**", "### "))  # a gate's report has a heading of its own
    assert "\n|---|" in out  # a GitHub table
    # the same numbers as the text output, at the same format
    _, text, _ = _run([*words, "--output", "json"], capsys)
    record = json.loads(text)
    first = record["rows"][0] if "rows" in record else record
    first = first[0] if isinstance(first, list) else first
    shown = {k: v for k, v in first.items() if k in ("estimate", "delta", "flaky_rate")}
    for value in shown.values():
        assert f"| {number(value)} |" in out


def test_one_row_markdown_shows_the_result_s_lines_and_notes(capsys, files, tau):
    status, out, _ = _run(
        ["ci", files / "tau.csv", "--outcome", "reward", "--by", "task_id", "--output", "markdown"],
        capsys,
    )
    assert status == 0
    res = cs.cluster_ci(tau, "reward", "task_id")
    lines = repr(res).splitlines()
    assert out.splitlines()[0] == f"**{lines[0]}**"
    for line in lines[1:]:  # every line of the text is in the Markdown
        assert line.strip() in out


# -- --baseline ----------------------------------------------------------------------------------

PAIRED = ["--outcome", "correct", "--by", "task", "--on", "item_id", "--output", "json"]


def test_paired_takes_the_baseline_as_an_option_and_by_position_with_a_note(capsys, files):
    new, old = files / "cot.csv", files / "direct.csv"
    status, by_option, err = _run(["paired", new, "--baseline", old, *PAIRED], capsys)
    assert (status, err) == (0, "")
    status, by_position, err = _run(["paired", new, old, *PAIRED], capsys)
    assert status == 0
    assert by_position == by_option
    assert err == (
        f"note: the baseline by position (paired NEW {old}) still works; --baseline {old} is "
        "the form gate and plan share\n"
    )
    # options before the second file, as before
    words = ["paired", new, "--by", "task", old, "--outcome", "correct", "--on", "item_id"]
    status, interleaved, _ = _run([*words, "--output", "json"], capsys)
    assert (status, interleaved) == (0, by_option)
    status, out, err = _run(["paired", new, old, "--baseline", old, *PAIRED], capsys)
    assert (status, out) == (2, "")
    assert err.endswith("give one, as --baseline FILE\n")
    status, out, err = _run(["paired", new, *PAIRED], capsys)
    assert (status, out) == (2, "")
    assert (
        err
        == "clusterstats: error: paired compares two runs: give the baseline as --baseline FILE\n"
    )


def test_plan_takes_the_baseline_as_gate_and_paired_do(capsys, files):
    words = ["plan", files / "cot.csv", "--outcome", "correct", "--by", "task"]
    words += ["--on", "item_id", "--effect", "0.05", "--output", "json"]
    status, by_baseline, err = _run([*words, "--baseline", files / "direct.csv"], capsys)
    assert (status, err) == (0, "")
    status, by_other, err = _run([*words, "--other", files / "direct.csv"], capsys)
    assert (status, by_other) == (0, by_baseline)
    assert err.startswith("note: --other still works; --baseline ")
    status, _, err = _run([*words, "--other", "a.csv", "--baseline", "b.csv"], capsys)
    assert status == 2
    assert "given twice" in err


# -- options in messages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "message", "spelt"),
    [
        ("paired", "pass how='inner' to compare", "pass --how inner to compare"),
        ("paired", "name it with on=, or", "name it with --on, or"),
        ("paired", "pass on='<item key column>'", "pass --on <item key column>"),
        ("ci", "by=['doc', 'template'] makes", "--by doc --by template makes"),
        (
            "ci",
            "pass crossed=True (--crossed on the command line; check_clustering compares)",
            "pass --crossed (check_clustering compares)",
        ),
        ("ci", "n_resamples=10 is too few", "--n-resamples 10 is too few"),
        ("ci", "with rng=3", "with --seed 3"),  # the option's dest is the library's keyword
        ("ci", "pass key= (--key on the command line)", "pass --key"),
        ("ci", "with key='a b'", "with --key 'a b'"),
        ("ci", "pass how='inner'", "pass how='inner'"),  # ci has no --how
        ("ci", "estimate=0.5 and x==1", "estimate=0.5 and x==1"),  # not options
        ("ci", "weights==3", "weights==3"),
        ("gate", "give bounds=(low, high)", "give --bounds low high"),
        ("gate", "at_least=60 on a 0/1 outcome", "--at-least 60 on a 0/1 outcome"),
        ("gate", "margin=0.02.", "--margin 0.02."),
        ("gate", "with sequential=True", "with --sequential"),
        ("annotate", "no metadata field 'doc' (cluster=)", "no metadata field 'doc' (--by)"),
        ("plan", "with other=", "with --baseline"),
        ("compare", "at most top=6 places", "at most --top 6 places"),
    ],
)
def test_messages_name_options_as_the_command_line_spells_them(command, message, spelt):
    assert command_line_spelling(message, _commands()[command]) == spelt


def test_every_long_option_is_in_the_translation_table():
    for command in _commands().values():
        table = cli.option_spellings(command)
        for action in command._actions:
            for option in (o for o in action.option_strings if o.startswith("--")):
                if option != "--help":
                    assert table[option[2:].replace("-", "_")] is action


#: A library keyword left in a message: ``name=`` not followed by ``=``.
KEYWORD = re.compile(r"(?<![\w.\-])[a-z_]+=(?!=)")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            [
                "paired",
                "cot.csv",
                "--baseline",
                "direct-part.csv",
                "--outcome",
                "correct",
                "--by",
                "task",
                "--on",
                "item_id",
            ],
            "--how inner",
        ),
        (
            [
                "ci",
                "tau.csv",
                "--outcome",
                "reward",
                "--by",
                "task_id",
                "--method",
                "bootstrap",
                "--n-resamples",
                "10",
            ],
            "--n-resamples 10 is too few",
        ),
        (
            [
                "gate",
                "cot.csv",
                "--baseline",
                "direct.csv",
                "--on",
                "item_id",
                "--outcome",
                "correct",
                "--by",
                "task",
                "--margin",
                "2",
            ],
            "--margin 2 on an outcome in [0, 1]",
        ),
        (
            [
                "compare",
                "bbh.csv",
                "--outcome",
                "correct",
                "--by",
                "task",
                "--model",
                "condition",
                "--on",
                "item_id",
                "--top",
                "3",
            ],
            "--top 3",
        ),
        (
            [
                "passk",
                "tau.csv",
                "--outcome",
                "reward",
                "--case",
                "task_id",
                "--rerun",
                "trial",
                "--k",
                "9",
            ],
            "--k 9",
        ),
    ],
    ids=["paired", "ci", "gate", "compare", "passk"],
)
def test_errors_of_every_command_spell_their_options(capsys, files, monkeypatch, words, expected):
    monkeypatch.chdir(files)
    status, out, err = _run(words, capsys)
    assert status == (3 if words[0] == "gate" else 2)
    assert out == ""
    (line,) = err.splitlines()
    assert expected in line
    assert not KEYWORD.findall(line.replace("clusterstats: error: ", "")), line


def test_compare_without_an_item_key_names_the_option_that_fixes_it(capsys, tmp_path):
    # RepoQA: each system answered its own needles, so without --on nothing pairs
    cs.datasets.load("repoqa_snf").to_csv(tmp_path / "repoqa.csv", index=False)
    words = ["compare", tmp_path / "repoqa.csv", "--outcome", "correct", "--by", "repo"]
    status, out, err = _run([*words, "--model", "system"], capsys)
    assert (status, out) == (2, "")
    assert "--on" in err
    assert not KEYWORD.findall(err), err
    assert "how='inner'" not in err


# -- warnings ------------------------------------------------------------------------------------


def test_annotate_warns_once_with_the_prefix_whatever_the_scorers(capsys, tmp_path):
    pytest.importorskip("inspect_ai")
    (log,) = sorted((FIXTURES / "complete").glob("*.eval"))
    copy = tmp_path / "run.eval"
    shutil.copyfile(log, copy)
    logger = logging.getLogger("clusterstats")
    handlers, propagates = list(logger.handlers), logger.propagate
    status, out, err = _run(["annotate", copy, "--by", "nope"], capsys)
    assert status == 0
    assert out.count(": cluster_ci estimate nan") == 2  # two scorers, neither computed
    assert err.splitlines() == [
        "warning: clusterstats/cluster_ci: no value (InvalidInputError: sample 'q0' (score 0) "
        "has no metadata field 'nope'; its fields: ['doc', 'fail_fast'])"
    ]
    # the logger is as the command found it
    assert (list(logger.handlers), logger.propagate) == (handlers, propagates)


def test_an_unexpected_failure_of_gate_is_error_3_with_its_traceback(capsys, files, monkeypatch):
    import clusterstats.gating

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(clusterstats.gating, "gate", broken)
    words = ["gate", files / "tau.csv", "--outcome", "reward", "--by", "task_id"]
    status, out, err = _run([*words, "--at-least", "0.3"], capsys)
    assert (status, out) == (3, "")  # Python's own status, 1, would read as a fail
    assert "Traceback" in err
    assert err.splitlines()[-1] == (
        "clusterstats: error: unexpected RuntimeError (a bug in clusterstats: please report it)"
    )
