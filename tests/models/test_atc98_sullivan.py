"""Mechanism checks of the Tribeca scan model (atc98_sullivan)."""
import dataclasses
import itertools
import math
import shutil
import sys

import numpy as np
import pytest

from pysim.harness.commands import run_command
from pysim.models import atc98_sullivan as m
from pysim.units import KiB, us
from pysim.workloads import records

P = m.Params()


def closed_form_bytes_per_s(device, record_bytes, record_s, buffers):
    """The double-buffered pipeline by hand: the slower stage with two buffers, their sum with one; with
    programmed I/O the CPU moves the data, so transfer and work always add."""
    per_byte_work = record_s / record_bytes
    if device.pio:
        return 1.0 / (max(1.0 / device.bytes_per_s, device.cpu_s_per_byte) + per_byte_work)
    fill, cpu = 1.0 / device.bytes_per_s, device.cpu_s_per_byte + per_byte_work
    return 1.0 / (max(fill, cpu) if buffers == 2 else fill + cpu)


@pytest.mark.parametrize("pio", [False, True])
@pytest.mark.parametrize("buffers", [1, 2])
def test_scan_matches_the_pipeline_by_hand(pio, buffers, seed):
    rng = np.random.default_rng(seed)
    for _ in range(5):
        dev = m.Device("d", rng.uniform(1e6, 1e7), rng.uniform(0, 2e-7), pio=pio)
        size, work = rng.uniform(32, 1500), rng.uniform(0, 30) * us
        r = m.scan(dev, record_bytes=size, record_s=work, buffers=buffers, buffer_bytes=64 * KiB, n_buffers=40)
        expected = closed_form_bytes_per_s(dev, size, work, buffers)
        assert r["bytes_per_s"] == pytest.approx(expected, rel=1e-9)
        assert r["records_per_s"] == pytest.approx(expected / size, rel=1e-9)
        # the CPU's share is its work per byte over the time per byte
        cpu = (max(1 / dev.bytes_per_s, dev.cpu_s_per_byte) if pio else dev.cpu_s_per_byte) + work / size
        assert r["cpu_pct"] == pytest.approx(100 * cpu * expected, rel=1e-9)


def test_double_buffering_hides_record_work_until_the_cpu_saturates():
    dev = m.Device("disk", 5e6, 1e-7)  # the CPU needs half of the device's time for the I/O path alone
    base = m.scan(dev, record_bytes=290, record_s=0.0)["bytes_per_s"]
    hidden = m.scan(dev, record_bytes=290, record_s=25 * us)["bytes_per_s"]  # 0.086 us/B: still under 0.2
    assert base == pytest.approx(5e6) and hidden == pytest.approx(5e6)
    saturated = m.scan(dev, record_bytes=290, record_s=40 * us)["bytes_per_s"]
    assert saturated == pytest.approx(1 / (1e-7 + 40e-6 / 290)) and saturated < 5e6
    single = m.scan(dev, record_bytes=290, record_s=25 * us, buffers=1)["bytes_per_s"]
    assert single == pytest.approx(1 / (1 / 5e6 + 1e-7 + 25e-6 / 290))


def test_programmed_io_holds_the_cpu_so_record_work_always_costs_speed():
    tape = m.Device("tape", 32e6, 1.4e-7, pio=True)
    a = m.scan(tape, record_bytes=238, record_s=0.0)
    b = m.scan(tape, record_bytes=238, record_s=1 * us)
    assert a["cpu_pct"] == pytest.approx(100) and b["cpu_pct"] == pytest.approx(100)
    assert b["bytes_per_s"] / a["bytes_per_s"] == pytest.approx(1.4e-7 / (1.4e-7 + 1e-6 / 238))
    assert a["system_pct"] == pytest.approx(100) and b["system_pct"] < 100


