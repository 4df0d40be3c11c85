"""Every paper notebook runs top to bottom in quick mode, in a fresh kernel; committed notebooks are clean."""
import json

import pytest

from pysim import ledger
from pysim.reproduce import execute_notebook, notebook_path

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
def test_notebook_runs_in_quick_mode(paper_id, tmp_path):
    status = execute_notebook(notebook_path(paper_id), tmp_path / paper_id, seed=0, quick=True, timeout=120)
    assert status["ok"], status["error"]
    assert status["seconds"] < 60
    files = {p.suffix for p in (tmp_path / paper_id).iterdir()}
    assert {".ipynb", ".html", ".png", ".svg", ".csv"} <= files


def test_index_notebook_runs(tmp_path):
    path = notebook_path("index")
    status = execute_notebook(path, tmp_path / "index", seed=0, quick=True, timeout=120)
    assert status["ok"], status["error"]
