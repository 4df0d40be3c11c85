"""Workload generators for storage papers: PostMark, Iozone, untar, namespace trees, RVM, OO7,
traffic record files."""
import collections

import numpy as np
import pytest

from pysim.workloads.files import Namespace, PostMarkConfig, iozone, postmark, untar
from pysim.workloads.objects import OO7, rvm_transactions
from pysim.workloads.records import atm_records, atm_vci, frame_relay_records, frame_relay_summary


def test_postmark_creates_its_pool_then_splits_transactions_by_its_biases():
    cfg = PostMarkConfig(files=200, transactions=4000)
    ops = list(postmark(cfg, rng=1))
    kinds = collections.Counter(op[0] for op in ops)
    sizes = [op[2] for op in ops if op[0] == "create"]
    assert min(sizes) >= 500 and max(sizes) <= 10_000 and abs(np.mean(sizes) - 5250) < 200
    creates_in_transactions = kinds["create"] - 200
    assert abs(creates_in_transactions / 4000 - 0.5) < 0.03
    assert kinds["delete"] == kinds["create"]  # everything left is deleted at the end
    assert all(op[3] <= 512 for op in ops if op[0] in ("read", "write"))


def test_iozone_sequential_and_random_tests_touch_every_record_once():
    seq = [op[2] for op in iozone("read", 1 << 20, 4096)]
    rnd = [op[2] for op in iozone("random_write", 1 << 20, 4096, rng=2)]
    assert seq == list(range(0, 1 << 20, 4096)) and sorted(rnd) == seq and rnd != seq
    with pytest.raises(ValueError, match="test"):
        list(iozone("backwards", 1 << 20, 4096))


def test_untar_makes_each_directory_once_and_writes_whole_files():
    ops = list(untar([("a/b/x.c", 25_000), ("a/b/y.c", 10), ("a/z.h", 0)], buffer_bytes=10_240))
    assert [op[1] for op in ops if op[0] == "mkdir"] == ["a", "a/b"]
    assert sum(op[3] for op in ops if op[0] == "write") == 25_010
    assert sum(op[0] == "write" for op in ops) == 4


def test_a_generated_namespace_has_the_files_asked_for_and_a_real_walk_sees_real_files(tmp_path):
    ns = Namespace.generate(5000, files_per_dir=20, rng=3)
    assert ns.file_count == 5000 and len(list(ns.paths())) == 5000
    assert 150 < len(ns.files) < 400
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f.txt").write_text("hello")
    (tmp_path / "g.bin").write_bytes(b"\0" * 100)
    walked = Namespace.walk(tmp_path)
    assert dict(walked.paths()) == {"g.bin": 100, "d/e/f.txt": 5}


def test_rvm_transactions_hit_the_hot_region_twice_and_append_in_order():
    txns = list(rvm_transactions(2000, 1 << 20, hot_bytes=4096, rng=4))
    hot = [sum(off < 4096 for off, n in t[:3]) for t in txns]
    assert np.mean(hot) == pytest.approx(2 + 4096 / (1 << 20), abs=0.02)
    assert [t[3][0] for t in txns[:3]] == [1 << 20, (1 << 20) + 64, (1 << 20) + 128]


def test_oo7_traversals_read_every_reachable_part_and_update_as_their_names_say():
    db = OO7(composites=50, levels=3, assembly_fanout=3)
    t1_pages, t1_writes = db.traversal("T1")
    _, t2a = db.traversal("T2a")
    _, t2c = db.traversal("T2c")
    visits = db.base_assemblies * db.composites_per_base
    assert not t1_writes.any() and t2a.sum() == visits
    assert t2c.sum() == 4 * visits * db.atomic_per_composite  # the ring makes every part reachable
    assert t1_pages.max() <= db.layout()["bytes"] // db.page_bytes


def test_record_files_have_the_recorders_shapes_and_the_summary_reads_them_back():
    atm = atm_records(1000, vcis=8, rng=5)
    assert len(atm) == 64 * 1000 and set(np.unique(atm_vci(atm))) <= set(range(32, 40))
    fr = frame_relay_records(1_000_000, mean_bytes=290, rng=6)
    s = frame_relay_summary(fr)
    assert abs(len(fr) / s["records"] - 290) < 15 and s["frame_bytes"] == len(fr) - 16 * s["records"]
    with pytest.raises(ValueError, match="inside a record"):
        frame_relay_summary(fr[:-1])