def test_atm3_recipe_is_the_hand_count():
    cpu = P.cpu
    c = {op: cpu.fixed_s[op] / us for op in cpu.fixed_s}
    share = 1 / P.virtual_circuits
    # parse, the qualification node, the VCI extracted and compared (an operator call each), and for the
    # passing cells the aggregate node and a counted update through its operator
    by_hand = (c["parse_fixed"] + c["node"] + 2 * c["virtual_call"] + c["bitfield"] + c["compare"]
               + share * (c["node"] + c["virtual_call"] + c["add"]))
    assert m.record_us(P, "atm3") == pytest.approx(by_hand, rel=1e-12)
    hand = c["parse_fixed"] + c["shift"] + c["compare"] + share * c["add"]
    assert m.record_us(P, "atm3", hand_coded=True) == pytest.approx(hand, rel=1e-12)


def test_optimizer_order_is_the_cheapest_of_all_orders():
    fields = ("msg_type", "control", "nlpid", "interface", "channel")
    preds = [m._predicate(P, f) for f in fields]
    cpu = P.cpu

    def cost(order):
        total, reach = 0.0, 1.0
        for pr in order:
            total += reach * m._field_recipe(P, pr, False).seconds(cpu)
            reach *= pr.passes
        return total

    best = min(cost(o) for o in itertools.permutations(preds))
    assert cost(m.ordered(P, preds, False)) == pytest.approx(best, rel=1e-12)
    written = dataclasses.replace(P, ordered_predicates=False)
    assert m.record_us(written, "frame4") > m.record_us(P, "frame4") + 1.5 * P.call_cycles / P.clock_hz / us


def test_materialising_and_bit_fields_are_charged_where_the_paper_says():
    # a key of contiguous byte fields is used in place (frame6); non-contiguous fields (frame8) and bit
    # fields (atm1) are assembled
    def ops(name):
        return m.query_recipe(P, name).ops

    assert "materialize" not in ops("frame6") and ops("frame8")["materialize"] > 0 and ops("atm1")["materialize"] == 1
    flat = dataclasses.replace(P, atm_bitfields=False)
    assert "bitfield" not in m.query_recipe(flat, "atm2").ops and "materialize" not in m.query_recipe(flat, "atm2").ops
    copies = dataclasses.replace(P, materialize_intermediate=True)
    assert m.query_recipe(copies, "frame2").nbytes["copy"] == pytest.approx(
        P.disk_frame_record_bytes * (1 + P.data_share))  # the qualification node, and the aggregate's share


def test_tables_follow_the_bottleneck():
    t1 = m.table1(quick=True)
    dd = t1.loc["dd", "kbytes_per_s"]
    assert dd == pytest.approx(P.disk_bytes_per_s / 1024)
    assert t1.loc["dd", "cpu_pct"] == pytest.approx(100 * P.disk_cpu_ns_per_byte * 1e-9 * P.disk_bytes_per_s)
    for q in m.FRAME_QUERIES:  # device-bound: the CPU has time to spare
        assert t1.loc[q, "kbytes_per_s"] == pytest.approx(dd) and t1.loc[q, "cpu_pct"] < 100
    for q in m.ATM_QUERIES:    # CPU-bound: 64-byte records, bit fields
        per_byte = P.disk_cpu_ns_per_byte * 1e-9 + m.record_us(P, q) * us / P.atm_record_bytes
        assert t1.loc[q, "kbytes_per_s"] == pytest.approx(1 / per_byte / 1024) and t1.loc[q, "cpu_pct"] == pytest.approx(100)
    assert (t1.loc[list(m.FRAME_QUERIES), "records_per_s"] * P.disk_frame_record_bytes / 1024).round(6).equals(
        t1.loc[list(m.FRAME_QUERIES), "kbytes_per_s"].round(6))


