"""Mechanism checks of the Trapeze/GMS model (atc98_anderson): the I/O bus and cut-through path against
closed forms, the page RPC against hand counts and the shared delegated hop, the file benchmark against
its bottlenecks, and the real measurements on this machine."""
import dataclasses
import shutil

import pytest

from pysim.engine import Simulation
from pysim.hw.bus import Bus
from pysim.models import atc98_anderson as m
from pysim.sw.rpc import Client, Server, Wire, delegated

P = m.Params()
US = 1e-6


# --- each host's PCI bus and its NIC's DMA engine ------------------------------------------------

def test_a_half_rate_bridge_direction_streams_at_exactly_its_share_in_line_bursts():
    slow, fast = m.bridge_timing(P, 0.5), m.bridge_timing(P, 1.0)
    assert slow.clock_hz == pytest.approx(33e6) and slow.peak_bytes_per_s == pytest.approx(132e6)
    # 64-byte bursts: 16 data cycles, 3 of arbitration, address and turnaround, and the derived wait
    assert slow.bursts(1024) == [64] * 16
    assert slow.burst_cycles(64, write=True) == 32 and slow.write_wait_cycles == 13
    assert 1024 / slow.transfer_s(1024, write=True) == pytest.approx(66e6)
    # the fast direction runs a 1 KB piece as one burst: 256 data cycles, 3 + 2 of overhead
    assert fast.bursts(1024) == [1024]
    assert fast.transfer_s(1024, write=False) == pytest.approx((256 + 5) / 33e6)


def test_a_dma_holds_the_bus_as_the_shared_bus_would_for_a_lone_master():
    timing = m.bridge_timing(P, 0.5)

    def finish(kind):
        sim = Simulation()
        if kind == "shared":
            bus = Bus(sim, timing)
            sim.process(bus.transfer(8192, write=True))
        else:
            sim.process(m.HostPci(sim, timing, timing).transfer(8192, m.TO_HOST))
        sim.run()
        return sim.now

    assert finish("model") == pytest.approx(finish("shared"))


def test_the_nic_engine_moves_one_piece_at_a_time_each_its_work_then_its_bytes():
    sim = Simulation()
    slow, fast = m.bridge_timing(P, 0.5), m.bridge_timing(P, 1.0)
    nic = m.NicDma(sim, m.HostPci(sim, slow, fast), setup_s=10e-6, per_message_s=5e-6)
    ends = []

    def carry(chunk, direction):
        yield sim.process(nic.dma(chunk, direction))
        ends.append(sim.now)

    sim.process(carry(m.Chunk(32, head=True), m.FROM_HOST))
    sim.process(carry(m.Chunk(1024, first_payload=True), m.TO_HOST))
    sim.run()
    first = 5e-6 + (8 + 5) / 33e6                   # firmware work, then 8 data cycles and the overheads
    second = first + 10e-6 + 1024 / 66e6              # the DMA's setup, then the piece at half rate
    assert ends == pytest.approx([first, second])
    assert nic.busy_s == pytest.approx(second) and nic.pci.bus.busy_s == pytest.approx(second - 15e-6)


def test_bus_and_engine_refuse_bad_settings_by_name():
    sim = Simulation()
    pci = m.HostPci(sim, m.bridge_timing(P, 1.0), m.bridge_timing(P, 1.0))
    with pytest.raises(ValueError, match="direction"):
        pci.transfer_s(1, "sideways")
    with pytest.raises(ValueError, match="setup_s"):
        m.NicDma(sim, pci, setup_s=-1.0, per_message_s=0.0)


class Stage:
    """A plain stage for the pipeline checks: ``seconds_per_byte`` per byte, one piece at a time."""

    def __init__(self, sim, seconds_per_byte):
        self.sim, self.spb, self.res = sim, seconds_per_byte, sim.resource(1)

    def carry(self, chunk):
        with self.res.request() as r:
            yield r
            yield self.sim.timeout(chunk.nbytes * self.spb)


@pytest.mark.parametrize("cut", [True, False])
def test_a_message_pays_the_slowest_stage_once_with_cut_through_and_every_stage_without(cut):
    # three stages of 1, 2 and 1 ns/byte; 8 pieces of 1 KB: the pipeline's fill plus the slow stage's whole
    sim = Simulation()
    stages = [Stage(sim, 1e-9), Stage(sim, 2e-9), Stage(sim, 1e-9)]
    path = m.CutThrough(sim, stages, chunk_bytes=1024, cut_through=cut)
    done = sim.process(path.send(0, 8192))
    sim.run()
    assert done.triggered
    expected = (1024 * 1e-9 + 8192 * 2e-9 + 1024 * 1e-9) if cut else 8192 * (1e-9 + 2e-9 + 1e-9)
    assert sim.now == pytest.approx(expected)


