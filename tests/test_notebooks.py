"""Every paper notebook, and its course edition without solutions, runs top to bottom in quick mode in a
fresh kernel; committed notebooks are clean.

The runs are independent, so the selected ones start together on a pool of processes (as
``pysim reproduce --jobs`` runs them) when the first of these tests needs one, and each test waits
for its own; a notebook's own time is measured inside its process."""
import concurrent.futures as cf
import json
import os

import pytest

from pysim import ledger
from pysim.reproduce import execute_notebook, notebook_path, run_notebook, store
from pysim.student import PLACEHOLDER, strip_solutions, write_student_notebooks

NOTEBOOKS = sorted(notebook_path("x").parent.glob("*.ipynb"))
WORKERS = max(1, min(os.cpu_count() or 1, 4))
RUNS = {"test_notebook_runs_in_quick_mode": "quick", "test_the_course_edition_runs_without_its_solutions": "course"}


@pytest.fixture(scope="module")
def notebook_runs(request, tmp_path_factory):
    """{(edition, paper id): future of run_notebook} for the runs this session selected, started at once."""
    import pysim._native  # noqa: F401  (the extension is built here once, not by every kernel at the same time)

    wanted = [(RUNS[item.originalname], item.callspec.params["paper_id"]) for item in request.session.items
              if getattr(item, "originalname", None) in RUNS and hasattr(item, "callspec")]
    course = sorted({p for e, p in wanted if e == "course"})
    students = write_student_notebooks(tmp_path_factory.mktemp("student"), ids=course) if course else []
    source = {("quick", p): notebook_path(p) for e, p in wanted if e == "quick"}
    source.update({("course", s.stem): s for s in students})
    pool = cf.ProcessPoolExecutor(max_workers=WORKERS)
    futures = {key: pool.submit(run_notebook, path.read_text(), key[1], seed=0, quick=True, timeout=120)
               for key, path in sorted(source.items())}
    yield futures, {s.stem: s for s in students}
    pool.shutdown(cancel_futures=True)


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
    futures, _ = notebook_runs
    status = store(futures["quick", paper_id].result(), tmp_path / paper_id)
    assert status["ok"], status["error"]
    assert status["seconds"] < 60
    files = {p.suffix for p in (tmp_path / paper_id).iterdir()}
    assert {".ipynb", ".html", ".png", ".svg", ".csv"} <= files


@pytest.mark.parametrize("paper_id", ledger.paper_ids())
def test_the_course_edition_runs_without_its_solutions(paper_id, notebook_runs, tmp_path):
    futures, students = notebook_runs
    nb = json.loads(students[paper_id].read_text())
    tags = [t for c in nb["cells"] for t in c.get("metadata", {}).get("tags", [])]
    assert "solution" not in tags and tags.count("answer") >= 1
    status = store(futures["course", paper_id].result(), tmp_path / "out")
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
