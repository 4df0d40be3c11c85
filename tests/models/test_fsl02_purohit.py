"""Mechanism checks of the Cosy cost model (fsl02_purohit): hand counts, an LRU peer, the disk's media rate."""
import dataclasses
from collections import OrderedDict

import pytest

from pysim.models import fsl02_purohit as m

P = m.Params()
US = 1e-6


def test_getpid_matches_a_hand_count_of_crossings_and_steps():
    """VAN: n x (loop step, trap, getpid). COSY: two ops built, one trap, two decoded, n x (step, getpid)."""
    f2 = m.figure2(P)
    for n in (2, 16, 256):
        van_user, van_sys = n * P.uloop_us, n * (P.trap_us + P.getpid_body_us)
        cosy_user = 2 * P.build_us
        cosy_sys = P.trap_us + 2 * P.decode_us + n * (P.cosy_step_us + P.getpid_body_us)
        elapsed = 100 * (1 - (cosy_user + cosy_sys) / (van_user + van_sys))
        assert f2.loc[str(n), "elapsed_improvement_pct"] == pytest.approx(elapsed, rel=1e-12)
        assert f2.loc[str(n), "user_improvement_pct"] == pytest.approx(100 * (1 - cosy_user / van_user), rel=1e-12)


def test_cosy_user_time_is_fixed_and_van_user_time_grows_linearly():
    cfg = m.configs(P)
    cosy = [m.getpid_work(cfg["COSY"], n).seconds(m.cost_model(P))[0] for n in (2, 64)]
    van = [m.getpid_work(cfg["VAN"], n).seconds(m.cost_model(P))[0] for n in (2, 64)]
    assert cosy[0] == cosy[1] > 0
    assert van[1] == pytest.approx(32 * van[0])


def _copy_us(nbytes, p=P):
    return nbytes / p.copy_bytes_per_s / US


@pytest.mark.parametrize("p", [P, dataclasses.replace(P, segment_call_us=0.2)], ids=["gs-prefix", "isolated"])
def test_database_matches_a_hand_count_per_iteration(p):
    """An iteration: random(), lseek, read, the alternate test and half a write; one compound of six ops."""
    t = m.database_times(p)
    iterations = p.db_operations / 1.5
    kernel = p.lseek_us + p.read_page_us + 0.5 * p.write_page_us
    van = p.rng_us + 2.5 * (p.uloop_us + p.trap_us) + kernel + _copy_us(1.5 * p.request_bytes, p)
    steps = 1 + 1 + 1 + 1 + 0.5  # random(), lseek, read, the alternate test, half a write
    per_iter = p.rng_us + p.segment_call_us + steps * p.cosy_step_us + kernel + _copy_us(1.5 * p.request_bytes, p)
    once = 6 * (p.build_us + p.decode_us) + p.trap_us
    assert t.loc["VAN", "elapsed_s"] == pytest.approx(van * iterations * US, rel=1e-12)
    assert t.loc["COSY", "elapsed_s"] == pytest.approx((per_iter * iterations + once) * US, rel=1e-12)


def test_zero_copy_skips_the_read_copy_but_not_the_write_copy():
    """§3: the write after a zero-copy read copies from the page the read left its data in."""
    t = m.database_times(P)
    iterations = P.db_operations / 1.5
    assert t.loc["COSY", "elapsed_s"] - t.loc["COSY_FAST", "elapsed_s"] == pytest.approx(
        _copy_us(P.request_bytes) * iterations * US)
    both = m.database_times(dataclasses.replace(P, zero_copy=False))
    assert both.loc["COSY_FAST", "elapsed_s"] == both.loc["COSY", "elapsed_s"]


def test_without_composition_cosy_costs_what_van_costs():
    off = m.figure4(dataclasses.replace(P, composition=False, zero_copy=False))
    assert off.loc["COSY", "elapsed_s"] == off.loc["VAN", "elapsed_s"]
    assert off.loc["COSY_FAST", "elapsed_s"] == off.loc["VAN", "elapsed_s"]


def test_more_processes_on_one_cpu_only_add_time_slice_switches():
    one, four = m.database_times(P, 1), m.database_times(P, 4)
    busy = one.loc["VAN", "elapsed_s"]
    switches = busy / (P.timeslice_ms * 1e-3) * P.context_switch_us * US
    assert four.loc["VAN", "elapsed_s"] - busy == pytest.approx(switches)


def _lru_second_pass_misses(pages, capacity):
    """A real LRU cache: one sequential pass to fill it, then count the misses of a second pass."""
    cache = OrderedDict()
    misses = 0
    for rnd in range(2):
        for page in range(pages):
            if page in cache:
                cache.move_to_end(page)
            else:
                misses += rnd
                cache[page] = True
                if len(cache) > capacity:
                    cache.popitem(last=False)
    return misses


