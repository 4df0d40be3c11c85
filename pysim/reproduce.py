"""Headless reproduction: execute notebooks with papermill, collect results/, score.

For each paper the notebook runs in a fresh kernel, in its own working
folder, with an explicit kernel name and a per-cell timeout. Outputs land in
``results/<id>/`` (executed notebook, its HTML, figures as PNG and SVG,
tables as CSV), moved in only once complete. A notebook that fails or times
out is reported and the run goes on; the scorecard is computed from the
models and ledgers, never typed.
"""
from __future__ import annotations

import concurrent.futures as cf
import html
import json
import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path

from pysim import ledger
from pysim.results import write_text_atomic
from pysim.scorecard import markdown as scorecard_markdown
from pysim.scorecard import scorecard

KERNEL = "python3"


def notebook_path(paper_id: str) -> Path:
    return ledger.root() / "notebooks" / f"{paper_id}.ipynb"


def execute_notebook(src: Path, out_dir: Path, *, seed: int, quick: bool, timeout: float,
                     kernel: str = KERNEL) -> dict:
    """Run one notebook; on success fill ``out_dir`` (replacing it). Returns a status dict.

    Runs in a process of its own (see :func:`reproduce`), so it may block.
    """
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    name = src.stem
    t0 = time.perf_counter()
    status = {"id": name, "ok": False, "seconds": 0.0, "error": None}
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out_dir.parent))
    work = Path(tempfile.mkdtemp(prefix=f"pysim-{name}-"))
    env_before = os.environ.get("PYSIM_RESULTS_DIR")
    try:
        os.environ["PYSIM_RESULTS_DIR"] = str(staging)
        executed = staging / f"{name}.ipynb"
        pm.execute_notebook(str(src), str(executed), parameters={"seed": seed, "quick": quick},
                            kernel_name=kernel, cwd=str(work), execution_timeout=timeout,
                            progress_bar=False, log_output=False)
        body, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
        (staging / f"{name}.html").write_text(body)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
        status["ok"] = True
    except Exception as e:  # papermill raises PapermillExecutionError, timeouts, kernel deaths
        status["error"] = _describe(e)
        failed = out_dir.parent / f"{name}.failed.ipynb"
        if (staging / f"{name}.ipynb").exists():
            os.replace(staging / f"{name}.ipynb", failed)
            status["executed_notebook"] = str(failed)
    finally:
        if env_before is None:
            os.environ.pop("PYSIM_RESULTS_DIR", None)
        else:
            os.environ["PYSIM_RESULTS_DIR"] = env_before
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        status["seconds"] = time.perf_counter() - t0
    return status


def _describe(e: Exception) -> str:
    ename = getattr(e, "ename", type(e).__name__)
    evalue = getattr(e, "evalue", str(e))
    cell = getattr(e, "exec_count", None)
    where = f" (cell {cell})" if cell is not None else ""
    text = f"{ename}: {evalue}{where}".strip()
    return text if len(text) < 2000 else text[:2000] + " ..."


def index_html(card: dict, statuses: dict, out: Path) -> str:
    rows = []
    for pid, p in card["papers"].items():
        d = out / pid
        st = statuses.get(pid)
        links = []
        if d.is_dir():
            links.append(f'<a href="{pid}/{pid}.html">notebook</a>')
            links += [f'<a href="{pid}/{f.name}">{html.escape(f.name)}</a>' for f in sorted(d.iterdir())
                      if f.suffix in (".png", ".svg", ".csv")]
        run = "not run" if st is None else ("ok" if st["ok"] else f"FAILED: {html.escape(st['error'] or '')}")
        rows.append(f"<tr><td>{pid}</td><td>{html.escape(p['title'])}</td><td>{p['verdict']}</td>"
                    f"<td>{run}</td><td>{' · '.join(links)}</td></tr>")
    return ("<!doctype html><meta charset=utf-8><title>pysim results</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 8px;border-bottom:1px solid #ddd}</style>"
            f"<h1>pysim results</h1><p>profile: {card['profile']}, generated {card['generated']}. "
            '<a href="scorecard.md">scorecard.md</a> · <a href="scorecard.json">scorecard.json</a></p>'
            "<table><tr><th>paper</th><th>title</th><th>verdict</th><th>notebook run</th><th>outputs</th></tr>"
            + "".join(rows) + "</table>")


def reproduce(ids=None, *, quick=False, jobs=1, timeout=600.0, seed=0, out="results", executor=None,
              progress=True) -> tuple[dict, dict]:
    """Execute the notebooks of ``ids`` (all papers if None) and write results/.

    Returns (statuses by id, scorecard). ``executor`` may be any
    concurrent.futures.Executor (a dask.distributed client's, for instance);
    by default a local process pool of ``jobs`` workers.
    """
    ids = list(ids) if ids else ledger.paper_ids()
    for pid in ids:
        ledger.check_id(pid)
        if not notebook_path(pid).exists():
            raise ledger.LedgerError(f"{pid}: notebook {notebook_path(pid)} is missing")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    out = Path(out).resolve()  # the kernels run in working folders of their own
    own = executor is None
    executor = executor or cf.ProcessPoolExecutor(max_workers=jobs)
    statuses = {}
    try:
        futures = {executor.submit(execute_notebook, notebook_path(pid), out / pid, seed=seed, quick=quick,
                                   timeout=timeout): pid for pid in ids}
        bar = _progress(len(futures), progress)
        for fut in cf.as_completed(futures):
            pid = futures[fut]
            try:
                statuses[pid] = fut.result()
            except Exception:  # the worker itself died
                statuses[pid] = {"id": pid, "ok": False, "seconds": 0.0, "error": traceback.format_exc(limit=3)}
            bar(pid, statuses[pid])
    finally:
        if own:
            executor.shutdown()
    card = scorecard(ids, quick=quick, seed=seed)
    write_text_atomic(out / "scorecard.json", json.dumps(card, indent=2))
    write_text_atomic(out / "scorecard.md", scorecard_markdown(card))
    write_text_atomic(out / "index.html", index_html(card, statuses, out))
    write_text_atomic(out / "runs.json", json.dumps(statuses, indent=2))
    return statuses, card


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
