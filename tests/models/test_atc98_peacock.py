"""Mechanism checks of the Netra NFS model (atc98_peacock): the I/O recipes, the MVA
and the engine, the flusher's busy set, recovery as a scan plus the working set, mkfs with lastino."""
import dataclasses
import math

import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.hw.storage import QueuedDisk
from pysim.models import atc98_peacock as m

P = m.Params()


def _ios(setup, params=P):
    amap = m.ArrayMap(params, setup)
    return amap.write(12345)


def test_raid5_small_write_is_six_ios_four_with_presto_lower_one_on_raid0():
    six = _ios(m.Setup("raid5", "none"))
    assert len(six) == 6
    assert sum(rw == m.READ for _, _, rw in six) == 2  # old data and old parity
    disks = {d for d, _, _ in six}
    assert len(disks) == 2  # the data disk and the parity disk, nothing else
    assert len(_ios(m.Setup("raid5", "upper"))) == 6  # Presto Upper alone leaves the prewrite log on disk
    assert len(_ios(m.Setup("raid5", "upper+lower"))) == 4  # §3.2: two disk operations fewer per write
    assert len(_ios(m.Setup("raid5", "none"), dataclasses.replace(P, sds_prewrite_log=False))) == 4
    assert len(_ios(m.Setup("raid0", "none"))) == 1


def test_raid5_rotates_parity_and_never_puts_data_on_its_parity_disk():
    amap = m.ArrayMap(P, m.Setup("raid5", "none"))
    rows = {}
    for block in range(5 * (P.disks - 1) * P.disks):
        disk, parity, member = amap.place(block)
        assert disk != parity
        rows.setdefault(member, set()).add(disk)
    assert all(len(d) == P.disks - 1 for d in rows.values())  # each stripe row fills every disk but its parity
    assert len({amap.place(r * (P.disks - 1))[1] for r in range(P.disks)}) == P.disks


def test_sds_raid5_on_the_engine_does_six_disk_ios_and_presto_lower_removes_two():
    def one_write(lower, block):
        sim = Simulation()
        disks = [QueuedDisk(sim, m.DISK, name=f"d{k}") for k in range(P.disks)]
        array = m.SdsRaid5(sim, disks, m.SECTORS_PER_BLOCK, prewrite_sectors=128 * m.SECTORS_PER_BLOCK,
                           lower_nvram_s=lower)
        sim.process(array.io(block * m.SECTORS_PER_BLOCK, m.SECTORS_PER_BLOCK, True))
        sim.run()
        return sim.now, [d.ios for d in disks if sum(d.ios.values())]

    for block in (40, 2_000_000):
        slow, ios = one_write(None, block)
        fast, lower_ios = one_write(100e-6, block)
        assert ios == [{"read": 1, "write": 2}] * 2  # §3.2: old data and parity read, prewrite log, in place
        assert lower_ios == [{"read": 1, "write": 1}] * 2
        # the block is written back where it was read: at least one rotation after the read began
        assert fast >= 60 / m.DISK.rpm and slow >= fast
    assert slow > fast + m.DISK.average_seek_s  # far from the prewrite area, the log costs two long seeks


def _trace(setup, params=P, *, load=400.0, n_ops=(1500, 500)):
    return m.trace_at(m._trace_key(params, setup), setup, 5.0, load, n_ops, 0)


def test_bmap_cache_saves_about_one_io_per_appending_write():
    p = dataclasses.replace(P, appending_write_share=1.0)
    base = _trace(m._ufs("raid0", "none", False, False), p)
    bmap = _trace(m._ufs("raid0", "none", True, False), p)
    assert base.counts["writes"] == bmap.counts["writes"] > 100
    saved = base.per_write("write_disk_ops") - bmap.per_write("write_disk_ops")
    # one indirect-block write per append, less the flush (a read and a write) every bmap_pointers appends
    assert 1 - 2.5 / P.bmap_pointers <= saved <= 1.0
    assert bmap.per_write("bmap_flushes") == pytest.approx(1 / P.bmap_pointers, rel=0.5)
    # every append: at least the data and the inode (and the indirect block without the cache)
    assert base.per_write("write_disk_ops") >= 3 and bmap.per_write("write_disk_ops") >= 2
    broken = _trace(m._ufs("raid0", "none", True, False), dataclasses.replace(p, bmap_cache_works=False))
    assert broken.per_write("write_disk_ops") == pytest.approx(base.per_write("write_disk_ops"), rel=0.05)


def test_fast_fsck_adds_synchronous_cg_writes_and_the_linktag_write():
    base = _trace(m._ufs("raid0", "none", False, False))
    ff = _trace(m._ufs("raid0", "none", False, True))
    assert ff.counts["busy_marks"] > 0 and base.counts["busy_marks"] == 0
    assert len(ff.sync) > len(base.sync)
    free = _trace(m._ufs("raid0", "none", False, True),
                  dataclasses.replace(P, busy_marks_sync=False, linktag_write=False, flusher_writes=False))
    assert len(free.background) == 0 < len(ff.background)  # the flusher's writes are all write-behind
    assert len(free.sync) == pytest.approx(len(base.sync), rel=0.03)


def test_nvram_absorbs_rewrites_and_write_through_does_not():
    setup = m._ufs("raid0", "upper", True, True)
    trace = _trace(setup)
    d = m.storage_demands(P, setup, trace)
    through = m.storage_demands(dataclasses.replace(P, nvram_absorbs_rewrites=False), setup, trace)
    none = m.storage_demands(P, m._ufs("raid0", "none", True, True), trace)
    assert 0.3 < d.nvram_hit_rate < 0.95
    assert d.foreground_s.sum() < none.foreground_s.sum()  # acknowledged by NVRAM: only reads wait for disks
    assert (through.foreground_s + through.background_s).sum() > (d.foreground_s + d.background_s).sum()


