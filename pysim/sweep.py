"""Parameter sweeps: one artifact of a paper's model over a grid of parameters and seeds.

Each point of the grid is an independent task (the model is pure), run on a
local process pool or a dask.distributed cluster (see :mod:`pysim.parallel`).
The result is one tidy DataFrame: the varied parameters and the seed as
columns, then the artifact's own rows and columns.

    >>> df = sweep("fsl02_purohit", "figure2", {"trap_us": [0.2, 0.4]})   # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
import itertools

import pandas as pd

from pysim import ledger
from pysim.parallel import executor_for


def _point(paper_id: str, function: str, changes: dict, seed: int, quick: bool) -> pd.DataFrame:
    """One point: the artifact with ``changes`` applied to the model's Params (runs in a worker)."""
    model = ledger.load(paper_id).model()
    params = dataclasses.replace(model.Params(), **changes)
    return getattr(model, function)(params, rng=seed, quick=quick)


def grid_points(grid: dict) -> list:
    """Every combination of the grid's values, as a list of {name: value}."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def sweep(paper_id: str, artifact: str, grid: dict, *, seeds=(0,), quick: bool = False, jobs: int = 1,
          scheduler=None, executor=None) -> pd.DataFrame:
    """The artifact at every point of ``grid`` (name -> values) and every seed, as one DataFrame.

    Raises
    ------
    ValueError
        For an unknown artifact or parameter, or a value the model's Params refuse, before anything runs.
    """
    paper = ledger.load(paper_id)
    if artifact not in paper.artifacts or paper.artifacts[artifact].kind == "diagram-only":
        computed = [a for a, art in paper.artifacts.items() if art.kind != "diagram-only"]
        raise ValueError(f"unknown artifact {artifact!r} for {paper_id}; valid: {', '.join(computed)}")
    model = paper.model()
    fields = {f.name for f in dataclasses.fields(model.Params)}
    unknown = set(grid) - fields
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; valid: {', '.join(sorted(fields))}")
    points = grid_points(grid)
    for point in points:  # refuse a bad value before any simulation starts
        dataclasses.replace(model.Params(), **point)
    function = paper.artifacts[artifact].function
    tasks = [(point, seed) for point in points for seed in seeds]
    with executor_for(jobs=jobs, scheduler=scheduler, executor=executor) as pool:
        futures = [pool.submit(_point, paper_id, function, point, seed, quick) for point, seed in tasks]
        frames = [f.result() for f in futures]
    out = []
    for (point, seed), df in zip(tasks, frames):
        df = df.reset_index()
        for name, value in reversed(list(point.items())):
            df.insert(0, name, value)
        df.insert(len(point), "seed", seed)
        out.append(df)
    return pd.concat(out, ignore_index=True)
