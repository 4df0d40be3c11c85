"""Headless reproduction: results layout, the scorecard's shape, failures and time-outs, atomic writes."""
import json
import os

import pytest

from pysim import cli
from pysim.reproduce import reproduce
from pysim.results import write_text_atomic


def test_a_good_notebook_fills_results_and_the_scorecard(lab_root, tmp_path):
    out = tmp_path / "results"
    statuses, card = reproduce(["zz99_demo"], quick=True, out=out, timeout=120, progress=False)
    assert statuses["zz99_demo"]["ok"], statuses
    files = {p.name for p in (out / "zz99_demo").iterdir()}
    assert {"zz99_demo.ipynb", "zz99_demo.html", "table1.csv", "figure_y.png", "figure_y.svg"} <= files
    saved = json.loads((out / "scorecard.json").read_text())
    assert set(saved) == {"generated", "profile", "seed", "papers"} and saved["profile"] == "quick"
    paper = saved["papers"]["zz99_demo"]
    counts = {"predictions_scored", "predictions_within", "fits", "inputs", "doubtful", "claims", "claims_held",
              "claims_can_fail", "claims_cannot_fail"}
    assert set(paper) >= {"title", "verdict", "artifacts", "deviations", "not_modelled"} | counts
    for art in paper["artifacts"].values():
        assert set(art) >= {"verdict"} | counts
        assert art["verdict"] in ("replicated", "partly replicated", "not replicated", "not applicable", "error")
    table1 = paper["artifacts"]["table1"]
    assert (table1["fits"], table1["predictions_scored"], table1["predictions_within"]) == (1, 2, 1)
    assert (table1["claims_can_fail"], table1["claims_held"]) == (2, 1)
    assert "zz99_demo" in (out / "index.html").read_text()
    assert "| **zz99_demo** |" in (out / "scorecard.md").read_text()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging folders left


def test_a_failing_and_a_hanging_notebook_are_reported_and_the_run_goes_on(lab_root, tmp_path):
    out = tmp_path / "results"
    statuses, _ = reproduce(["zz98_raises", "zz97_hangs", "zz99_demo"], quick=True, out=out, timeout=5,
                            jobs=2, progress=False)
    assert statuses["zz99_demo"]["ok"]
    assert not statuses["zz98_raises"]["ok"] and "deliberate failure" in statuses["zz98_raises"]["error"]
    assert not statuses["zz97_hangs"]["ok"] and "imeout" in statuses["zz97_hangs"]["error"]
    assert not (out / "zz98_raises").exists()  # nothing half-written in its place
    assert (out / "zz98_raises.failed.ipynb").exists()


def test_the_command_exits_non_zero_only_when_a_notebook_fails(lab_root, tmp_path, capsys):
    assert cli.main(["reproduce", "zz99_demo", "--quick", "--out", str(tmp_path / "a")]) == 0
    assert cli.main(["reproduce", "zz98_raises", "--quick", "--out", str(tmp_path / "b")]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("command reproduce | papers zz99_demo | seed 0 | quick True")


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    write_text_atomic(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # the temporary file is gone too
