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


def pytest_collection_modifyitems(config, items):
    """Tests marked quiet go first, while nothing else runs beside them."""
    items.sort(key=lambda item: item.get_closest_marker("quiet") is None)  # stable: otherwise in order


def pytest_collection_finish(session):
    """Prepare the selected notebook runs (see notebook_pool); they start with the first test not marked
    quiet and then run beside the rest of the suite."""
    from notebook_pool import RUNS, NotebookRuns

    if any(getattr(item, "originalname", None) in RUNS for item in session.items):
        import pysim._native  # noqa: F401  (the extension is built here once, not by every kernel at once)

        session.config.stash[NOTEBOOK_RUNS] = NotebookRuns(session.items)


def pytest_runtest_setup(item):
    runs = item.config.stash.get(NOTEBOOK_RUNS, None)
    if runs is not None and item.get_closest_marker("quiet") is None:
        runs.start()


def pytest_sessionfinish(session):
    runs = session.config.stash.get(NOTEBOOK_RUNS, None)
    if runs is not None:
        runs.close()


@pytest.fixture(scope="session")
def notebook_runs(request):
    """The session's :class:`notebook_pool.NotebookRuns`, widened to the whole machine from now on."""
    runs = request.config.stash[NOTEBOOK_RUNS]
    runs.start()
    runs.widen()
    return runs


def pytest_generate_tests(metafunc):
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", _seeds())


FIXTURES = Path(__file__).parent / "fixtures"
NOTEBOOK_RUNS = pytest.StashKey()


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
