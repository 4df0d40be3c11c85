"""Protocol Service Decomposition (Maeda & Bershad, CMU-CS-93-131 / SOSP 1993).

Regenerates Table 2 (TCP throughput, TCP and UDP round trips; DECstation
5000/200 and Gateway 486 rows), Table 3 (the NEWAPI rows) and Table 4 (the
per-layer breakdown, as the model's own accounting of where time goes).

First principles. Each configuration (in-kernel, UX server, library with the
IPC, SHM or SHM-IPF packet filter, NEWAPI) is a path of stages. A stage costs
its fixed time (Table 4's 1-byte column, stated) plus, per payload byte, the
physical operations the paper says it performs: device-memory reads, memory
copies, checksums and device writes. So SHM, SHM-IPF and NEWAPI are derived
by adding, moving or removing copies, not fitted one by one. Wire times come
from the C Ethernet model (0.8 us a byte on the wire at 10 Mbit/s). Round trips
are a ping-pong: twice the one-way sum. Throughput is a discrete-event ttcp
run on the pysim engine: two CPUs, one shared 10 Mbit/s segment, MSS 1460,
the receive window of Table 2, an ACK every second segment, interrupt-level
work per packet and a protocol thread that pays its wakeup only when it was
asleep, so batching under load emerges rather than being assumed.

Calibrated (each on one published cell; see CALIBRATION and pysim.calibration):
the four per-byte constants (on Table 4 kernel/server UDP 1472-byte stages),
the streaming efficiency of CPU costs (Table 2 Library-SHM-IPF throughput),
the Mach IPC receive cost per packet (Table 2 Library-IPC throughput: the
paper blames the IPC on the receiver's critical path for that row) and the
Gateway's 8-bit PIO cost per byte (Table 2 Gateway Mach 2.5 UDP 1472).

Not reproduced: the Ultrix 4.2A, 386BSD and BNR2SS rows (no breakdown of
those systems exists to build a path from), collisions on the Ethernet, and
the TCP ACKs that make the paper's TCP breakdown approximate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.hw.catalog import ETHERNET_10
from pysim.models import Fit, require_positive

SEND = ("entry/copyin", "tcp/udp_output", "ip_output", "ether_output")
RECV = ("device intr/read", "netisr/packet filter", "kernel copyout", "mbuf/queue", "ipintr", "tcp/udp_input",
        "wake up user thread", "copyout/exit")
STAGES = SEND + RECV
INTERRUPT_LEVEL = RECV[:4]  # run per packet in the receive interrupt

# Table 4, the 1-byte columns: fixed cost of each stage in microseconds (stated).
FIXED_US = {
    ("TCP", "library"): (19, 82, 26, 98, 42, 82, 123, 22, 37, 214, 92, 46),
    ("TCP", "kernel"): (50, 65, 24, 75, 77, 79, 0, 0, 30, 76, 54, 32),
    ("TCP", "server"): (254, 224, 31, 166, 101, 53, 113, 79, 127, 249, 194, 222),
    ("UDP", "library"): (6, 18, 17, 105, 39, 58, 107, 20, 35, 103, 73, 21),
    ("UDP", "kernel"): (65, 70, 22, 74, 74, 83, 0, 0, 30, 67, 70, 27),
    ("UDP", "server"): (293, 229, 24, 188, 99, 76, 124, 68, 121, 61, 262, 208),
}

# What each stage does to every payload byte (paper §4.3): the per-byte cost is
# the sum of these physical operations. Server RPCs copy data four times (§4.3).
_COMMON = {"tcp/udp_output": ("checksum",), "tcp/udp_input": ("checksum",)}
PER_BYTE_OPS = {
    "library": {**_COMMON, "entry/copyin": {"TCP": ("memcpy",), "UDP": ()},
                "ether_output": ("memcpy", "device_write"), "kernel copyout": ("device_read",),
                "copyout/exit": ("memcpy",)},
    "kernel": {**_COMMON, "entry/copyin": ("memcpy",), "ether_output": ("device_write",),
               "device intr/read": ("device_read",), "copyout/exit": ("memcpy",)},
    "server": {**_COMMON, "entry/copyin": ("memcpy",) * 4, "ether_output": ("memcpy", "device_write"),
               "device intr/read": ("device_read",), "kernel copyout": ("memcpy",),
               "copyout/exit": ("memcpy",) * 4},
}

HEADERS = {"TCP": 20 + 20, "UDP": 8 + 20}  # transport + IP header bytes
TCP_SIZES = (1, 100, 512, 1024, 1460)
UDP_SIZES = (1, 100, 512, 1024, 1472)


@dataclass(frozen=True)
class System:
    """A configuration of Table 2 or 3: which path, which packet filter, which interface."""

    name: str
    path: str                  # "library", "kernel" or "server"
    packet_filter: str = ""    # library only: "IPC", "SHM" or "SHM-IPF"
    newapi: bool = False
    recv_buffer_kb: int = 24   # Table 2/3 receive buffer (stated)


DECSTATION = (
    System("Mach 2.5 In-Kernel", "kernel", recv_buffer_kb=24),
    System("Mach 3.0+UX Server", "server", recv_buffer_kb=24),
    System("Mach 3.0+UX Library-IPC", "library", "IPC", recv_buffer_kb=24),
    System("Mach 3.0+UX Library-SHM", "library", "SHM", recv_buffer_kb=120),
    System("Mach 3.0+UX Library-SHM-IPF", "library", "SHM-IPF", recv_buffer_kb=120),
)
GATEWAY = (
    System("Mach 2.5 In-Kernel", "kernel", recv_buffer_kb=8),
    System("Mach 3.0+UX Server", "server", recv_buffer_kb=16),
    System("Mach 3.0+UX Library-IPC", "library", "IPC", recv_buffer_kb=24),
    System("Mach 3.0+UX Library-SHM", "library", "SHM", recv_buffer_kb=24),
)
NEWAPI = (
    System("Mach 3.0+UX Library-NEWAPI-IPC", "library", "IPC", True, 24),
    System("Mach 3.0+UX Library-NEWAPI-SHM", "library", "SHM", True, 120),
    System("Mach 3.0+UX Library-NEWAPI-SHM-IPF", "library", "SHM-IPF", True, 120),
)
PLATFORMS = {"DECstation 5000/200": DECSTATION, "Gateway 486": GATEWAY}


@dataclass(frozen=True)
class Params:
    """Inputs of the model. Times in microseconds, per-byte costs in us per byte."""

    device_read_us_per_byte: float = 0.2767   # CALIBRATED: Table 4 kernel UDP device intr/read, 1472 B
    memcpy_us_per_byte: float = 0.05642       # CALIBRATED: Table 4 server UDP kernel copyout, 1472 B
    checksum_us_per_byte: float = 0.1380      # CALIBRATED: Table 4 kernel UDP udp_output, 1472 B
    device_write_us_per_byte: float = 0.06050  # CALIBRATED: Table 4 kernel UDP ether_output, 1472 B
    ipc_receive_us: float = 116.6             # CALIBRATED: Table 2 DECstation Library-IPC throughput
    streaming_efficiency: float = 0.9937      # CALIBRATED: Table 2 DECstation Library-SHM-IPF throughput
    gateway_pio_us_per_byte: float = 1.134    # CALIBRATED: Table 2 Gateway Mach 2.5 UDP RTT, 1472 B
    ttcp_bytes: int = 16 * 1024 * 1024        # stated §4: ttcp moves 16 MB
    ttcp_buffer_bytes: int = 8192             # assumed: ttcp's default read/write length
    mss_bytes: int = 1460                     # stated §4: the largest unfragmented TCP payload
    ack_every: int = 2                        # assumed: BSD delayed ACK, one ACK per two segments

    def __post_init__(self):
        require_positive(self)
        if self.streaming_efficiency > 1:
            raise ValueError(f"streaming_efficiency must be in (0, 1], got {self.streaming_efficiency!r}")
        if self.ack_every < 1 or int(self.ack_every) != self.ack_every:
            raise ValueError(f"ack_every must be an int >= 1, got {self.ack_every!r}")


CALIBRATION = (
    Fit("device_read_us_per_byte", "table4", "device intr/read", "UDP_kernel_1472B", (0.05, 1.0)),
    Fit("memcpy_us_per_byte", "table4", "kernel copyout", "UDP_server_1472B", (0.01, 0.5)),
    Fit("checksum_us_per_byte", "table4", "tcp/udp_output", "UDP_kernel_1472B", (0.01, 0.5)),
    Fit("device_write_us_per_byte", "table4", "ether_output", "UDP_kernel_1472B", (0.01, 0.5)),
    Fit("streaming_efficiency", "table2", "DECstation 5000/200 / Mach 3.0+UX Library-SHM-IPF",
        "tcp_throughput_KB_per_s", (0.3, 1.0)),
    Fit("ipc_receive_us", "table2", "DECstation 5000/200 / Mach 3.0+UX Library-IPC", "tcp_throughput_KB_per_s",
        (1.0, 600.0)),
    Fit("gateway_pio_us_per_byte", "table2", "Gateway 486 / Mach 2.5 In-Kernel", "udp_rtt_ms_1472B", (0.1, 5.0)),
)


# --- the stage model -----------------------------------------------------------

def _per_byte(params: Params, ops, platform: str) -> float:
    costs = {"device_read": params.device_read_us_per_byte, "memcpy": params.memcpy_us_per_byte,
             "checksum": params.checksum_us_per_byte, "device_write": params.device_write_us_per_byte}
    if platform == "Gateway 486":  # the 3C503 moves every byte by 8-bit programmed I/O
        costs["device_read"] = costs["device_write"] = params.gateway_pio_us_per_byte
    return sum(costs[o] for o in ops)


def stage_costs(params: Params, proto: str, system: System, nbytes: int,
                platform: str = "DECstation 5000/200") -> dict:
    """Microseconds per stage for one message of ``nbytes`` one way (send and receive hosts)."""
    if proto not in HEADERS:
        raise ValueError(f"proto must be 'TCP' or 'UDP', got {proto!r}")
    if nbytes < 1:
        raise ValueError(f"nbytes must be >= 1, got {nbytes!r}")
    fixed = dict(zip(STAGES, FIXED_US[(proto, system.path)]))
    ops = {s: PER_BYTE_OPS[system.path].get(s, ()) for s in STAGES}
    ops = {s: (o[proto] if isinstance(o, dict) else o) for s, o in ops.items()}
    extra = {}
    if system.path == "library" and system.packet_filter in ("SHM", "IPC"):
        # no integrated filter: the Mach 3.0 kernel first reads the whole packet out of the
        # device (as it does for the server), then copies it to the library's buffer
        fixed["device intr/read"] = FIXED_US[(proto, "server")][STAGES.index("device intr/read")]
        ops["device intr/read"] = ("device_read",)
        ops["kernel copyout"] = ("memcpy",)
    if system.packet_filter == "IPC":
        extra["ipc message"] = params.ipc_receive_us  # one Mach IPC message per packet
    if system.newapi:  # shared buffers: no copy between the stack and the application
        ops["copyout/exit"] = ()
        if proto == "TCP":
            ops["entry/copyin"] = ()
    costs = {s: fixed[s] + _per_byte(params, ops[s], platform) * (nbytes - 1) for s in STAGES}
    costs.update(extra)
    return costs


def wire_us(proto: str, nbytes: int) -> float:
    """Frame time on 10 Mbit/s Ethernet (no preamble or gap, as the paper counts transit)."""
    return ETHERNET_10.frame_time_s(min(nbytes + HEADERS[proto], ETHERNET_10.max_payload)) * 1e6


def one_way_us(params: Params, proto: str, system: System, nbytes: int, platform="DECstation 5000/200") -> dict:
    """Send path, receive path, transit and total, microseconds."""
    c = stage_costs(params, proto, system, nbytes, platform)
    send = sum(c[s] for s in SEND)
    recv = sum(v for s, v in c.items() if s not in SEND)
    transit = wire_us(proto, nbytes)
    return {"send": send, "receive": recv, "transit": transit, "total": send + recv + transit}


def rtt_ms(params: Params, proto: str, system: System, nbytes: int, platform="DECstation 5000/200") -> float:
    """protolat round trip: the message goes and the same-size reply comes back."""
    return 2 * one_way_us(params, proto, system, nbytes, platform)["total"] / 1000


# --- ttcp ------------------------------------------------------------------------

def ttcp_throughput(params: Params, system: System, platform="DECstation 5000/200", *, quick=False) -> float:
    """KB/s (KB = 1024 bytes, as ttcp prints) of a discrete-event ttcp run."""
    p, eff = params, params.streaming_efficiency
    mss = p.mss_bytes
    total = (1024 * 1024 if quick else p.ttcp_bytes) // mss * mss
    segs = total // mss
    window = system.recv_buffer_kb * 1024
    data = stage_costs(p, "TCP", system, mss, platform)
    # the fixed part of a read() or write() is paid once per ttcp buffer, its copies per byte
    per_call = mss / p.ttcp_buffer_bytes
    fixed = stage_costs(p, "TCP", system, 1, platform)

    def amortised(stage):
        return fixed[stage] * per_call + (data[stage] - fixed[stage])

    us = 1e-6 * eff
    send_cost = us * (amortised("entry/copyin") + sum(data[s] for s in SEND[1:]))
    irq_cost = us * sum(data[s] for s in INTERRUPT_LEVEL)
    proto_cost = us * (data["ipintr"] + data["tcp/udp_input"] + data.get("ipc message", 0)
                       + amortised("copyout/exit"))
    wakeup_cost = us * data["wake up user thread"]
    ack_send_cost = us * sum(fixed[s] for s in SEND[1:])  # a bare ACK, made inside the stack: no entry
    ack_recv_cost = us * (sum(fixed[s] for s in INTERRUPT_LEVEL) + fixed["ipintr"] + fixed["tcp/udp_input"]
                          + fixed.get("ipc message", 0))
    data_bytes = mss + HEADERS["TCP"]
    ack_bytes = HEADERS["TCP"]

    sim = Simulation()
    link = sim.link(ETHERNET_10)
    cpu_s, cpu_r = sim.resource(1), sim.resource(1)
    state = {"in_flight": 0, "received": 0, "acked_segments": 0, "queue": 0, "thread_awake": False,
             "window_open": None, "done": sim.event()}

    def hold(cpu, seconds):
        req = cpu.request()
        yield req
        yield sim.timeout(seconds)
        cpu.release(req)

    def sender():
        for _ in range(segs):
            while state["in_flight"] + mss > window:
                state["window_open"] = sim.event()
                yield state["window_open"]
            yield from hold(cpu_s, send_cost)
            state["in_flight"] += mss
            sim.process(arrive(link.send(data_bytes)))

    def arrive(frame):
        yield frame
        yield from hold(cpu_r, irq_cost)
        state["queue"] += 1
        if not state["thread_awake"]:
            state["thread_awake"] = True
            sim.process(protocol_thread())

    def protocol_thread():
        yield from hold(cpu_r, wakeup_cost)  # woken from sleep: paid once per batch
        while state["queue"]:
            state["queue"] -= 1
            yield from hold(cpu_r, proto_cost)
            state["received"] += 1
            if state["received"] % p.ack_every == 0 or state["received"] == segs:
                n = p.ack_every if state["received"] % p.ack_every == 0 else state["received"] % p.ack_every
                yield from hold(cpu_r, ack_send_cost)
                sim.process(ack_arrives(link.send(ack_bytes), n))
        state["thread_awake"] = False

    def ack_arrives(frame, n):
        yield frame
        yield from hold(cpu_s, ack_recv_cost)
        state["in_flight"] -= n * mss
        state["acked_segments"] += n
        if state["window_open"] is not None and not state["window_open"].triggered:
            state["window_open"].succeed()
        if state["acked_segments"] == segs:
            state["done"].succeed()

    sim.process(sender())
    sim.run(until=state["done"])
    return total / sim.now / 1024


# --- the artifacts ---------------------------------------------------------------------

def _latency_row(params, system, platform):
    row = {f"tcp_rtt_ms_{n}B": rtt_ms(params, "TCP", system, n, platform) for n in TCP_SIZES}
    row.update({f"udp_rtt_ms_{n}B": rtt_ms(params, "UDP", system, n, platform) for n in UDP_SIZES})
    return row


def _table(params, rows, quick):
    out = []
    for platform, system in rows:
        out.append({"platform": platform, "system": system.name,
                    "tcp_throughput_KB_per_s": ttcp_throughput(params, system, platform, quick=quick),
                    "recv_buffer_KB": system.recv_buffer_kb, **_latency_row(params, system, platform)})
    return pd.DataFrame(out).set_index(["platform", "system"])


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: TCP throughput (KB/s), receive buffer (KB), TCP and UDP round trips (ms) by message size.

    Deterministic: ``rng`` is accepted for the common signature and not used.
    """
    params = params or Params()
    return _table(params, [(pf, s) for pf, systems in PLATFORMS.items() for s in systems], quick)


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: the library with the NEWAPI socket interface (DECstation), same columns as Table 2."""
    params = params or Params()
    return _table(params, [("DECstation 5000/200", s) for s in NEWAPI], quick)


def table4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 4: microseconds per stage, one way, by protocol, stack and message size (DECstation)."""
    params = params or Params()
    systems = {"lib": System("library", "library", "SHM-IPF"), "kernel": System("kernel", "kernel"),
               "server": System("server", "server")}
    cols = {}
    for proto, big in (("TCP", 1460), ("UDP", 1472)):
        for short, system in systems.items():
            for n in (1, big):
                c = stage_costs(params, proto, system, n)
                w = one_way_us(params, proto, system, n)
                col = {s: c[s] for s in STAGES}
                col.update({"Send Path Total": w["send"], "Receive Path Total": w["receive"],
                            "Network Transit Time": w["transit"], "Total": w["total"]})
                cols[f"{proto}_{short}_{n}B"] = col
    order = list(SEND) + ["Send Path Total"] + list(RECV) + ["Receive Path Total", "Network Transit Time", "Total"]
    df = pd.DataFrame(cols).loc[order]
    df.index.name = "component"
    return df


def boundary_crossings(system: System, proto: str) -> int:
    """Protection-boundary crossings on a one-way path (Table 4's asterisks, §4.3)."""
    marks = {"kernel": ("entry/copyin", "copyout/exit"),
             "server": ("entry/copyin", "ether_output", "kernel copyout", "copyout/exit"),
             "library": ("ether_output", "kernel copyout")}[system.path]
    return len(marks) + (1 if system.packet_filter == "IPC" else 0)


def crossings_table() -> pd.DataFrame:
    """Crossings per one-way message for each DECstation system (for the notebook's discussion)."""
    rows = [{"system": s.name, "crossings": boundary_crossings(s, "UDP")} for s in DECSTATION + NEWAPI]
    return pd.DataFrame(rows).set_index("system")


def rtt_curve(params: Params | None = None, systems=DECSTATION, proto="UDP", sizes=None) -> pd.DataFrame:
    """Round trip (ms) against message size for plotting: one column per system."""
    params = params or Params()
    sizes = np.arange(1, 1473, 16) if sizes is None else np.asarray(sizes)
    return pd.DataFrame({s.name: [rtt_ms(params, proto, s, int(n)) for n in sizes] for s in systems},
                        index=pd.Index(sizes, name="message_bytes"))
