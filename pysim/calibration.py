"""Fitting a model's calibrated parameters to the published cells they name.

Models never read the ledger. Each model lists its fits in ``CALIBRATION``
(parameter, artifact, row, column, and a search bracket); this module reads
the target from the ledger and solves model(parameter) = target by
bisection, so the value stored in a model's Params can be re-derived and
checked (tests/test_calibration.py).
"""
from __future__ import annotations

import dataclasses

from pysim import ledger
from pysim.errors import CalibrationError


def target(paper: ledger.Paper, fit) -> float:
    """The published value a fit aims at."""
    c = paper.cell(fit.artifact, fit.row, fit.column)
    if c is not None and c.source != "doubtful":
        return c.value
    raise CalibrationError(f"{paper.id}: no ledger cell {fit.artifact}[{fit.row}, {fit.column}] for {fit.parameter}")


def fit_parameter(paper_id: str, fit, params=None, *, quick=False, tol=1e-4, max_iter=60) -> float:
    """Solve for ``fit.parameter`` so the model's cell equals the ledger's value.

    The model output must be monotone in the parameter over ``fit.bracket``.
    """
    paper = ledger.load(paper_id)
    model = paper.model()
    goal = target(paper, fit)
    func = getattr(model, paper.artifacts[fit.artifact].function)
    base = params if params is not None else model.Params()

    def gap(x):
        df = func(dataclasses.replace(base, **{fit.parameter: x}), quick=quick)
        return ledger.lookup(df, fit.row, fit.column) - goal

    lo, hi = fit.bracket
    g_lo, g_hi = gap(lo), gap(hi)
    if g_lo * g_hi > 0:
        raise CalibrationError(f"{fit.parameter}: the target {goal} is not bracketed by {fit.bracket} "
                               f"(model gives {g_lo + goal:.6g} .. {g_hi + goal:.6g})")
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        g_mid = gap(mid)
        if abs(hi - lo) <= tol * max(abs(mid), 1e-12):
            return mid
        if g_lo * g_mid <= 0:
            hi = mid
        else:
            lo, g_lo = mid, g_mid
    return 0.5 * (lo + hi)


def fit_all(paper_id: str, *, rounds: int = 20, tol: float = 1e-8, quick: bool = False):
    """Fit every calibrated parameter of a model jointly (Gauss-Seidel over its fits).

    Fits can be coupled (one target depends on several parameters), so the
    single-parameter fits are repeated until no value moves by more than
    ``tol`` relative. Returns the Params holding the fitted values.
    """
    model = ledger.load(paper_id).model()
    params = model.Params()
    for _ in range(rounds):
        moved = 0.0
        for fit in model.CALIBRATION:
            old = getattr(params, fit.parameter)
            new = fit_parameter(paper_id, fit, params, quick=quick, tol=tol)
            params = dataclasses.replace(params, **{fit.parameter: new})
            moved = max(moved, abs(new - old) / max(abs(old), 1e-12))
        if moved <= tol * 10:
            return params
    raise CalibrationError(f"{paper_id}: the fits did not settle in {rounds} rounds")
