"""Where parallel work runs: a local process pool, or a dask.distributed cluster.

Notebooks (``pysim reproduce``) and parameter sweeps (``pysim sweep``) hand
their tasks to a ``concurrent.futures.Executor``. By default that is a pool
of local processes; given a scheduler address (``tcp://host:8786``) or a
``distributed.LocalCluster``, it is the executor of a dask.distributed
client, so a course or a sweep can outgrow one machine. The tasks take and
return plain data, so the workers need pysim installed, not the client's
files.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib


@contextlib.contextmanager
def executor_for(*, jobs: int = 1, scheduler=None, executor: cf.Executor | None = None):
    """Yield an Executor: ``executor`` as given, a dask client's for ``scheduler``, or a pool of ``jobs``.

    An executor this function made is shut down (and its client closed) on exit.
    """
    if executor is not None:
        yield executor
        return
    if scheduler is not None:
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("a dask scheduler was given but dask.distributed is not installed "
                               "(pip install 'dask[distributed]')") from None
        with Client(scheduler) as client:
            pool = client.get_executor()
            try:
                yield pool
            finally:
                pool.shutdown()
        return
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    with cf.ProcessPoolExecutor(max_workers=jobs) as pool:
        yield pool