@pytest.mark.parametrize("pages, capacity", [(50, 100), (100, 100), (101, 100), (400, 100)])
def test_bonnies_rereads_miss_like_a_plain_python_lru(pages, capacity):
    misses = m.bonnie_misses(pages, capacity)
    assert misses["rewrite"] == misses["fastread"] == _lru_second_pass_misses(pages, capacity)


def test_sequential_bandwidth_is_the_outer_zone_media_rate_less_overheads():
    sectors_per_track = m.DISK.zones[0][1]
    media = sectors_per_track * m.DISK.sector_bytes * m.DISK.rpm / 60
    bw = m._sequential_bandwidth()
    assert 0.6 * media < bw < media


def test_fastread_below_memory_matches_a_hand_count():
    """Per 4 KB block: VAN a loop step, a trap, the page-cache work and the copy; COSY_FAST a read and
    a while test interpreted, the page-cache work, no copy; plus one compound of three ops."""
    pages = 32 * 2**20 // m.PAGE
    van = pages * (P.uloop_us + P.trap_us + P.read_page_us + _copy_us(m.PAGE))
    fast = 3 * (P.build_us + P.decode_us) + P.trap_us + pages * (2 * P.cosy_step_us + P.read_page_us)
    assert m.figure5(P).loc["32", "fastread_pct"] == pytest.approx(100 * (1 - fast / van), rel=1e-9)


def test_bonnie_knee_follows_the_page_cache():
    f5 = m.figure5(P)
    assert f5.loc["64", "fastread_pct"] > 2 * f5.loc["128", "fastread_pct"]
    bigger = m.figure5(dataclasses.replace(P, memory_bytes=512 * 2**20))
    assert bigger.loc["256", "fastread_pct"] > 2 * f5.loc["256", "fastread_pct"]
    assert bigger.loc["512", "fastread_pct"] < 0.5 * bigger.loc["256", "fastread_pct"]


def test_cold_ls_disk_time_is_the_same_for_every_configuration_and_grows_with_the_files():
    small, big = m.ls_times(P, 5000), m.ls_times(P, 50000)
    for t in (small, big):
        io = {c: v["elapsed_s"] - v["system_s"] - v["user_s"] for c, v in t.items()}
        assert max(io.values()) - min(io.values()) < 1e-12
    assert big["VAN"]["elapsed_s"] > 8 * small["VAN"]["elapsed_s"]


def test_grep_moves_the_search_into_the_kernel():
    """COSY's system time gains the search and the interpretation, loses a trap per call: a hand count."""
    f7 = m.figure7(P)
    files = 1024 // 8
    chunks = 2 * files
    search = chunks * m.PAGE * P.search_us_per_byte
    calls = 5 * files  # open, two reads, the read at EOF, close
    steps = calls + 3 * files + chunks  # each call, the do-while test after each read, the search calls
    once = P.trap_us + m.GREP_OPS * P.decode_us
    moved = search + chunks * P.segment_call_us + steps * P.cosy_step_us + once - calls * P.trap_us
    assert f7.loc["1024", "COSY_system_us"] - f7.loc["1024", "VAN_system_us"] == pytest.approx(moved)
    assert f7.loc["1024", "VAN_user_us"] == pytest.approx(search + calls * P.uloop_us)


def test_cold_ls_reads_each_block_once_in_the_order_ls_needs_them():
    blocks = m.ls_reads(P, 5000)
    dirs = -(-5000 // P.dir_entries_per_block)
    inodes = -(-5000 // P.inodes_per_block)
    assert len(blocks) == len(set(blocks.tolist())) == dirs + inodes
    table = P.inodes_per_group // P.inodes_per_block
    assert blocks[0] == table and blocks[1] == 0  # the first directory block, then the first inode block
    spill = m.ls_reads(P, P.inodes_per_group + 1)
    assert spill[-1] == P.blocks_per_group  # the next group's inode table


def test_contiguous_buffer_hits_cost_the_command_overhead_and_the_bus():
    """Back-to-back 4 KB reads of consecutive blocks after the first: overhead plus bus transfer each."""
    n = 20
    d = m.Disk(m.DISK)
    first = float(d.run([0.0], [0], [8])["finish_s"].iloc[0])
    r = d.run([first] * n, [8 * (i + 1) for i in range(n)], [8] * n)
    per_hit = m.DISK.overhead_s + m.PAGE / m.DISK.bus_bytes_per_s
    assert r["buffer_hit"].all()
    assert float(r["finish_s"].iloc[-1]) - first == pytest.approx(n * per_hit, rel=0.05)


@pytest.mark.parametrize("field, value", [("trap_us", 0.0), ("request_bytes", 6000), ("dirty_sync_fraction", 2.0),
                                          ("reserved_bytes", 200 * 2**20)])
def test_bad_parameters_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(P, **{field: value})
