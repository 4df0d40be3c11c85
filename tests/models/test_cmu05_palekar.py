"""Mechanism checks of the in-band against out-of-band storage model (cmu05_palekar)."""
import dataclasses
import sys
from collections import OrderedDict

import numpy as np
import pytest

from pysim.models import cmu05_palekar as m
from pysim.units import MiB, ns, us

P = m.Params()


def client_bound(p, nbytes):
    """PanFS's client, the bottleneck of a windowed read: a request out, the unit in (two requests' work)."""
    return nbytes / (2 * p.request_us * us + nbytes * p.stack_ns_per_byte * ns)


def test_panfs_stream_runs_at_the_client_cpu_bound():
    rate = 1 / m.seconds_per_byte(P, "panfs", False, "osd", False)
    assert rate == pytest.approx(client_bound(P, P.stripe_unit_bytes), rel=0.02)


def test_in_band_server_carries_each_byte_twice():
    # the DirectorBlade takes the unit from an OSD and sends it on: four requests' work and two passes per byte
    n = P.nfs_transfer_bytes
    server = n / (4 * P.request_us * us + 2 * n * P.stack_ns_per_byte * ns)
    rate = 1 / m.seconds_per_byte(P, "nfs", False, "osd", False)
    assert rate <= server * 1.01
    assert rate < 0.6 * client_bound(P, P.stripe_unit_bytes)
    # without the forwarding the same data path is PanFS's own
    direct = dataclasses.replace(P, in_band="direct")
    assert m.seconds_per_byte(direct, "nfs", False, "osd", False) == pytest.approx(
        m.seconds_per_byte(direct, "panfs", False, "osd", False), rel=1e-9)


def test_random_reads_wait_for_the_disk():
    seq = m.seconds_per_byte(P, "panfs", False, "disk", False)
    rnd = m.seconds_per_byte(P, "panfs", False, "disk", True)
    assert rnd > 5 * seq  # a seek and half a rotation for every 64 KB, one request at a time
    per_request = rnd * P.stripe_unit_bytes
    assert 4e-3 < per_request < 25e-3


class RefLRU:
    """An obviously correct LRU for the cross-check."""

    def __init__(self, n):
        self.n, self.d = n, OrderedDict()

    def access(self, k):
        hit = k in self.d
        if hit:
            self.d.move_to_end(k)
        else:
            self.d[k] = True
            if len(self.d) > self.n:
                self.d.popitem(last=False)
        return hit


def test_hierarchy_levels_match_a_reference_lru(seed):
    p = dataclasses.replace(P, client_ram_bytes=64 * MiB, server_cache_bytes=96 * MiB, osd_ram_bytes=16 * MiB)
    page = 1 * MiB
    h = m.Hierarchy(p, "nfs", page)
    caps = [p.client_cache_bytes // page, p.server_cache_bytes // page, p.osd_cache_bytes * p.osds // page]
    refs = [RefLRU(c) for c in caps]
    keys = np.random.default_rng(seed).integers(0, 400, 3000)
    served = h.read(keys)
    want = dict.fromkeys(m.LEVELS, 0)
    for k in keys:
        for name, ref in zip(("client", "server", "osd"), refs):
            if ref.access(int(k)):
                want[name] += 1
                break
        else:
            want["disk"] += 1
    assert served == want


def test_sequential_rescan_gets_nothing_from_a_smaller_cache():
    page = P.record_bytes
    h = m.Hierarchy(P, "panfs", page)
    n_cache = P.client_cache_bytes // page
    small = np.arange(n_cache - 1)
    h.read(small)
    assert h.read(small)["client"] == small.size
    big = np.arange(1000, 1000 + n_cache + 5)
    h.read(big)
    assert h.read(big)["client"] == 0


def test_knee_follows_the_client_ram():
    f4 = m.figure4(quick=True)
    assert m.knee_MB(f4["nfs_MBps"]) == 1024
    big = m.figure4(dataclasses.replace(P, client_ram_bytes=3 * 1024 * MiB), quick=True)
    assert m.knee_MB(big["nfs_MBps"]) == 4096
    assert m.knee_MB(m.figure4(dataclasses.replace(P, client_caching=False), quick=True)["nfs_MBps"]) != 1024


def test_postmark_phases_count_every_file(seed):
    ph = m.postmark_phases(300, 100, 4096, 32768, 4096, 4096, seed)
    pool, tx, end = ph["pool"], ph["transactions"], ph["deletion"]
    assert pool["creates"] == 300 and pool["deletes"] == 0
    assert tx["creates"] + tx["deletes"] == 100
    assert end["deletes"] == 300 + tx["creates"] - tx["deletes"] and end["creates"] == 0
    # every created file's pages are written, none twice in the pool
    assert pool["write"].size == np.unique(pool["write"]).size
    assert pool["bytes_w"] <= pool["write"].size * 4096 < pool["bytes_w"] + 300 * 4096


def test_osd_caches_clean_to_disk_only_at_100k_files():
    ph = {n: m.postmark_phases(n, 0, 4096, 32768, 4096, 4096, 0) for n in (10_000, 100_000)}
    flushed = {}
    for n, x in ph.items():
        h = m.Hierarchy(P, "panfs", P.page_bytes)
        keys = np.concatenate([x["pool"]["write"], x["pool"]["write"] | np.uint64(1 << 63)])
        flushed[n] = h.write(keys, through=True)["flushed"]
    assert flushed[10_000] == 0 and flushed[100_000] > 0
    big = dataclasses.replace(P, osd_ram_bytes=4096 * MiB)
    h = m.Hierarchy(big, "panfs", P.page_bytes)
    x = ph[100_000]["pool"]["write"]
    assert h.write(np.concatenate([x, x | np.uint64(1 << 63)]), through=True)["flushed"] == 0


def test_fit_lands_on_its_cell():
    top = max(m.figure2(P)["panfs_MBps"].max(), m.figure3(P)["panfs_MBps"].max())
    assert top == pytest.approx(61.0, rel=0.01)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="in_band"):
        dataclasses.replace(P, in_band="fast")
    with pytest.raises(ValueError, match="test"):
        m.iozone_run(P, "nfs", 64 * MiB, "reread")
    with pytest.raises(ValueError, match="block"):
        m.postmark_phases(10, 0, 4096, 8192, 512, 4096, 0)


def test_now_program_runs_the_proxy_and_the_cliff(tmp_path):
    rows, why = m._run_now(sys.executable, "proxy", {"osds": 2, "file_mb": 4, "unit_kb": 64, "files": [50]})
    assert not why, why
    rates = {r["path"]: r["MBps"] for r in rows if r["experiment"] == "proxy"}
    assert set(rates) == {"in-band", "out-of-band"} and min(rates.values()) > 0
    rows, why = m._run_now(sys.executable, "cliff", {"budget_mb": 8, "sizes_mb": [4, 16],
                                                      "folder": str(tmp_path)})
    assert not why, why
    assert [r["size_MB"] for r in rows] == [4, 16] and all(r["MBps"] > 0 for r in rows)
    assert not list(tmp_path.iterdir())  # the program cleans up after itself
