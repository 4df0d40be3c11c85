"""Models in the style of SimPy's documented examples give the same trace under SimPy and pysim."""
import sys
from pathlib import Path

import pytest
import simpy

import pysim.engine as pysim_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from simpy_scenarios import SCENARIOS  # noqa: E402


def normalised(trace):
    return [tuple(float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x for x in row)
            for row in trace]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_traces_match_simpy(name, seed):
    expected = normalised(SCENARIOS[name](simpy, seed))
    got = normalised(SCENARIOS[name](pysim_engine, seed))
    assert len(expected) > 10  # the scenario did something
    assert got == expected


def test_the_bank_exercises_both_outcomes(seed):
    trace = SCENARIOS["bank_reneging"](pysim_engine, seed, customers=200)
    outcomes = {row[2] for row in trace}
    assert {"served", "reneged"} <= outcomes