def test_back_to_back_messages_flow_at_the_slowest_stage_rate():
    sim = Simulation()
    stages = [Stage(sim, 1e-9), Stage(sim, 3e-9), Stage(sim, 2e-9)]
    path = m.CutThrough(sim, stages, chunk_bytes=512)
    ends = []

    def one():
        yield sim.process(path.send(0, 4096))
        ends.append(sim.now)

    for _ in range(10):
        sim.process(one())
    sim.run()
    assert ends[-1] - ends[-2] == pytest.approx(4096 * 3e-9)


def test_the_control_message_goes_first_and_only_the_payloads_first_piece_is_set_up():
    pieces = m.CutThrough(Simulation(), [], chunk_bytes=1024).pieces(32, 2500)
    assert [c.nbytes for c in pieces] == [32, 1024, 1024, 452]
    assert [c.head for c in pieces] == [True, False, False, False]
    assert [c.first_payload for c in pieces] == [False, True, False, False]


def pci_s(nbytes, share):
    """Seconds a DMA of ``nbytes`` holds a bus direction run at ``share`` of the PCI rate, by hand: one
    burst after 2 wait states at full rate, 64-byte bursts each 32 cycles at half rate."""
    if share == 1:
        return (3 + 2 + nbytes / 4) / 33e6
    assert share == 0.5
    full, rest = divmod(nbytes, 64)
    return (32 * full + (3 + 13 + rest / 4 if rest else 0)) / 33e6


