"""Mechanism checks of the protocol-path model (sosp93_maeda): hand calculations, closed forms and SimPy."""
import dataclasses

import numpy as np
import pytest
import simpy

from pysim import ledger, params as P_
from pysim.hw.catalog import ETHERNET_10
from pysim.models import input_cells
from pysim.models import sosp93_maeda as m

P = m.Params()
KERNEL, ULTRIX, SERVER, IPC, SHM, LIB = m.DECSTATION
GATEWAY = "Gateway 486"


# --- the stage model: hand calculations ------------------------------------------------

def test_wire_time_is_exact_ethernet_arithmetic():
    assert m.wire_us("TCP", 1460) == pytest.approx(1214.4)  # 1518-byte frame at 0.8 us/byte
    assert m.wire_us("UDP", 1) == pytest.approx(51.2)       # padded to the 64-byte minimum


def test_server_rpc_copies_the_data_four_times_the_kernel_once():
    n = 1001
    slope = {s.path: (m.stage_costs(P, "UDP", s, n)["entry/copyin"] - m.stage_costs(P, "UDP", s, 1)["entry/copyin"])
             / (n - 1) for s in (KERNEL, SERVER)}
    assert slope["kernel"] == pytest.approx(P.memcpy_us_per_byte)
    assert slope["server"] == pytest.approx(4 * P.memcpy_us_per_byte)


def test_integrated_filter_saves_the_kernel_read_fixed_cost_and_one_copy():
    n = 1472
    gap = m.one_way_us(P, "UDP", SHM, n)["total"] - m.one_way_us(P, "UDP", LIB, n)["total"]
    fixed_gap = P.fixed_us("UDP", "server")["device intr/read"] - P.fixed_us("UDP", "library")["device intr/read"]
    # SHM reads the device in the interrupt and copies to the library; SHM-IPF reads the device once
    assert gap == pytest.approx(fixed_gap + (n - 1) * P.memcpy_us_per_byte)


def test_newapi_drops_only_the_socket_copy():
    n = 1472
    old = m.rtt_ms(P, "UDP", LIB, n)
    new = m.rtt_ms(P, "UDP", m.NEWAPI[-1], n)
    assert old - new == pytest.approx(2 * (n - 1) * P.memcpy_us_per_byte / 1000)


def test_a_one_byte_round_trip_is_twice_table4s_one_byte_total():
    for proto, path, costs in P.table4_one_byte_us:
        system = {"library": LIB, "kernel": KERNEL, "server": SERVER}[path]
        assert m.rtt_ms(P, proto, system, 1) == pytest.approx(2 * (sum(costs) + 51.2) / 1000)


# --- ttcp: closed forms and a SimPy peer ------------------------------------------------

def costs_of(**kw):
    base = {"send_s": 1e-4, "irq_s": 2e-4, "deliver_s": 0.0, "deliver_each": False, "collect_s": 0.0,
            "proto_s": 3e-4, "wakeup_s": 5e-5, "ack_send_s": 4e-5, "ack_recv_s": 6e-5}
    return m.TtcpCosts(**{**base, **kw})


def run_ttcp(costs, *, segments=400, window_segments=64, ack_every=2, mss=1460, **kw):
    return m.Ttcp(costs, segments=segments, mss=mss, window=window_segments * mss, ack_every=ack_every, **kw).run()


def test_free_cpus_leave_ttcp_bound_by_the_wire():
    free = costs_of(send_s=1e-9, irq_s=1e-9, proto_s=1e-9, wakeup_s=1e-9, ack_send_s=1e-9, ack_recv_s=1e-9)
    per_segment = ETHERNET_10.message_occupancy_s(1460 + 40) + ETHERNET_10.message_occupancy_s(40) / 2
    assert run_ttcp(free, segments=2000) == pytest.approx(2000 * per_segment, rel=0.002)


def test_stop_and_wait_takes_the_sum_of_every_step_per_segment():
    c = costs_of(deliver_s=7e-5)
    gap = 8 * ETHERNET_10.gap_bytes / ETHERNET_10.bits_per_s
    data = ETHERNET_10.message_occupancy_s(1500) - gap
    ack = ETHERNET_10.message_occupancy_s(40) - gap
    per_segment = (c.send_s + data + c.irq_s + c.wakeup_s + c.deliver_s + c.proto_s + c.ack_send_s + ack
                   + c.ack_recv_s)
    assert run_ttcp(c, segments=50, window_segments=1, ack_every=1) == pytest.approx(50 * per_segment)


