"""The catalogue of programs by resource demand, measured on this machine by cachegrind."""
import math
import shutil

import pytest

from pysim.hw.smt import Program, corun_stretch
from pysim.workloads import programs

needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("valgrind") is None,
                                 reason="needs gcc and valgrind")


def test_an_unknown_program_names_the_catalogue():
    with pytest.raises(ValueError, match="INT, FP, L2C, STREAM"):
        programs.kernel("gcc")
    with pytest.raises(ValueError, match="cpu"):
        programs.snippet("INT", cpu=-1)


def test_pinned_and_unpinned_snippets_differ_only_in_the_pin():
    plain, pinned = programs.snippet("L2C"), programs.snippet("L2C", cpu=1)
    assert plain.body == pinned.body
    assert "1UL << 1" in pinned.setup and "sched_setaffinity" not in plain.setup


@pytest.fixture(scope="module")
def measured():
    return programs.demand(trips=20, native_trips=200)


@needs_tools
def test_each_kernel_loads_the_resource_it_names(measured):
    m = measured
    assert m["available"].all(), m["note"].to_dict()
    # the integer and FP chains live in registers: almost no data references, no last-level misses
    for name in ("INT", "FP"):
        assert m.loc[name, "refs_per_inst"] < 0.05
        assert m.loc[name, "l2_miss_per_inst"] < 1e-4
    assert m.loc["INT", "fp_per_inst"] == 0
    assert m.loc["FP", "fp_per_inst"] > 0.25  # four FP operations in a handful of instructions a step
    # the random chase over 32 MB misses far more per instruction than anything else
    assert m.loc["L2C", "l2_miss_per_inst"] > 10 * max(m.loc[n, "l2_miss_per_inst"] for n in ("INT", "FP"))
    # a trip of each is 4096 steps: a dependent miss costs far more than a dependent multiply
    assert m.loc["L2C", "native_s_per_trip"] > 10 * m.loc["INT", "native_s_per_trip"]


@needs_tools
def test_the_stream_misses_once_per_line(measured):
    """Sequential 8-byte loads over 64-byte lines: one D1 miss in eight references."""
    s = measured.loc["STREAM"]
    miss_per_ref = s["l1_miss_per_inst"] / s["refs_per_inst"]
    assert miss_per_ref == pytest.approx(1 / 8, rel=0.15)


@needs_tools
def test_a_tool_slows_the_kernel_it_runs(measured):
    native, _ = programs.seconds_per_trip("INT", trips=200)
    tool = ("valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null", "-q")
    under, why = programs.seconds_per_trip("INT", trips=100, tool=tool)
    assert not why and under > 2 * native  # a simulated cache access on every fetch: about five times here


@needs_tools
def test_measured_demand_feeds_the_smt_solver(measured):
    chase, alu = (programs.as_program(n, measured.loc[n], 10.0) for n in ("L2C", "INT"))
    assert isinstance(chase, Program) and chase.l2_per_inst == measured.loc["L2C", "l2_miss_per_inst"]
    # beside the chase, the ALU chain suffers L2 conflicts only through the chase's misses
    alone, _ = corun_stretch(alu, chase, issue_peak_inst_per_s=2 * alu.inst_per_s, l2_conflict=0.0)
    priced, _ = corun_stretch(alu, chase, issue_peak_inst_per_s=2 * alu.inst_per_s, l2_conflict=0.5)
    assert priced > alone


def test_a_program_without_a_measurement_is_refused():
    row = {"available": False, "note": "valgrind is not installed"}
    with pytest.raises(ValueError, match="valgrind is not installed"):
        programs.as_program("INT", row, 10.0)
    with pytest.raises(ValueError, match="solo_s"):
        programs.as_program("INT", {"available": True}, 0.0)
