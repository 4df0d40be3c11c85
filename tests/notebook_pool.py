"""The notebook runs of a test session, started with the first test not marked quiet.

They are independent, so they run on one spare process while the rest of the suite runs in the main
one; when the notebook tests themselves come up, the runs not yet started move to a pool as wide as the
machine (:meth:`NotebookRuns.widen`). Each test then waits for its own run."""
import concurrent.futures as cf
import os
import shutil
import tempfile
from pathlib import Path

from pysim.reproduce import notebook_path, run_notebook
from pysim.student import write_student_notebooks

#: test name -> the edition it runs
RUNS = {"test_notebook_runs_in_quick_mode": "quick", "test_the_course_edition_runs_without_its_solutions": "course"}
WIDTH = max(1, min(os.cpu_count() or 1, 4))


class NotebookRuns:
    """The quick and course-edition runs the session's notebook tests select, by (edition, paper id)."""

    def __init__(self, items):
        wanted = sorted({(RUNS[item.originalname], item.callspec.params["paper_id"]) for item in items
                         if getattr(item, "originalname", None) in RUNS and hasattr(item, "callspec")})
        self.folder = Path(tempfile.mkdtemp(prefix="pysim-course-"))
        course = sorted({p for e, p in wanted if e == "course"})
        self.students = {s.stem: s for s in write_student_notebooks(self.folder, ids=course)} if course else {}
        self.sources = {key: (notebook_path(key[1]) if key[0] == "quick" else self.students[key[1]])
                        for key in wanted}
        self.pools, self.futures = [], {}

    def start(self):
        """Start the runs on one process (once)."""
        if self.pools or not self.sources:
            return
        self.pools.append(cf.ProcessPoolExecutor(max_workers=1))
        self.futures = {key: self._submit(self.pools[0], key) for key in self._order()}

    def _order(self):
        """Quick editions first (a failure shows sooner), the rest in paper order."""
        return sorted(self.sources, key=lambda k: (k[0] != "quick", k[1]))

    def _submit(self, pool, key):
        return pool.submit(run_notebook, self.sources[key].read_text(), key[1], seed=0, quick=True, timeout=120)

    def widen(self):
        """Move the runs that have not started to a pool of WIDTH processes."""
        if not self.pools or len(self.pools) > 1 or WIDTH == 1:
            return
        waiting = [key for key in self._order() if self.futures[key].cancel()]
        if waiting:
            wide = cf.ProcessPoolExecutor(max_workers=WIDTH)
            self.pools.append(wide)
            self.futures.update({key: self._submit(wide, key) for key in waiting})

    def close(self):
        for pool in self.pools:
            pool.shutdown(cancel_futures=True)
        shutil.rmtree(self.folder, ignore_errors=True)
