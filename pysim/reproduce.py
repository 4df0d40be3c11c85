"""Headless reproduction: execute notebooks with papermill, collect results/, score.

Each notebook runs in a fresh kernel, in a working folder of its own, with an
explicit kernel name and a per-cell timeout. The run happens in a worker
(:func:`run_notebook`): a process of the local pool, or a dask.distributed
worker on another host. The worker gets the notebook's text and returns
every file it made, so nothing assumes a shared file system; the client
writes them under ``results/<id>/`` (executed notebook, its HTML, figures as
PNG and SVG, tables as CSV), moved in only once complete. A notebook that
fails or times out is reported and the run goes on; the scorecard is
computed from the models and ledgers, never typed.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path

from pysim import ledger
from pysim.harness import timeline
from pysim.harness.slots import SLOTS_ENV
from pysim.parallel import executor_for
from pysim.results import ENTRY_FILE, write_bytes_atomic, write_text_atomic
from pysim.results_page import index_html
from pysim.scorecard import markdown as scorecard_markdown
from pysim.scorecard import scorecard

KERNEL = "python3"


def notebook_path(paper_id: str) -> Path:
    return ledger.root() / "notebooks" / f"{paper_id}.ipynb"


def run_notebook(source: str, name: str, *, seed: int, quick: bool, timeout: float, kernel: str = KERNEL,
                 cpu_slots: str | None = None, timeline_file: str | None = None) -> dict:
    """Execute a notebook given as text; return its status and, on success, its files as bytes.

    Runs wherever the executor puts it (it needs pysim installed, not the
    client's files): ``{"id", "ok", "seconds", "error", "files": {name: bytes}}``.
    On failure ``files`` holds the partly executed notebook, if there is one. ``cpu_slots``
    (``<folder>:<count>``) makes the kernel share that many CPU slots with the other notebooks
    (:mod:`pysim.harness.slots`); ``timeline_file`` receives its slot and lock waits
    (:mod:`pysim.harness.timeline`; without it, a file of its own). The status also gives its start and
    end (Unix seconds) and ``waited_s``, the part of ``seconds`` it spent waiting for a CPU slot or for
    another notebook's real measurement, which is not its own time.
    """
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    t0 = time.perf_counter()
    status = {"id": name, "ok": False, "seconds": 0.0, "error": None, "files": {}, "started": time.time()}
    work = Path(tempfile.mkdtemp(prefix=f"pysim-{name}-"))
    outputs = work / "outputs"
    outputs.mkdir()
    src, executed = work / f"{name}.source.ipynb", outputs / f"{name}.ipynb"
    src.write_text(source)
    timeline_file = timeline_file or str(work / "timeline.jsonl")
    env_before = {k: os.environ.get(k) for k in ("PYSIM_RESULTS_DIR", SLOTS_ENV, timeline.TIMELINE_ENV,
                                                 timeline.WHO_ENV)}
    try:
        os.environ["PYSIM_RESULTS_DIR"] = str(outputs)
        os.environ[timeline.WHO_ENV] = name
        if cpu_slots:
            os.environ[SLOTS_ENV] = cpu_slots
        os.environ[timeline.TIMELINE_ENV] = timeline_file
        pm.execute_notebook(str(src), str(executed), parameters={"seed": seed, "quick": quick},
                            kernel_name=kernel, cwd=str(work), execution_timeout=timeout,
                            progress_bar=False, log_output=False,
                            kernel_manager_class="pysim.kernels.HeadlessKernelManager")
        body, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
        (outputs / f"{name}.html").write_text(body)
        status["files"] = {p.name: p.read_bytes() for p in outputs.iterdir() if p.is_file()}
        status["ok"] = True
    except Exception as e:  # papermill raises PapermillExecutionError, timeouts, kernel deaths
        status["error"] = _describe(e)
        if executed.exists():
            status["files"] = {f"{name}.failed.ipynb": executed.read_bytes()}
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        own = timeline.summary(timeline.read(timeline_file)).get(name, {})
        status["waited_s"] = own.get("slot_wait_s", 0.0) + own.get("lock_wait_s", 0.0)
        shutil.rmtree(work, ignore_errors=True)
        status["seconds"] = time.perf_counter() - t0
        status["ended"] = time.time()
    return status


def execute_notebook(src: Path, out_dir: Path, *, seed: int, quick: bool, timeout: float,
                     kernel: str = KERNEL) -> dict:
    """Run one notebook here and fill ``out_dir`` (replacing it) on success. Returns its status."""
    status = run_notebook(Path(src).read_text(), Path(src).stem, seed=seed, quick=quick, timeout=timeout,
                          kernel=kernel)
    return store(status, Path(out_dir))


def store(status: dict, out_dir: Path) -> dict:
    """Write a worker's files: into ``out_dir`` (replaced whole) on success, beside it on failure.

    Returns the status without the file contents.
    """
    files = status.pop("files", {})
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    if not status["ok"]:
        for fname, data in files.items():
            write_bytes_atomic(out_dir.parent / fname, data)
            status["executed_notebook"] = str(out_dir.parent / fname)
        return status
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for fname, data in files.items():
            (staging / fname).write_bytes(data)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return status


def _describe(e: Exception) -> str:
    ename = getattr(e, "ename", type(e).__name__)
    evalue = getattr(e, "evalue", str(e))
    cell = getattr(e, "exec_count", None)
    where = f" (cell {cell})" if cell is not None else ""
    text = f"{ename}: {evalue}{where}".strip()
    return text if len(text) < 2000 else text[:2000] + " ..."


def reproduce(ids=None, *, quick=False, jobs=1, timeout=600.0, seed=0, out="results", executor=None,
              scheduler=None, progress=True) -> tuple[dict, dict]:
    """Execute the notebooks of ``ids`` (all papers if None) and write results/.

    Returns (statuses by id, scorecard). The notebooks run on ``executor``
    (any concurrent.futures.Executor), else on a dask.distributed cluster
    when ``scheduler`` gives its address (or a LocalCluster), else on a local
    pool of ``jobs`` processes.
    """
    ids = list(ids) if ids else ledger.paper_ids()
    sources = {}
    for pid in ids:
        ledger.check_id(pid)
        path = notebook_path(pid)
        if not path.exists():
            raise ledger.LedgerError(f"{pid}: notebook {path} is missing")
        sources[pid] = path.read_text()
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    out = Path(out).resolve()
    statuses = {}
    local = executor is None and scheduler is None
    began = time.time()
    with contextlib.ExitStack() as stack:
        cpu_slots = timeline_file = None
        if local:  # two workers more than slots: they compute while other notebooks wait to measure
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix='pysim-slots-'))
            cpu_slots, timeline_file = f"{folder}:{jobs}", f"{folder}/timeline.jsonl"
        pool = stack.enter_context(executor_for(jobs=jobs + 2 if local else jobs, scheduler=scheduler,
                                                executor=executor))
        futures = {pool.submit(run_notebook, sources[pid], pid, seed=seed, quick=quick, timeout=timeout,
                               cpu_slots=cpu_slots, timeline_file=timeline_file): pid
                   for pid in longest_first(ids, out / "runs.json")}
        bar = _progress(len(futures), progress)
        import concurrent.futures as cf

        for fut in cf.as_completed(futures):
            pid = futures[fut]
            try:
                statuses[pid] = store(fut.result(), out / pid)
            except Exception:  # the worker itself died
                statuses[pid] = {"id": pid, "ok": False, "seconds": 0.0, "error": traceback.format_exc(limit=3)}
            bar(pid, statuses[pid])
        if timeline_file:
            add_timeline(statuses, timeline.read(timeline_file), began)
    card = scorecard(ids, quick=quick, seed=seed, jobs=jobs, entries=scored_by_notebooks(out, statuses, seed, quick))
    write_text_atomic(out / "scorecard.json", json.dumps(card, indent=2))
    write_text_atomic(out / "scorecard.md", scorecard_markdown(card))
    write_text_atomic(out / "runs.json", json.dumps(statuses, indent=2))
    write_text_atomic(out / "index.html", index_html(card, statuses, out))
    return statuses, card


def add_timeline(statuses: dict, rows: list, began: float) -> None:
    """Put each notebook's start and end (seconds after ``began``) and its slot and lock waits and
    measurement holds (:func:`pysim.harness.timeline.summary`) into its status."""
    waits = timeline.summary(rows)
    for pid, st in statuses.items():
        for key in ("started", "ended"):
            if key in st:
                st[f"{key}_s"] = round(st.pop(key) - began, 2)
        st.update({k: round(v, 2) for k, v in waits.get(pid, {}).items()})


def longest_first(ids: list, runs_file: Path) -> list:
    """``ids`` with the notebooks that took longest in the last run (``runs.json``) first, and those it
    does not know before them all, so that no long notebook starts last and runs on alone."""
    try:
        seconds = {k: float(v["seconds"]) for k, v in json.loads(Path(runs_file).read_text()).items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        seconds = {}
    return sorted(ids, key=lambda pid: -seconds.get(pid, float("inf")))


def scored_by_notebooks(out: Path, statuses: dict, seed: int, quick: bool) -> dict:
    """{paper id: scorecard row} that the notebooks run now computed themselves (for this seed and
    profile); a paper whose notebook failed or left none is scored again by the caller."""
    entries = {}
    for pid, st in statuses.items():
        path = out / pid / ENTRY_FILE
        if not st.get("ok") or not path.exists():
            continue
        row = json.loads(path.read_text())
        if row.get("paper") == pid and row.get("seed") == seed and row.get("quick") == bool(quick):
            entries[pid] = row["entry"]
    return entries


def _progress(total, enabled):
    if not enabled:
        return lambda pid, st: None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="notebook", desc="reproduce")

    def step(pid, st):
        bar.set_postfix_str(f"{pid} {'ok' if st['ok'] else 'FAILED'} {st['seconds']:.0f}s")
        bar.update(1)
        if bar.n == total:
            bar.close()

    return step
