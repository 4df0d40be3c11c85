"""Every calibrated parameter stored in a model is what refitting it to its one published cell gives."""
import dataclasses

import pytest

from pysim import ledger
from pysim.calibration import fit_parameter


def fits():
    for pid in ledger.paper_ids():
        model = ledger.load(pid).model()
        for i, fit in enumerate(getattr(model, "CALIBRATION", ())):
            yield pytest.param(pid, i, id=f"{pid}-{fit.parameter}")


@pytest.mark.parametrize("paper_id, index", list(fits()))
def test_stored_value_is_the_fit(paper_id, index):
    model = ledger.load(paper_id).model()
    fit = model.CALIBRATION[index]
    stored = getattr(model.Params(), fit.parameter)
    # refit with every other parameter at its stored value
    found = fit_parameter(paper_id, fit, model.Params(), tol=1e-5)
    assert found == pytest.approx(stored, rel=2e-3), f"{fit.parameter}: stored {stored}, fit gives {found:.6g}"


def test_every_fit_names_a_ledger_cell_and_a_calibrated_field():
    for pid in ledger.paper_ids():
        paper = ledger.load(pid)
        model = paper.model()
        cells = {(c.artifact, c.row, c.column) for c in paper.cells}
        fields = {f.name for f in dataclasses.fields(model.Params)}
        for fit in getattr(model, "CALIBRATION", ()):
            assert (fit.artifact, fit.row, fit.column) in cells, fit
            assert fit.parameter in fields, fit