@pytest.mark.parametrize("each", [False, True], ids=["shared memory", "ipc"])
def test_a_busy_receiver_pays_a_delivery_per_wakeup_with_shared_memory_and_per_packet_with_ipc(each):
    c = costs_of(irq_s=8e-4, proto_s=9e-4, wakeup_s=1e-3, deliver_s=1.5e-4, deliver_each=each, collect_s=3e-5,
                 ack_send_s=2e-4)
    n = 2000
    per_segment = c.irq_s + c.proto_s + c.ack_send_s / 2  # the backlog never lets the thread sleep
    if each:
        per_segment += c.deliver_s + c.collect_s          # a message, and a trap to collect it, per packet
    assert run_ttcp(c, segments=n) == pytest.approx(n * per_segment, rel=0.005)


def test_ipc_and_shared_memory_cost_the_same_for_a_lone_packet():
    # stop and wait: every batch is one packet, so a delivery per packet is a delivery per wakeup
    shm = costs_of(deliver_s=1.5e-4, collect_s=3e-5)
    ipc = costs_of(deliver_s=1.5e-4, collect_s=3e-5, deliver_each=True)
    assert run_ttcp(ipc, segments=50, window_segments=1, ack_every=1) == pytest.approx(
        run_ttcp(shm, segments=50, window_segments=1, ack_every=1))


def simpy_ttcp(c, *, segments, mss, window, ack_every):
    """The same ttcp written directly in SimPy, with the FIFO medium's timing done by hand."""
    env = simpy.Environment()
    cpu_s, cpu_r = simpy.Resource(env, 1), simpy.Resource(env, 1)
    gap = 8 * ETHERNET_10.gap_bytes / ETHERNET_10.bits_per_s
    st = {"free": 0.0, "sent": 0, "queued": 0, "awake": False, "received": 0, "acked": 0, "open": None}
    done = env.event()

    def hold(cpu, t):
        with cpu.request() as req:
            yield req
            yield env.timeout(t)

    def wire(nbytes):
        start = max(st["free"], env.now)
        st["free"] = start + ETHERNET_10.message_occupancy_s(nbytes)
        return env.timeout(st["free"] - gap - env.now)

    def sender():
        for _ in range(segments):
            while (st["sent"] - st["acked"] + 1) * mss > window:
                st["open"] = env.event()
                yield st["open"]
            yield from hold(cpu_s, c.send_s)
            st["sent"] += 1
            env.process(arrive(wire(mss + 40)))

    def arrive(frame):
        yield frame
        yield from hold(cpu_r, c.irq_s)
        st["queued"] += 1
        if not st["awake"]:
            st["awake"] = True
            env.process(thread())

    def thread():
        if c.deliver_s and not c.deliver_each:
            yield from hold(cpu_r, c.deliver_s)
        yield from hold(cpu_r, c.wakeup_s)
        first = True
        while st["queued"]:
            st["queued"] -= 1
            if c.deliver_s and c.deliver_each:
                yield from hold(cpu_r, c.deliver_s + (0 if first else c.collect_s))
            first = False
            yield from hold(cpu_r, c.proto_s)
            st["received"] += 1
            if st["received"] % ack_every == 0 or st["received"] == segments:
                yield from hold(cpu_r, c.ack_send_s)
                env.process(ack(wire(40), st["received"]))
        st["awake"] = False

    def ack(frame, upto):
        yield frame
        yield from hold(cpu_s, c.ack_recv_s)
        st["acked"] = max(st["acked"], upto)
        if st["open"] is not None and not st["open"].triggered:
            st["open"].succeed()
        if st["acked"] == segments:
            done.succeed()

    env.process(sender())
    env.run(until=done)
    return env.now


@pytest.mark.parametrize("system", [KERNEL, SERVER, IPC, SHM, LIB], ids=lambda s: s.name)
def test_ttcp_agrees_with_a_simpy_peer(system):
    costs = m.TtcpCosts.of(P, system, "DECstation 5000/200")
    kw = {"segments": 300, "mss": 1460, "window": P.window_bytes("DECstation 5000/200", system), "ack_every": 2}
    assert m.Ttcp(costs, **kw).run() == pytest.approx(simpy_ttcp(costs, **kw), rel=1e-6)


# --- the CSMA/CD segment ---------------------------------------------------------------------

def segment(rng=0):
    from pysim.engine import Simulation

    sim = Simulation()
    return sim, m.CsmaCdSegment(sim, ETHERNET_10, np.random.default_rng(rng), jam_bytes=4, backoff_limit=10,
                                attempt_limit=16)


def test_one_station_alone_sends_back_to_back_like_the_fifo_medium():
    sim, seg = segment()
    arrivals = []
    for _ in range(5):
        seg.send("sender", 1500).callbacks.append(lambda e: arrivals.append(sim.now))
    sim.run()
    gap = 8 * ETHERNET_10.gap_bytes / ETHERNET_10.bits_per_s
    occupancy = ETHERNET_10.message_occupancy_s(1500)
    assert arrivals == pytest.approx([(i + 1) * occupancy - gap for i in range(5)])
    assert seg.collisions == 0