def nic_time_s(p, control_bytes, payload_bytes, *, chunk=1024):
    """What one message holds a NIC's engine for at full rate, by hand: the firmware's work and the
    control message, the payload's setup and its pieces."""
    pieces = [chunk] * (payload_bytes // chunk) + ([payload_bytes % chunk] if payload_bytes % chunk else [])
    return p.nic_message_us * US + pci_s(control_bytes, 1) + (p.dma_setup_us * US if pieces else 0) \
        + sum(pci_s(c, 1) for c in pieces)


# --- the page RPC --------------------------------------------------------------------------------

def lat(call, p=P):
    return m.rpc(p, call, calls=16)["latency_us"]


@pytest.mark.parametrize("rpc", m.RPC_KINDS)
@pytest.mark.parametrize("size", [4096, 8192])
def test_reply_handling_costs_a_switch_to_wait_and_a_probe_more_to_defer(rpc, size):
    cont = lat(m.Call(rpc, "cont", "Solicited", size))
    wait = lat(m.Call(rpc, "wait", "Solicited", size))
    defer = lat(m.Call(rpc, "defer", "Solicited", size))
    assert wait - cont == pytest.approx(P.switch_us)
    assert defer - wait == pytest.approx(P.defer_us)


@pytest.mark.parametrize("size", [4096, 8192])
def test_payload_handling_trades_the_ipt_for_buffer_recycling_and_a_copy(size):
    s, u, uc = (lat(m.Call("2-way", "wait", h, size)) for h in m.HANDLINGS)
    assert u - s == pytest.approx(P.recycle_us - P.ipt_us)
    assert uc - u == pytest.approx(size / P.copy_MBps)


@pytest.mark.parametrize("size", [0, 4096, 8192])
def test_a_delegated_call_adds_one_request_hop_and_the_directorys_work(size):
    # the hop on its own: a 16-byte request from one Alcor to another, through the same path
    sim = Simulation()
    a, b = m.alcor(sim, P), m.alcor(sim, P)
    sim.process(m.path(sim, P, a, b).send(m.control(P, P.request_bytes), 0))
    sim.run()
    hop_us = sim.now / US
    two = lat(m.Call("2-way", "cont", "Solicited", size))
    three = lat(m.Call("3-way", "cont", "Solicited", size))
    assert three - two == pytest.approx(hop_us + P.server_us)


def test_the_delegating_server_in_the_shared_client_matches_the_shared_delegated_hop():
    def run(kind):
        sim = Simulation()
        first, second = Server(sim, service_s=20e-6), Server(sim, service_s=35e-6)
        wires = [Wire(sim, 5e-6, 100e6) for _ in range(3)]
        if kind == "shared":
            p = sim.process(delegated(sim, first, second, wires[0], wires[1], wires[2], 16, 8192))
            sim.run()
            return p.value
        client = Client(sim, m.DelegatingServer(sim, first, wires[1], second), wires[0], wires[2], window=1,
                        reply="continuation")
        sim.process(client.call(16, 8192))
        sim.run()
        return client.latencies[0]

    # the shared hop forwards the request's bytes; the directory's forward here is a bare control message
    assert run("model") == pytest.approx(run("shared") - 16 / 100e6)


def test_a_blocked_caller_has_one_call_outstanding():
    for h in m.HANDLINGS:
        r = m.rpc(P, m.Call("2-way", "wait", h, 8192), calls=32)
        assert r["MBps"] == pytest.approx(8192 / r["latency_us"])


def test_pipelined_solicited_calls_run_at_the_nics_pace():
    # per call each NIC handles a request and a reply: two messages' firmware work, one payload's DMA
    # setup, the payload at the PCI rate, and the two control messages at their directions' rates
    r = m.rpc(P, m.Call("2-way", "cont", "Solicited", 8192), calls=256)
    ctl = m.control(P, P.request_bytes)
    # the Miata sends its requests at half rate, the Alcor receives them at half rate
    miata = nic_time_s(P, ctl, 8192) + P.nic_message_us * US + pci_s(ctl, 0.5)
    alcor = nic_time_s(P, ctl, 8192) + P.nic_message_us * US + pci_s(ctl, 0.5)
    assert r["calls_per_s"] == pytest.approx(1 / max(miata, alcor), rel=1e-3)


def test_copying_replies_run_at_the_miatas_cpu_pace():
    # stub, interrupt, buffer recycling, continuation and the copy: the Miata's CPU per call
    r = m.rpc(P, m.Call("2-way", "cont", "Unsol+Copy", 4096), calls=256)
    cpu_us = P.stub_us + P.interrupt_us + P.recycle_us + P.handler_us + 4096 / P.copy_MBps
    assert r["calls_per_s"] == pytest.approx(1e6 / cpu_us, rel=1e-3)


def test_without_nonblocking_rpc_continuations_cannot_pipeline():
    p = dataclasses.replace(P, nonblocking=False)
    r = m.rpc(p, m.Call("2-way", "cont", "Solicited", 4096), calls=32)
    assert r["MBps"] == pytest.approx(4096 / r["latency_us"])


def test_relaying_the_reply_through_the_directory_costs_bandwidth():
    relay = dataclasses.replace(P, delegated_reply=False)
    direct = m.rpc(P, m.Call("3-way", "cont", "Solicited", 8192), calls=128)["MBps"]
    relayed = m.rpc(relay, m.Call("3-way", "cont", "Solicited", 8192), calls=128)["MBps"]
    # the directory's Alcor now receives every page, at half the PCI rate
    assert relayed < 8192 / (8192 / (P.alcor_receive_share * P.pci_MBps)) + 1e-9 < direct


# --- raw Trapeze ---------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [4096, 8192])
def test_a_raw_stream_runs_at_one_nic_pass_per_message(size):
    df = m.raw(P, quick=True)
    per = nic_time_s(P, m.control(P, P.reply_control_bytes), size)
    assert df.loc[("Alpha", size), "bandwidth_MBps"] == pytest.approx(size / per / 1e6, rel=1e-3)


def test_an_overwriting_sender_is_held_to_its_store_rate():
    # the send's fixed work at the Alcor's clock, then 8 KB of stores, while the NIC sends the last buffer
    df = m.raw(P, quick=True)
    per_s = P.raw_send_us * US * P.miata_MHz / P.alcor_MHz + 8192 / (P.alcor_store_MBps * 1e6)
    assert df.loc[("Alcor overwrite", 8192), "bandwidth_MBps"] == pytest.approx(8192 / per_s / 1e6, rel=1e-3)


def test_cut_through_shortens_the_one_way_page_latency():
    cut = m.raw(P, quick=True).loc[("Pentium-II", 4096), "one_way_us"]
    saf = m.raw(dataclasses.replace(P, cut_through=False), quick=True).loc[("Pentium-II", 4096), "one_way_us"]
    # store and forward pays the payload on each of the three stages; cut-through about once
    assert saf - cut == pytest.approx(4096 / 160 + 4096 / 132 - 1024 / 160 - 1024 / 132, rel=0.05)


# --- the file benchmark --------------------------------------------------------------------------

def bench(test, interface, touched, p=P):
    return m.FileBenchmark(p, m.FileTest(test, interface, touched), measured_pages=64, warmup_pages=128).run()


def test_sparse_reads_run_at_the_pipelined_getpage_rate():
    rpc_rate = m.rpc(P, m.Call("2-way", "cont", "Solicited", 8192), calls=256)["MBps"]
    for interface in m.INTERFACES:
        assert bench("read", interface, 8)["bandwidth_MBps"] == pytest.approx(rpc_rate, rel=0.01)


def test_dense_reads_run_at_the_cpu_pace_of_a_page():
    # the CPU saturates: a page's getpage work, the interface's work and the user's loads, by hand
    c = m.miata_cpu(P)
    getpage = (m.request_recipe("Solicited", 8192) + m.interrupt_recipe("Solicited", "cont", 8192)).seconds(c) \
        + c.fixed_s["inject"]
    stream = getpage + c.fixed_s["read_call"] + 8192 * (c.per_byte_s["copy"] + c.per_byte_s["load_warm"])
    r = bench("read", "stream", 8192)
    assert r["total_pct"] == pytest.approx(100, abs=0.5)
    assert r["bandwidth_MBps"] == pytest.approx(8192 / stream / 1e6, rel=0.01)


def test_only_interfaces_that_know_of_a_full_overwrite_skip_the_fetch():
    def fetches(interface, touched, p=P):
        b = m.FileBenchmark(p, m.FileTest("write", interface, touched), measured_pages=32, warmup_pages=32)
        b.run()
        return len(b.fetched)

    assert fetches("stream", 8192) == fetches("MMB", 8192) == 0
    assert fetches("mmap", 8192) > 0 and fetches("stream", 4096) > 0
    assert fetches("stream", 8192, dataclasses.replace(P, full_page_detected=False)) > 0


def test_partial_writes_pay_a_synchronous_fetch_per_page_unless_mmb_prefetches():
    stream, mmb = bench("write", "stream", 4096), bench("write", "MMB", 4096)
    no_prefetch = bench("write", "MMB", 4096, dataclasses.replace(P, mmb_prefetch=False))
    assert mmb["bandwidth_MBps"] > 1.3 * max(stream["bandwidth_MBps"], no_prefetch["bandwidth_MBps"])


def test_cpu_shares_add_up_and_the_user_share_grows_with_the_bytes_touched():
    light, heavy = bench("read", "mmap", 1024), bench("read", "mmap", 6144)
    for r in (light, heavy):
        assert r["system_pct"] + r["user_pct"] == pytest.approx(r["total_pct"])
        assert 0 < r["total_pct"] <= 100 + 1e-9
    assert heavy["user_pct"] > 4 * light["user_pct"]


# --- bad input -----------------------------------------------------------------------------------

def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="rpc"):
        m.Call("4-way")
    with pytest.raises(ValueError, match="reply"):
        m.Call(reply="poll")
    with pytest.raises(ValueError, match="interface"):
        m.FileTest("read", "aio", 8)
    with pytest.raises(ValueError, match="mmb_block_bytes"):
        dataclasses.replace(P, mmb_block_bytes=100000)
    with pytest.raises(ValueError, match="alcor_receive_share"):
        dataclasses.replace(P, alcor_receive_share=0.0)
    with pytest.raises(ValueError, match="bridge_line_bytes"):
        dataclasses.replace(P, bridge_line_bytes=66)
    with pytest.raises(ValueError, match="calls"):
        m.Testbed(P, m.Call()).run(1)


