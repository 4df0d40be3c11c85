"""Every calibrated parameter stored in a model reproduces the one published cell it was fitted to.

Refitting from scratch is `pysim.calibration.fit_all(paper_id)`; this test
checks the cheaper consequence: with the stored values, each fitted cell
lands on its target, so no stored constant can silently go stale.
"""
import pytest

from pysim import ledger, scoring

FIT_TOLERANCE = 0.01  # relative: the fits were solved to far better than this


def papers_with_fits():
    return [pid for pid in ledger.paper_ids() if getattr(ledger.load(pid).model(), "CALIBRATION", ())]


@pytest.mark.parametrize("paper_id", papers_with_fits())
def test_fitted_cells_hit_their_targets(paper_id):
    paper = ledger.load(paper_id)
    model = paper.model()
    arts = {f.artifact for f in model.CALIBRATION}
    frames = {a: getattr(model, paper.artifacts[a].function)() for a in arts}
    for a in arts:
        cmp = scoring.compare(paper, a, frames[a])
        fits = cmp[cmp["role"] == "fit"].set_index(["row", "column"])
        assert len(fits) == sum(f.artifact == a for f in model.CALIBRATION)
        for f in model.CALIBRATION:
            if f.artifact == a:
                err = abs(fits.loc[(f.row, f.column), "rel_error"])
                assert err <= max(FIT_TOLERANCE, f.tolerance), f"{f.parameter}: {f.row}/{f.column} off by {err:.1%}"
