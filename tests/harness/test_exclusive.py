"""The machine-wide measurement lock: one real experiment at a time, never a deadlock."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pysim.harness import exclusive, one_core, waited_s

HOLD = textwrap.dedent("""
    import sys, time
    from pysim.harness import exclusive, one_core
    with (one_core if sys.argv[2] == "one_core" else exclusive)():
        print("held", flush=True)
        time.sleep(float(sys.argv[1]))
""")


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "measure.lock"
    monkeypatch.setenv("PYSIM_MEASURE_LOCK", str(path))
    monkeypatch.delenv("PYSIM_MEASURING", raising=False)
    return path


def holder(seconds, mode="exclusive"):
    """Another process that holds the lock (``mode``) for ``seconds`` once it prints 'held'."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(seconds), mode], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_process_waits_for_the_holder(lock_file):
    p = holder(0.6)
    t0 = time.monotonic()
    with exclusive():
        waited = waited_s()
    p.wait(timeout=10)
    assert waited >= 0.4, waited
    assert time.monotonic() - t0 >= 0.4


@pytest.mark.parametrize("first, second", [("exclusive", one_core), ("one_core", exclusive)])
def test_single_core_experiments_wait_for_whole_machine_ones_and_back(lock_file, first, second):
    p = holder(0.6, first)
    with second():
        waited = waited_s()
    p.wait(timeout=10)
    assert waited >= 0.4, waited


def test_single_core_experiments_run_side_by_side(lock_file):
    p = holder(3, "one_core")
    with one_core():
        waited = waited_s()
    p.kill()
    p.wait(timeout=10)
    assert waited < 0.5, waited


def test_a_free_lock_is_taken_at_once_and_reentrant(lock_file):
    with exclusive():
        with exclusive():  # a measurement calling another measurement
            pass
        assert waited_s() < 0.2


def test_a_child_of_the_holder_measures_without_waiting(lock_file):
    child = textwrap.dedent("""
        import time
        from pysim.harness import exclusive
        t0 = time.monotonic()
        with exclusive():
            pass
        print(time.monotonic() - t0)
    """)
    with exclusive():
        out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 1.0


def test_a_killed_holder_releases_the_lock(lock_file):
    p = holder(60)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=10)
    with exclusive():
        assert waited_s() < 1.0


@pytest.mark.parametrize("mode", ["exclusive", "one_core"])
def test_real_measurements_hold_the_lock(lock_file, mode):
    """A two-process measurement waits for any other; a single-threaded one only for an exclusive one."""
    from pysim import measure

    p = holder(0.6, mode)
    t0 = time.monotonic()
    measure.udp_rtt(sizes=(1,), iters=10)  # an echo process and its client: the whole machine
    p.wait(timeout=10)
    assert time.monotonic() - t0 >= 0.4
    p = holder(0.6, mode)
    measure.basics(quick=True)  # one thread
    p.wait(timeout=10)
    assert (waited_s() >= 0.4) == (mode == "exclusive"), waited_s()


def test_every_model_measurement_takes_the_lock():
    """A model function that measures for real (``measure_*``) holds the lock: it is decorated exclusive()
    or one_core(), takes it in a ``with`` around each run, or calls a function of its module that does."""
    import ast
    from pathlib import Path

    import pysim.models

    def locks(node):
        return any(("exclusive" in ast.unparse(d) or "one_core" in ast.unparse(d)) for d in node.decorator_list)

    missing = []
    for path in sorted(Path(pysim.models.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text())
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        locked = {f.name for f in funcs if locks(f)}
        for f in funcs:
            if not (f.name == "measure" or f.name.startswith("measure_")) or locks(f):
                continue
            inner = list(ast.walk(f))
            takes = any(isinstance(n, ast.With) and any("exclusive" in ast.unparse(i.context_expr)
                                                        or "one_core" in ast.unparse(i.context_expr) for i in n.items)
                        for n in inner)
            calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in locked for n in inner)
            if not (takes or calls):
                missing.append(f"{path.stem}.{f.name}")
    assert not missing, missing