def test_counterfactuals_move_the_tables_the_way_their_claims_need():
    base = m.table1(quick=True)
    single = m.table1(dataclasses.replace(P, tribeca_double_buffered=False), quick=True)
    assert single.loc["frame1", "kbytes_per_s"] < 0.7 * base.loc["frame1", "kbytes_per_s"]
    assert single.loc["dd", "kbytes_per_s"] == base.loc["dd", "kbytes_per_s"]  # dd keeps the file system's read-ahead
    t3 = m.table3(dataclasses.replace(P, generic_executor=False), quick=True)
    assert t3["ratio"].tolist() == pytest.approx([1.0, 1.0])
    dma = m.table3(dataclasses.replace(P, tape_pio=False), quick=True)
    assert (dma["standalone_cpu_pct"] < 20).all()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="query"):
        m.record_us(P, "frame9")
    with pytest.raises(ValueError, match="buffers"):
        m.scan(m.Device("d", 1e6, 0.0), record_bytes=64, record_s=0.0, buffers=3)
    with pytest.raises(ValueError, match="bytes_per_s"):
        m.Device("d", 0.0, 0.0)
    with pytest.raises(ValueError, match="data_share"):
        dataclasses.replace(P, data_share=1.5)
    with pytest.raises(ValueError, match="data"):
        m.Query("q", "ethernet")
    with pytest.raises(ValueError, match="file_bytes"):
        m.record_files(100)


# --- the real scan on this machine ---------------------------------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
@pytest.mark.parametrize("buffers", [1, 2])
def test_scanner_agrees_with_the_reference_parser_across_buffer_boundaries(tmp_path, buffers, seed):
    # 4 KB buffers split records (up to 4112 bytes) across reads; the counts must still be the reference's
    exe, why = m.build_scanner()
    assert exe is not None, why
    data = records.frame_relay_records(300_000, rng=seed)
    path = tmp_path / "fr.bin"
    path.write_bytes(data)
    ref = records.frame_relay_summary(data)
    r = run_command([exe, path, "frame1", "cache", buffers, 1, 4096])
    (n, matched, total, groups, *_), = m._parse_passes(r.stdout)
    assert (n, matched, total, groups) == (ref["records"], ref["records"], ref["frame_bytes"], 0)
    r = run_command([exe, path, "frame6", "cache", buffers, 1, 4096])
    (_, matched, _, _, *_), = m._parse_passes(r.stdout)
    assert matched == ref["by_type"][1]  # the data frames, over every (interface, channel) group


@needs_gcc
def test_scanner_reads_the_atm_bit_fields():
    exe, _ = m.build_scanner()
    files = m.record_files(1 << 20, rng=0)
    vci = records.atm_vci(files["atm"].read_bytes())
    r = run_command([exe, files["atm"], "atm3", "direct", 2, 1, 1 << 20])
    assert r.returncode == 0, r.stderr
    (n, matched, _, _, *_), = m._parse_passes(r.stdout)
    assert (n, matched) == (len(vci), int((vci == 40).sum()))
    r = run_command([exe, files["atm"], "atm1", "cache", 1, 1, 1 << 20])
    (_, matched, _, groups, *_), = m._parse_passes(r.stdout)
    assert (matched, groups) == (len(vci), len(np.unique(vci)))


@needs_gcc
def test_measure_now_runs_every_configuration_and_the_answers_agree():
    now = m.measure_now(quick=True, python=sys.executable)
    assert "agrees" in now.attrs["check"]
    c = now[(now["system"] == "hand-coded C") & (now["mode"] != "load")]
    assert c["available"].all() and (c["mb_per_s"] > 0).all()
    dd = now[now["system"] == "dd"]
    assert dd["available"].all() or dd["note"].str.startswith("not available").all()
    duck = now[now["system"] == "DuckDB"]
    if duck["available"].any():
        assert now.attrs["agree"] == "DuckDB and the C scanner give the same answers"
    else:
        assert duck["note"].str.startswith("not available").all()
    tvn = m.then_and_now(now)
    assert set(tvn.index.get_level_values("query")) == set(m.NOW_QUERIES)
    assert math.isfinite(tvn.loc[("frame1", "MB/s"), "now_c"])
