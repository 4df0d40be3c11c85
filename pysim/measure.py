"""Then vs now: the papers' experiments measured for real on this machine.

Every function runs a small real experiment through the C core
(native/src/measure.c) and returns plain numbers or a DataFrame. Where the
machine lacks a facility (io_uring refused, select beyond FD_SETSIZE, no huge
pages) the value is None and the ``note`` says why: that is a result, not a
crash.
"""
from __future__ import annotations

import os
import platform
import tempfile

import pandas as pd

from pysim import _native
from pysim.bench import cpu_model
from pysim.harness.exclusive import exclusive, one_core

MECHANISMS = {"select": 0, "poll": 1, "epoll": 2}


def machine() -> dict:
    """What this machine is, for labelling 'now' columns."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release()}


@one_core()
def basics(quick=False) -> dict:
    """System-call cost, timer resolution and memcpy bandwidth."""
    out = _native.measure_basic(100_000 if quick else 1_000_000, 1000)
    out["memcpy_bytes_per_s"] = _native.measure_memcpy(8 << 20, 10 if quick else 50)
    return out


@exclusive()
def udp_rtt(sizes=(1, 100, 512, 1024, 1472), *, iters=2000) -> pd.DataFrame:
    """Mean UDP round trip over loopback (a forked echo process), per message size."""
    rows = [{"message_bytes": n, "rtt_us": _rtt(n, iters)} for n in sizes]
    return pd.DataFrame(rows).set_index("message_bytes")


def _rtt(n, iters):
    v = _native.measure_udp_rtt(int(n), int(iters))
    return None if v is None else v * 1e6


@exclusive()
def tcp_throughput(total_bytes=64 << 20, chunk=8192, rcvbufs=(8 << 10, 24 << 10, 120 << 10, 4 << 20)) -> pd.DataFrame:
    """Loopback TCP throughput (ttcp-like: `chunk`-byte writes) for several receive buffers."""
    rows = []
    for rb in rcvbufs:
        v = _native.measure_tcp_throughput(int(total_bytes), int(chunk), int(rb))
        rows.append({"recv_buffer_bytes": rb, "throughput_MB_per_s": None if v is None else v / 1e6})
    return pd.DataFrame(rows).set_index("recv_buffer_bytes")


@one_core()
def event_wait(idle_counts=(0, 250, 500, 1000, 2000, 4000), active=8, calls=200) -> pd.DataFrame:
    """Microseconds per select / poll / epoll_wait call with N idle and `active` ready sockets."""
    rows = []
    for n in idle_counts:
        row = {"idle_sockets": n}
        for name, mech in MECHANISMS.items():
            v = _native.measure_event_wait(mech, int(n), int(active), int(calls))
            row[f"{name}_us"] = None if v is None else v * 1e6
        rows.append(row)
    return pd.DataFrame(rows).set_index("idle_sockets")


@one_core()
def batched_reads(calls=(1, 4, 16, 64, 256), size=4096) -> pd.DataFrame:
    """N preads one system call each, against the same N in one io_uring submission.

    The file is written first and read from the page cache, so both sides do
    the same copying; the difference is the crossings.
    """
    n_max = max(calls)
    rows = []
    with tempfile.TemporaryFile() as f:
        f.write(os.urandom(size * n_max))
        f.flush()
        fd = f.fileno()
        _native.measure_pread(fd, n_max, size, False)  # warm the page cache
        for n in calls:
            single = min(_native.measure_pread(fd, n, size, False) for _ in range(5))
            uring = [_native.measure_pread(fd, n, size, True) for _ in range(5)]
            uring = None if None in uring else min(uring)
            rows.append({"calls": n, "single_us": single * 1e6,
                         "io_uring_us": None if uring is None else uring * 1e6,
                         "note": "" if uring is not None else "io_uring refused by this kernel"})
    return pd.DataFrame(rows).set_index("calls")


@one_core()
def copies(total_bytes=64 << 20, chunk=4096) -> pd.DataFrame:
    """File copy bandwidth: read()+write() in `chunk` pieces against copy_file_range()."""
    rows = []
    with tempfile.TemporaryFile() as src, tempfile.TemporaryFile() as dst:
        src.write(os.urandom(1 << 20) * (total_bytes >> 20))
        src.flush()
        for name, zero in (("read+write", False), ("copy_file_range", True)):
            v = _native.measure_copy(src.fileno(), dst.fileno(), int(total_bytes), int(chunk), zero)
            rows.append({"method": name, "MB_per_s": None if v is None else v / 1e6,
                         "note": "" if v is not None else "not supported here"})
    return pd.DataFrame(rows).set_index("method")


def page_sizes(array_bytes=(16 << 20, 256 << 20), accesses=2_000_000, seed=1) -> pd.DataFrame:
    """Nanoseconds per load, random and page-strided, with 4 KB pages and with transparent huge pages."""
    rows = []
    for size in array_bytes:
        for pattern, rnd in (("random", True), ("strided", False)):
            row = {"array_MiB": size >> 20, "pattern": pattern}
            for label, huge in (("4KB_ns", False), ("huge_ns", True)):
                with one_core():
                    v = _native.measure_access(int(size), int(accesses), rnd, huge, int(seed))
                row[label] = None if v is None else v * 1e9
            rows.append(row)
    return pd.DataFrame(rows).set_index(["array_MiB", "pattern"])


@exclusive()
def run_all(quick=False) -> pd.DataFrame:
    """A one-page summary of every measurement (for `pysim measure`)."""
    b = basics(quick)
    rows = [("system call (getppid)", b["syscall_s"] * 1e6, "us"),
            ("timer resolution", b["timer_resolution_s"] * 1e9, "ns"),
            ("memcpy bandwidth", b["memcpy_bytes_per_s"] / 1e6, "MB/s")]
    for n, v in udp_rtt((1, 1472), iters=500 if quick else 2000)["rtt_us"].items():
        rows.append((f"UDP loopback round trip, {n} B", v, "us"))
    tp = tcp_throughput(16 << 20 if quick else 64 << 20, rcvbufs=(4 << 20,))
    rows.append(("TCP loopback throughput", tp["throughput_MB_per_s"].iloc[0], "MB/s"))
    ew = event_wait((1000,), calls=50 if quick else 200)
    for mech in MECHANISMS:
        rows.append((f"{mech}, 1000 idle + 8 ready sockets", ew[f"{mech}_us"].iloc[0], "us/call"))
    br = batched_reads((64,))
    rows.append(("64 x pread 4 KB, one syscall each", br["single_us"].iloc[0], "us"))
    rows.append(("64 x pread 4 KB, one io_uring batch", br["io_uring_us"].iloc[0], "us"))
    ps = page_sizes((64 << 20,), accesses=500_000 if quick else 2_000_000)
    rows.append(("random load, 64 MiB, 4 KB pages", ps.loc[(64, "random"), "4KB_ns"], "ns"))
    rows.append(("random load, 64 MiB, huge pages", ps.loc[(64, "random"), "huge_ns"], "ns"))
    return pd.DataFrame(rows, columns=["measurement", "value", "unit"])
