"""Every paper notebook, and its course edition without solutions, runs top to bottom in quick mode in a
fresh kernel; committed notebooks are clean.

The runs start when the session is collected (tests/notebook_pool.py), and each test waits for its own;
a notebook's own time is measured inside its process."""
import json

import pytest

from pysim import ledger
from pysim.reproduce import execute_notebook, notebook_path, store
from pysim.student import PLACEHOLDER, strip_solutions

NOTEBOOKS = sorted(notebook_path("x").parent.glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs_and_with_a_parameters_cell(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    if path.stem != "index":
        assert "parameters" in code[0].get("metadata", {}).get("tags", [])
        assert {"seed", "quick"} <= {line.split("=")[0].strip() for line in "".join(code[0]["source"]).splitlines()}


def test_every_paper_has_a_notebook():
    assert {p.stem for p in NOTEBOOKS} >= set(ledger.paper_ids())


@pytest.mark.parametrize("paper_id", ledger.paper_ids())
def test_notebook_runs_in_quick_mode(paper_id, notebook_runs, tmp_path):
    status = store(notebook_runs.futures["quick", paper_id].result(), tmp_path / paper_id)
    assert status["ok"], status["error"]
    # its own time: waiting for a CPU slot or for another notebook's real measurement is not
    assert status["seconds"] - status["waited_s"] < 60, status
    files = {p.suffix for p in (tmp_path / paper_id).iterdir()}
    assert {".ipynb", ".html", ".png", ".svg", ".csv"} <= files


@pytest.mark.parametrize("paper_id", ledger.paper_ids())
def test_the_course_edition_runs_without_its_solutions(paper_id, notebook_runs, tmp_path):
    nb = json.loads(notebook_runs.students[paper_id].read_text())
    tags = [t for c in nb["cells"] for t in c.get("metadata", {}).get("tags", [])]
    assert "solution" not in tags and tags.count("answer") >= 1
    status = store(notebook_runs.futures["course", paper_id].result(), tmp_path / "out")
    assert status["ok"], status["error"]


def test_stripping_replaces_each_solution_with_an_empty_answer_cell():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {"tags": ["exercise"]}, "source": "Q"},
                    {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "secret = 42",
                     "outputs": [], "execution_count": None, "id": "s1"}]}
    out = strip_solutions(nb)
    assert out["cells"][1]["source"] == PLACEHOLDER and out["cells"][1]["metadata"]["tags"] == ["answer"]
    assert nb["cells"][1]["source"] == "secret = 42"  # the original is left alone


def test_index_notebook_runs(tmp_path):
    path = notebook_path("index")
    status = execute_notebook(path, tmp_path / "index", seed=0, quick=True, timeout=120)
    assert status["ok"], status["error"]