# --- the real measurements (skipped where gcc is missing) -----------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
def test_real_file_interfaces_touch_every_page():
    df = m.measure_files(quick=True, touched=(8, 8192))
    if df["note"].str.startswith("not available").any():
        pytest.skip(df["note"].max())
    assert (df["MBps"] > 0).all()
    # read() copies what it is asked for: a whole page takes longer than a word of it
    cpu = df["user_ns_per_byte"] + df["system_ns_per_byte"]
    assert cpu.loc[("stream", 8192)] > cpu.loc[("stream", 8)]
    # whole-file mmap faults pages in as they are touched; the window maps them ahead
    assert df.loc[("mmap", 8), "faults_per_page"] > 0


@needs_gcc
def test_real_loopback_rpc_moves_every_payload():
    df = m.measure_rpc(quick=True, payloads=(0, 8192), windows=(1, 4))
    if df["note"].str.startswith("not available").any():
        pytest.skip(df["note"].max())
    assert (df["calls_per_s"] > 0).all() and (df["cpu_us_per_call"] > 0).all()
    # the rates are per call and per byte of payload: one call outstanding takes a round trip per call
    assert (df["us_per_call"] * df["calls_per_s"]).to_numpy() == pytest.approx(1e6)
    assert df.loc[(8192, 1), "MBps"] == pytest.approx(8192 * df.loc[(8192, 1), "calls_per_s"] / 1e6)
    assert df.loc[(0, 1), "us_per_call"] > 1.0   # two wake-ups and two loopback crossings: microseconds