def test_busy_set_follows_the_flusher():
    kw = dict(inodes=20000, cgs=200, throughput=1500.0, io_s=100e-6, elapsed_s=900.0)
    slow, fast = m.busy_set(P, (30.0, 0.1), **kw), m.busy_set(P, (1.0, 0.1), **kw)
    assert fast.busy_inodes < slow.busy_inodes / 10 and fast.busy_cgs < slow.busy_cgs
    # a flusher that keeps up cleans every group each interval: its duty does not matter
    assert m.busy_set(P, (1.0, 0.4), **kw).busy_inodes == pytest.approx(fast.busy_inodes, rel=1e-6)
    # rarely marked: about half of what one cycle marks is busy at a random moment
    rate = kw["throughput"] * m.marks_per_op(P)
    assert fast.busy_inodes == pytest.approx(rate * fast.cycle_s / 2, rel=0.05)
    # one write at a time behind long disk queues: the sweep cannot keep up
    stuck = m.busy_set(P, (1.0, 0.1), **{**kw, "io_s": 0.5})
    assert stuck.cycle_s > 10 * fast.cycle_s and stuck.busy_inodes > 20 * fast.busy_inodes


def test_recovery_is_a_fixed_scan_plus_the_working_set():
    empty = m.recovery(P, 0, (1.0, 0.1), quick=True)
    lay = m.layout(P, P.crash_fs_gb, m.Setup())
    per_cg = empty["fast_fsck_s"] / lay.n_cg
    assert 4e-3 < per_cg < 20e-3  # one CG block read at a time: a short seek and half a rotation
    assert empty["ufs_s"] == pytest.approx(m.cg_scan_s(P, P.crash_fs_gb) + m.inode_scan_s(P, P.crash_fs_gb))
    assert empty["vxfs_s"] == 0
    # standard fsck reads every inode block: at least the array's sequential rate for that many bytes
    inode_bytes = lay.n_cg * lay.inode_blocks * m.BLOCK
    assert m.inode_scan_s(P, P.crash_fs_gb) > inode_bytes / m._streaming_bytes_per_s(P)
    bitmap = m.recovery(dataclasses.replace(P, fsck_reads_every_cg=False), 0, (1.0, 0.1), quick=True)
    assert bitmap["fast_fsck_s"] == 0


def test_mkfs_with_lastino_skips_all_but_the_root_inode_block():
    lay = m.layout(P, P.mkfs_fs_gb, m.Setup())
    std, last = m.mkfs_s(P, P.mkfs_fs_gb, lastino=False), m.mkfs_s(P, P.mkfs_fs_gb, lastino=True)
    assert std - last == pytest.approx((lay.n_cg * lay.inode_blocks - 1) * P.mkfs_block_ms * 1e-3)
    # with lastino, each group costs its superblock copy and CG block: two SDS small writes (three phases each)
    assert 2 * 3 * 60 / m.DISK.rpm / 2 * 0.5 < last / lay.n_cg < 0.2


def test_the_engine_agrees_with_the_mva():
    r = m.engine_run(P, m._ufs("raid0", "upper", True, True), 1000.0, seconds=3.0, quick=True)
    assert r["engine_throughput"] == pytest.approx(r["mva_throughput"], rel=0.08)
    assert r["engine_response_ms"] == pytest.approx(r["mva_response_ms"], rel=0.5)


def test_same_seed_same_curve_and_saturation_is_where_the_server_keeps_up():
    setup = m._ufs("raid5", "upper+lower", True, True)
    a = m.curve(P, setup, (400, 1000), quick=True, seed=3)
    b = m.curve(P, setup, (400, 1000), quick=True, seed=3)
    assert a.equals(b)
    assert a.loc["400", "throughput_ops"] == pytest.approx(400, rel=1e-3)
    assert a.loc["peak", "response_ms"] == pytest.approx(P.processes / a.loc["peak", "throughput_ops"] * 1e3, rel=0.05)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="raid"):
        m.Setup(raid="raid6")
    with pytest.raises(ValueError, match="presto"):
        m.Setup(presto="lower")
    with pytest.raises(ValueError, match="flusher"):
        m.Setup(flusher=(0.0, 0.1))
    with pytest.raises(ValueError, match="disks"):
        dataclasses.replace(P, disks=2)
    with pytest.raises(ValueError, match="file_kb"):
        dataclasses.replace(P, file_kb=((0, 1),))


def test_then_and_now_measures_or_says_why_not():
    fs = m.measure_mkfs_fsck(quick=True)
    assert list(fs.index) == list(m.NOW_SIZES_GB[True])
    for _, row in fs.iterrows():
        if row["note"]:
            assert row["note"].startswith("not available")
            continue
        assert all(math.isfinite(row[c]) and row[c] > 0 for c in ("mkfs_lazy_s", "mkfs_eager_s", "fsck_lazy_s"))
        assert row["fsck_full_s"] > row["fsck_lazy_s"]  # reading every inode table costs more than skipping them
    sync = m.measure_fsync(quick=True)
    assert set(sync.index) == {"disk", "memory (tmpfs)"}
    tvn = m.then_and_now(fs, sync)
    assert len(tvn) == 3 and (tvn["then_ratio"] > 1).all()
