"""A throw-away lab root with the demo paper, for tests that break things on purpose."""
import os
import shutil
import sys
from pathlib import Path

import pytest

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
