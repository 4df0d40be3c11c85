"""Shared fixtures: the `seed` fixture widens with PYSIM_TEST_SEEDS ("0-99" or "all")."""
import os
import shutil
import sys
from pathlib import Path

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


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def lab_root(tmp_path, monkeypatch):
    """A copy of tests/fixtures/root as PYSIM_ROOT, with demo_model importable (also by kernels)."""
    root = tmp_path / "lab"
    shutil.copytree(FIXTURES / "root", root)
    monkeypatch.setenv("PYSIM_ROOT", str(root))
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")]))
    sys.modules.pop("demo_model", None)
    return root
