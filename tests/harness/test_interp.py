"""The threaded-code interpreter in C (pysim.harness.interp): the same loop four ways."""
import pytest

from pysim.harness import interp


def test_every_dispatch_computes_what_the_native_loop_computes():
    r = interp.check_variants()
    if not r["available"]:
        pytest.skip(r["reason"])
    assert len(r["values"]) == len(interp.VARIANTS) and r["agree"], r["values"]


@pytest.mark.quiet  # a timing ratio: run before the notebooks start beside the suite
def test_interpreting_costs_more_than_running_native_code():
    df = interp.measure_dispatch(tries=3, enough_s=0.005)
    if not df["available"].all():
        pytest.skip("; ".join(df["note"][~df["available"]]))
    # five dispatched bytecodes a trip cannot beat the loop compiled straight to machine code
    assert (df.drop("native C")["slowdown"] > 1.5).all(), df
    assert df.loc["native C", "slowdown"] == 1.0
