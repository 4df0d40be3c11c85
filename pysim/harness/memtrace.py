"""A real program's memory references, traced by valgrind's lackey (see pysim.workloads.memtrace)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from pysim.workloads.memtrace import parse_lackey


@dataclass(frozen=True)
class Trace:
    available: bool
    kinds: object = None
    addrs: object = None
    sizes: object = None
    reason: str = ""


def lackey(argv, *, timeout_s: float = 300.0) -> Trace:
    """Run ``argv`` under ``valgrind --tool=lackey --trace-mem=yes`` and parse its references."""
    if shutil.which("valgrind") is None:
        return Trace(False, reason="valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "trace")
        r = subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}", *map(str, argv)],
                           capture_output=True, timeout=timeout_s, check=False)
        if r.returncode != 0:
            return Trace(False, reason=f"valgrind exited with {r.returncode}: {r.stderr.decode()[-300:]}")
        with open(log) as f:
            kinds, addrs, sizes = parse_lackey(f.read())
    return Trace(True, kinds, addrs, sizes)