def test_two_frames_ready_together_collide_as_binary_exponential_backoff_says():
    # after the n-th collision both draw from 2**n slots and collide again with probability 2**-n,
    # so one collision is followed by success with probability 1/2, two with 3/8, three with 7/64
    counts = np.zeros(4)
    trials = 3000
    for seed in range(trials):
        sim, seg = segment(seed)
        seg.send("sender", 1500)
        seg.send("receiver", 40)
        sim.run()
        counts[min(seg.collisions, 4) - 1] += 1
    expected = np.array([1 / 2, 3 / 8, 7 / 64, 1 - 1 / 2 - 3 / 8 - 7 / 64])
    sigma = np.sqrt(expected * (1 - expected) / trials)
    assert np.all(np.abs(counts / trials - expected) < 4 * sigma)


def test_acks_lose_to_back_to_back_data_frames():
    # the capture effect: ttcp over CSMA/CD falls well below the same run on a collision-free medium
    costs = m.TtcpCosts.of(P, KERNEL, "DECstation 5000/200")
    kw = {"segments": 1500, "window_segments": 16}
    fifo = run_ttcp(costs, **kw)
    csma = run_ttcp(costs, **kw, backoff=m.Backoff(4, 10, 16), rng=1)
    assert csma > 1.1 * fifo


def test_a_larger_window_never_lowers_throughput():
    small = dataclasses.replace(P, recv_buffer_kb=tuple((pf, s, 4 if s == KERNEL.name else kb)
                                                        for pf, s, kb in P.recv_buffer_kb))
    assert m.ttcp_throughput(small, KERNEL, quick=True) <= m.ttcp_throughput(P, KERNEL, quick=True)


# --- the switches behind the counterfactuals ----------------------------------------------

def latencies(table, platform, system):
    return table.loc[(platform, system)].filter(like="rtt")


def test_without_decomposition_every_library_row_is_the_server():
    t = m.table2(dataclasses.replace(P, decomposed=False), quick=True)
    for system in (IPC, SHM, LIB):
        assert latencies(t, "DECstation 5000/200", system.name).equals(
            latencies(t, "DECstation 5000/200", SERVER.name))


def test_switching_a_mechanism_off_turns_a_row_into_its_predecessor():
    cases = [("ipc_per_packet", IPC, SHM), ("integrated_filter", LIB, SHM)]
    for field, system, predecessor in cases:
        t = m.table2(dataclasses.replace(P, **{field: False}), quick=True)
        assert latencies(t, "DECstation 5000/200", system.name).equals(
            latencies(t, "DECstation 5000/200", predecessor.name)), field
    t2 = m.table2(quick=True)
    t3 = m.table3(dataclasses.replace(P, shared_buffers=False), quick=True)
    for new, old in zip(m.NEWAPI, (IPC, SHM, LIB)):
        assert latencies(t3, "DECstation 5000/200", new.name).equals(latencies(t2, "DECstation 5000/200", old.name))


def test_a_wide_gateway_card_gives_the_gateway_the_decstations_round_trips():
    t = m.table2(dataclasses.replace(P, gateway_8bit_card=False), quick=True)
    for system in (KERNEL, SERVER, IPC, SHM):
        assert latencies(t, GATEWAY, system.name).equals(latencies(t, "DECstation 5000/200", system.name))


# --- inputs: exactly the cells no fitted or assumed value moves -----------------------------

def test_the_declared_inputs_are_the_cells_that_no_fitted_or_assumed_value_moves():
    kinds = P_.provenance(m.Params)
    moved = {}
    for name, (kind, _) in kinds.items():
        value = getattr(P, name)
        if kind in ("calibrated", "assumed") and isinstance(value, (int, float)) and not isinstance(value, bool):
            moved[name] = value + 1 if isinstance(value, int) else value * 0.8
    frames = {a: getattr(m, a)(quick=True) for a in ("table2", "table3", "table4")}
    nudged = {a: getattr(m, a)(dataclasses.replace(P, **moved), quick=True) for a in frames}
    paper = ledger.load("sosp93_maeda")
    still = {c.key for c in paper.cells if c.source != "doubtful"
             and ledger.lookup(frames[c.artifact], c.row, c.column)
             == ledger.lookup(nudged[c.artifact], c.row, c.column)}
    declared = {c for c in input_cells(m) if paper.cell(*c).source != "doubtful"}
    assert still == declared


# --- bad input -------------------------------------------------------------------------------

def test_bad_message_sizes_are_rejected():
    with pytest.raises(ValueError, match="nbytes"):
        m.stage_costs(P, "UDP", LIB, 0)
    with pytest.raises(ValueError, match="proto"):
        m.stage_costs(P, "ICMP", LIB, 10)


def test_a_table4_input_of_the_wrong_shape_is_rejected_by_name():
    short = tuple((p, s, c[:-1]) for p, s, c in P.table4_one_byte_us)
    with pytest.raises(ValueError, match="table4_one_byte_us"):
        dataclasses.replace(P, table4_one_byte_us=short)
