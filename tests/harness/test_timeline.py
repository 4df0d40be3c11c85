"""The reproduce timeline: every slot taken and lock held is a line, and the lines fold into waits and holds."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from pysim.harness import exclusive, one_core, timeline

HOLD = textwrap.dedent("""
    import sys, time
    from pysim.harness import exclusive
    with exclusive():
        print("held", flush=True)
        time.sleep(float(sys.argv[1]))
""")


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSIM_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    monkeypatch.delenv("PYSIM_MEASURING", raising=False)
    path = tmp_path / "timeline.jsonl"
    monkeypatch.setenv(timeline.TIMELINE_ENV, str(path))
    return path


def test_a_waiting_notebook_and_the_holder_are_each_a_line_with_their_wait_and_hold(log, monkeypatch):
    monkeypatch.setenv(timeline.WHO_ENV, "second")
    first = subprocess.Popen([sys.executable, "-c", HOLD, "0.5"], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, timeline.WHO_ENV: "first"})
    assert first.stdout.readline().strip() == "held"
    with exclusive():
        pass
    with one_core():
        time.sleep(0.2)
    first.wait(timeout=10)
    rows = timeline.read(log)
    assert sorted((r["who"], r["what"]) for r in rows) == [("first", "exclusive"), ("second", "exclusive"),
                                                          ("second", "one_core")]
    for r in rows:
        assert r["asked"] <= r["got"] <= r["released"]
    s = timeline.summary(rows)
    assert s["first"]["exclusive_s"] >= 0.45 and s["first"]["lock_wait_s"] < 0.2
    assert s["second"]["lock_wait_s"] >= 0.3  # it waited for the first
    assert s["second"]["one_core_s"] >= 0.2 and s["second"]["exclusive_s"] < 0.1


def test_nothing_is_written_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(timeline.TIMELINE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    timeline.record("slot", 1.0, 2.0)
    assert list(tmp_path.iterdir()) == []


def test_slot_waits_and_paused_holds_are_counted_apart_and_a_torn_line_is_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"who": "a", "what": "slot", "asked": 10, "got": 13, "released": null}\n'
                    '{"who": "a", "what": "exclusive", "asked": 20, "got": 21, "released": 25, "pause": true}\n'
                    '{"who": "a", "what": "excl')
    s = timeline.summary(timeline.read(path))["a"]
    assert (s["slot_wait_s"], s["lock_wait_s"], s["exclusive_s"], s["paused_others_s"]) == (3, 1, 4, 4)


def test_a_notebook_run_reports_the_time_it_waited_for_another_measurement(log, monkeypatch):
    import nbformat

    from pysim.reproduce import run_notebook

    monkeypatch.delenv(timeline.TIMELINE_ENV)  # the run keeps a timeline of its own
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("seed = 0\nquick = True"),
                                         nbformat.v4.new_code_cell(
                                             "from pysim.harness import exclusive\nwith exclusive():\n    pass")])
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "3"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    status = run_notebook(nbformat.writes(nb), "waits", seed=0, quick=True, timeout=60)
    holder.wait(timeout=10)
    assert status["ok"], status["error"]
    assert 1.5 <= status["waited_s"] <= status["seconds"]  # it waited for most of the holder's 3 s
    alone = run_notebook(nbformat.writes(nb), "alone", seed=0, quick=True, timeout=60)
    assert alone["waited_s"] < 0.5
