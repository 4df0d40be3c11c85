"""The course edition: every notebook with its exercise solutions removed.

A cell tagged ``solution`` becomes an empty code cell tagged ``answer`` for
the student to fill; everything else is kept, so the student's notebook
still runs top to bottom (``make student``, then any notebook under
build/student/).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from pysim import ledger

PLACEHOLDER = "# Your answer: run your experiment here, then compare it with your prediction above.\n"


def strip_solutions(nb: dict) -> dict:
    """A copy of a notebook (as JSON) with each solution cell replaced by an empty answer cell."""
    out = copy.deepcopy(nb)
    cells = []
    for c in out.get("cells", []):
        tags = c.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            cells.append({"cell_type": "code", "execution_count": None, "id": c.get("id", "answer") + "-answer",
                          "metadata": {"tags": ["answer"]}, "outputs": [], "source": PLACEHOLDER})
        else:
            cells.append(c)
    out["cells"] = cells
    return out


def write_student_notebooks(out: Path, ids=None) -> list:
    """Write the student edition of each paper's notebook (and the index) under ``out``."""
    src = ledger.root() / "notebooks"
    names = [f"{i}.ipynb" for i in (ids or ledger.paper_ids())] + ([] if ids else ["index.ipynb"])
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        path = src / name
        if not path.exists():
            continue
        nb = strip_solutions(json.loads(path.read_text()))
        target = out / name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        written.append(target)
    return written
