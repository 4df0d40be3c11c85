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
    run = json.loads((out / "runs.json").read_text())["zz99_demo"]  # when it ran, and what it waited for
    assert 0 <= run["started_s"] < run["ended_s"] and run["ended_s"] - run["started_s"] >= 0.9 * run["seconds"]
    assert run["slot_wait_s"] < 5 and run["lock_wait_s"] == 0


def test_the_scorecard_takes_each_notebooks_own_row_which_equals_scoring_the_paper_again(lab_root, tmp_path,
                                                                                         monkeypatch):
    from pysim import reproduce as rp
    from pysim.scorecard import scorecard

    rescored = []
    real = rp.scorecard

    def counting(ids, **kw):
        rescored.extend(pid for pid in ids if pid not in (kw.get("entries") or {}))
        return real(ids, **kw)

    monkeypatch.setattr(rp, "scorecard", counting)
    out = tmp_path / "results"
    _, card = reproduce(["zz99_demo", "zz98_raises"], quick=True, out=out, timeout=120, progress=False)
    row = json.loads((out / "zz99_demo" / "scorecard_entry.json").read_text())
    assert (row["paper"], row["seed"], row["quick"]) == ("zz99_demo", 0, True)
    assert rescored == ["zz98_raises"]  # the failed notebook left no row: scored here instead
    again = scorecard(["zz99_demo"], quick=True, seed=0)["papers"]["zz99_demo"]
    assert card["papers"]["zz99_demo"] == json.loads(json.dumps(again))
    # a row from another seed or profile is not taken
    statuses = {"zz99_demo": {"ok": True}}
    assert set(rp.scored_by_notebooks(out, statuses, 0, True)) == {"zz99_demo"}
    assert rp.scored_by_notebooks(out, statuses, 1, True) == {} == rp.scored_by_notebooks(out, statuses, 0, False)


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


def _copy_demo(root, new_id):
    import shutil

    shutil.copytree(root / "papers" / "zz99_demo", root / "papers" / new_id)
    text = (root / "papers" / new_id / "paper.yaml").read_text().replace("A demonstration paper", f"Demo {new_id}")
    (root / "papers" / new_id / "paper.yaml").write_text(text)
    shutil.copy(root / "notebooks" / "zz99_demo.ipynb", root / "notebooks" / f"{new_id}.ipynb")


def _tables(folder):
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*.csv"))}


@pytest.mark.slow
def test_a_dask_cluster_gives_the_results_of_the_local_run(lab_root, tmp_path):
    """Two worker processes of a real LocalCluster run the notebooks; what they return is what a local run writes."""
    from distributed import LocalCluster

    _copy_demo(lab_root, "zz95_demo")
    ids = ["zz99_demo", "zz95_demo", "zz98_raises"]
    local_statuses, local_card = reproduce(ids, quick=True, out=tmp_path / "local", timeout=120, jobs=2,
                                           progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dask_statuses, dask_card = reproduce(ids, quick=True, out=tmp_path / "dask", timeout=120,
                                             scheduler=cluster.scheduler_address, progress=False)
    for pid in ids:
        assert dask_statuses[pid]["ok"] == local_statuses[pid]["ok"]
    assert not dask_statuses["zz98_raises"]["ok"] and "deliberate failure" in dask_statuses["zz98_raises"]["error"]
    assert _tables(tmp_path / "dask") == _tables(tmp_path / "local")
    assert len(_tables(tmp_path / "dask")) >= 4  # tables of two papers, each table and its comparison
    assert dask_card["papers"] == local_card["papers"]
    assert (tmp_path / "dask" / "zz98_raises.failed.ipynb").exists()


def test_a_sweep_runs_every_point_and_seed_and_refuses_bad_values_first(lab_root):
    from pysim.sweep import sweep

    df = sweep("zz99_demo", "table1", {"b": [0.0, 1.0]}, seeds=[0, 1])
    assert list(df.columns) == ["b", "seed", "x", "y"]
    assert len(df) == 2 * 2 * 3
    y_at_3 = df[(df.x == 3)].set_index(["b", "seed"])["y"]
    assert y_at_3[(0.0, 0)] == 6.0 and y_at_3[(1.0, 1)] == 14.0  # y = a x + b (x^2 - 1), a = 2
    with pytest.raises(ValueError, match="b must be >= 0"):
        sweep("zz99_demo", "table1", {"b": [1.0, -1.0]})
    with pytest.raises(ValueError, match="unknown parameter"):
        sweep("zz99_demo", "table1", {"c": [1]})
