"""Shared fixtures: the `seed` fixture widens with PYSIM_TEST_SEEDS ("0-99" or "all")."""
import os

import pytest


def _seeds():
    spec = os.environ.get("PYSIM_TEST_SEEDS", "0")
    if spec == "all":
        return list(range(1000))
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in spec.split(",")]


def pytest_report_header(config):
    return f"seeds: PYSIM_TEST_SEEDS={os.environ.get('PYSIM_TEST_SEEDS', '0')} (rerun a failure with PYSIM_TEST_SEEDS=<seed>)"


def pytest_generate_tests(metafunc):
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", _seeds())
