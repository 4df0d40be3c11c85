"""Protocol Service Decomposition (Maeda & Bershad, CMU-CS-93-131 / SOSP 1993).

Regenerates Table 2 (TCP throughput, receive buffer, TCP and UDP round trips;
every DECstation 5000/200 and Gateway 486 row), Table 3 (the NEWAPI rows and
the two in-kernel rows it reprints) and Table 4 (the per-layer breakdown, as
the model's own accounting of where time goes).

First principles. Each configuration (in-kernel, UX server, library with the
IPC, SHM or SHM-IPF packet filter, NEWAPI) is a path of stages. A stage costs
its fixed time (Table 4's 1-byte column, an input) plus, per payload byte, the
physical operations the paper says it performs: device-memory reads, memory
copies, checksums and device writes. Each stage is a :class:`pysim.sw.Recipe`
priced on a :class:`pysim.hw.CpuCostModel`, so SHM, SHM-IPF and NEWAPI are
derived by adding, moving or removing copies, not fitted one by one. Library-
IPC receives each packet in a Mach IPC message, priced as the UX server's
delivery (Table 4's starred kernel copyout of the server, which receives through
the same packet filter); NEWAPI's TCP send references the shared buffer as the
library's UDP send does (§4.3). Ultrix 4.2A, 386BSD and BNR2SS, which Table 4
does not break down, get the path of the stack §4 says they run (4.3BSD in the
kernel, BNR2 in the kernel, BNR2 in a single server). Wire times come from the
C Ethernet model (0.8 us a byte at 10 Mbit/s). Round trips are a ping-pong:
twice the one-way sum.

Throughput is a discrete-event ttcp run on the pysim engine (:class:`Ttcp`):
two CPUs, one shared 10 Mbit/s segment, MSS 1460, the receive window of Table
2, a cumulative ACK every second segment. At the receiver each packet pays its
kernel work at once; a protocol thread, woken only when it was asleep, pays
one delivery into the library per wakeup with shared memory (§4.1: "multiple
packets with a single wakeup") and one per packet with IPC, plus, for each
queued IPC message it collects while awake, a trap (the library's ether_output
less the kernel's, §4.3). So batching under load, and what it saves SHM over
IPC, emerge rather than being assumed. The segment is a FIFO medium by
default; :class:`CsmaCdSegment` (IEEE 802.3 CSMA/CD with binary exponential
backoff) is the "capture-effect" counterfactual: with back-to-back data frames
the receiver's ACKs lose every contention and ttcp falls far below the
near-saturation the paper reports, so the hosts cannot have sent that way.

Calibrated (each on one published cell; see CALIBRATION and pysim.calibration):
the four per-byte constants (on Table 4 kernel/server UDP 1472-byte stages)
and the Gateway's 8-bit PIO cost per byte (Table 2 Gateway Mach 2.5 UDP
1472). Every throughput is a prediction.

Inputs (see INPUTS): Table 4's 1-byte stage costs and Table 2's receive
buffers; every cell that is arithmetic on them alone (the 1-byte columns'
totals, full-size stages with no per-byte work, transit times, 1-byte round
trips) is counted as an input too. Mechanism switches (decomposed,
ipc_per_packet, integrated_filter, shared_buffers, gateway_8bit_card, medium)
are the COUNTERFACTUALS the paper's claims are tested against.

Not reproduced: about 100 us per packet that Library-IPC loses under load
beyond its delivery and trap (so SHM gains less over IPC than the paper's
18%); the 5% by which the wire-bound rows fall short of the segment's
capacity; the extra acknowledgement segments that make the paper's TCP
breakdown approximate; the Gateway's own per-message costs; and whatever
makes Ultrix, 386BSD and BNR2SS differ from the stacks whose paths they
borrow.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.hw import CpuCostModel, catalog
from pysim.hw.catalog import ETHERNET_10
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.rng import make_rng, spawn
from pysim.sw import CpuAccount, Recipe, syscalls
from pysim.units import MiB

DECSTATION_5000 = catalog.get("DECstation 5000/200")

SEND = ("entry/copyin", "tcp/udp_output", "ip_output", "ether_output")
RECV = ("device intr/read", "netisr/packet filter", "kernel copyout", "mbuf/queue", "ipintr", "tcp/udp_input",
        "wake up user thread", "copyout/exit")
STAGES = SEND + RECV
INTERRUPT_LEVEL = RECV[:4]  # run per packet in the receive interrupt
PATHS = ("library", "kernel", "server")

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


DECSTATION = (
    System("Mach 2.5 In-Kernel", "kernel"),
    System("Ultrix 4.2A In-Kernel", "kernel"),          # §4: the same 4.3BSD code, in the kernel
    System("Mach 3.0+UX Server", "server"),
    System("Mach 3.0+UX Library-IPC", "library", "IPC"),
    System("Mach 3.0+UX Library-SHM", "library", "SHM"),
    System("Mach 3.0+UX Library-SHM-IPF", "library", "SHM-IPF"),
)
GATEWAY = (
    System("Mach 2.5 In-Kernel", "kernel"),
    System("386BSD In-Kernel", "kernel"),               # §4: BNR2 code, in the kernel
    System("Mach 3.0+UX Server", "server"),
    System("Mach 3.0+BNR2SS Server", "server"),         # §4: BNR2 code, in a single server
    System("Mach 3.0+UX Library-IPC", "library", "IPC"),
    System("Mach 3.0+UX Library-SHM", "library", "SHM"),
)
NEWAPI = (
    System("Mach 3.0+UX Library-NEWAPI-IPC", "library", "IPC", True),
    System("Mach 3.0+UX Library-NEWAPI-SHM", "library", "SHM", True),
    System("Mach 3.0+UX Library-NEWAPI-SHM-IPF", "library", "SHM-IPF", True),
)
TABLE3 = DECSTATION[:2] + NEWAPI  # Table 3 reprints the two in-kernel rows of Table 2
PLATFORMS = {"DECstation 5000/200": DECSTATION, "Gateway 486": GATEWAY}
# Table 4's three stacks (the library with the SHM-IPF filter) and its message sizes
TABLE4_SYSTEMS = {"lib": System("library", "library", "SHM-IPF"), "kernel": System("kernel", "kernel"),
                  "server": System("server", "server")}
TABLE4_SIZES = {"TCP": (1, 1460), "UDP": (1, 1472)}
TOTALS = ("Send Path Total", "Receive Path Total", "Network Transit Time", "Total")
TABLE4_ROWS = SEND + TOTALS[:1] + RECV + TOTALS[1:]


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs of the model. Times in microseconds, per-byte costs in us per byte."""

    device_read_us_per_byte: float = calibrated(0.2767, gt=0, le=5.0)
    memcpy_us_per_byte: float = calibrated(0.05642, gt=0, le=5.0)
    checksum_us_per_byte: float = calibrated(0.1380, gt=0, le=5.0)
    device_write_us_per_byte: float = calibrated(0.06050, gt=0, le=5.0)
    gateway_pio_us_per_byte: float = calibrated(1.134, gt=0, le=50.0)
    ttcp_bytes: int = stated(16 * MiB, "§4: ttcp transfers 16 MB", ge=1460)
    ttcp_buffer_bytes: int = assumed(8192, "ttcp's default read and write length", ge=1)
    mss_bytes: int = stated(1460, "§4 and Table 4: 1460 bytes, the largest unfragmented TCP payload", ge=1, le=1460)
    ack_every: int = assumed(2, "BSD acknowledges every second full-sized segment", ge=1, le=64)
    decomposed: bool = stated(True, "§3.1: the library runs send and receive in the application "
                                    "(False: the protocols stay in the UX server, the baseline)")
    ipc_per_packet: bool = stated(True, "§4.1: Library-IPC's packet filter sends each packet in a Mach IPC "
                                        "message of its own")
    integrated_filter: bool = stated(True, "§4.1: SHM-IPF's packet filter copies a packet straight from the "
                                           "device into the application")
    shared_buffers: bool = stated(True, "§4.2: NEWAPI shares buffers between the protocol and the application")
    gateway_8bit_card: bool = stated(True, "Table 2 caption: the Gateway's 3C503 moves data 8 bits at a time")
    medium: str = assumed("fifo", "the hosts' drivers leave the wire to the receiver's ACK between data frames, as a "
                                  "FIFO medium does: with IEEE 802.3 CSMA/CD and back-to-back data frames the ACKs "
                                  "lose to the data (the capture effect) and ttcp falls far below the near-saturation "
                                  "§4 reports", choices=("fifo", "csma/cd"))
    jam_bytes: int = assumed(4, "IEEE 802.3: a station that detects a collision sends a 32-bit jam", ge=0, le=64)
    backoff_limit: int = assumed(10, "IEEE 802.3: the backoff range stops doubling after 10 collisions", ge=1,
                                 le=16)
    attempt_limit: int = assumed(16, "IEEE 802.3: a frame is given up after 16 attempts", ge=1, le=64)
    table4_one_byte_us: tuple = given((
        ("TCP", "library", (19, 82, 26, 98, 42, 82, 123, 22, 37, 214, 92, 46)),
        ("TCP", "kernel", (50, 65, 24, 75, 77, 79, 0, 0, 30, 76, 54, 32)),
        ("TCP", "server", (254, 224, 31, 166, 101, 53, 113, 79, 127, 249, 194, 222)),
        ("UDP", "library", (6, 18, 17, 105, 39, 58, 107, 20, 35, 103, 73, 21)),
        ("UDP", "kernel", (65, 70, 22, 74, 74, 83, 0, 0, 30, 67, 70, 27)),
        ("UDP", "server", (293, 229, 24, 188, 99, 76, 124, 68, 121, 61, 262, 208)),
    ), "Table 4, the 1-byte columns: each stage's time (us) for a 1-byte message, in the table's row order")
    recv_buffer_kb: tuple = given((
        ("DECstation 5000/200", "Mach 2.5 In-Kernel", 24),
        ("DECstation 5000/200", "Ultrix 4.2A In-Kernel", 16),
        ("DECstation 5000/200", "Mach 3.0+UX Server", 24),
        ("DECstation 5000/200", "Mach 3.0+UX Library-IPC", 24),
        ("DECstation 5000/200", "Mach 3.0+UX Library-SHM", 120),
        ("DECstation 5000/200", "Mach 3.0+UX Library-SHM-IPF", 120),
        ("DECstation 5000/200", "Mach 3.0+UX Library-NEWAPI-IPC", 24),
        ("DECstation 5000/200", "Mach 3.0+UX Library-NEWAPI-SHM", 120),
        ("DECstation 5000/200", "Mach 3.0+UX Library-NEWAPI-SHM-IPF", 120),
        ("Gateway 486", "Mach 2.5 In-Kernel", 8),
        ("Gateway 486", "386BSD In-Kernel", 8),
        ("Gateway 486", "Mach 3.0+UX Server", 16),
        ("Gateway 486", "Mach 3.0+BNR2SS Server", 12),
        ("Gateway 486", "Mach 3.0+UX Library-IPC", 24),
        ("Gateway 486", "Mach 3.0+UX Library-SHM", 24),
    ), "Tables 2 and 3, the receive buffer column (KB): the best buffer the paper found for each system")

    def __post_init__(self):
        super().__post_init__()
        _check_table4(self.table4_one_byte_us)
        for entry in self.recv_buffer_kb:
            if len(entry) != 3 or not (isinstance(entry[2], int) and entry[2] >= 1):
                raise ValueError(f"recv_buffer_kb entries must be (platform, system, KB >= 1), got {entry!r}")

    def fixed_us(self, proto: str, path: str) -> dict:
        """Table 4's 1-byte cost of every stage (us) of one protocol and path."""
        for p, s, costs in self.table4_one_byte_us:
            if (p, s) == (proto, path):
                return dict(zip(STAGES, costs))
        raise ValueError(f"table4_one_byte_us has no column for ({proto!r}, {path!r})")

    def window_bytes(self, platform: str, system: System) -> int:
        """The receive window of a configuration: its Table 2/3 receive buffer."""
        for pf, name, kb in self.recv_buffer_kb:
            if (pf, name) == (platform, system.name):
                return kb * 1024
        raise ValueError(f"recv_buffer_kb has no entry for ({platform!r}, {system.name!r})")


def _check_table4(table) -> None:
    columns = {(p, s) for p, s, _ in table}
    wanted = {(p, s) for p in HEADERS for s in PATHS}
    if columns != wanted or len(table) != len(wanted):
        raise ValueError(f"table4_one_byte_us must hold one column for each of {sorted(wanted)}")
    for p, s, costs in table:
        if len(costs) != len(STAGES) or not all(c >= 0 for c in costs):
            raise ValueError(f"table4_one_byte_us[{p}, {s}] must hold {len(STAGES)} costs >= 0 us, got {costs!r}")


CALIBRATION = (
    Fit("device_read_us_per_byte", "table4", "device intr/read", "UDP_kernel_1472B", (0.05, 1.0)),
    Fit("memcpy_us_per_byte", "table4", "kernel copyout", "UDP_server_1472B", (0.01, 0.5)),
    Fit("checksum_us_per_byte", "table4", "tcp/udp_output", "UDP_kernel_1472B", (0.01, 0.5)),
    Fit("device_write_us_per_byte", "table4", "ether_output", "UDP_kernel_1472B", (0.01, 0.5)),
    Fit("gateway_pio_us_per_byte", "table2", "Gateway 486 / Mach 2.5 In-Kernel", "udp_rtt_ms_1472B", (0.1, 5.0)),
)

COUNTERFACTUALS = (
    Counterfactual("no-decomposition", {"decomposed": False},
                   "the baseline Mach 3.0 system: every library configuration runs the UX server's stack"),
    Counterfactual("coalesced-ipc", {"ipc_per_packet": False},
                   "Library-IPC's packet filter hands packets over without an IPC message for each"),
    Counterfactual("no-integrated-filter", {"integrated_filter": False},
                   "SHM-IPF without the filter in the driver: the kernel reads and copies every packet first"),
    Counterfactual("no-shared-buffers", {"shared_buffers": False},
                   "NEWAPI without its shared buffers: the socket interface's copies stay"),
    Counterfactual("wide-gateway-card", {"gateway_8bit_card": False},
                   "the Gateway with a card that moves bytes as fast as the DECstation's Lance"),
    Counterfactual("capture-effect", {"medium": "csma/cd"},
                   "the data frames sent back to back on a CSMA/CD segment, where the ACKs lose every contention"),
)


# --- the stage model -----------------------------------------------------------

def cpu_costs(params: Params, proto: str, platform: str = "DECstation 5000/200") -> CpuCostModel:
    """What each operation costs on one platform: every stage's fixed cost (as ``"<path>/<stage>"``,
    Table 4's 1-byte value) and the per-byte physical operations, in seconds."""
    fixed = {f"{path}/{stage}": us * 1e-6 for path in PATHS for stage, us in params.fixed_us(proto, path).items()}
    # a trap into the Mach 3.0 kernel: the library's ether_output traps and the kernel's does not (§4.3)
    fixed["trap"] = fixed["library/ether_output"] - fixed["kernel/ether_output"]
    # the library's UDP entry references the user's data instead of copying it into an mbuf (§4.3)
    fixed["by-reference/entry/copyin"] = params.fixed_us("UDP", "library")["entry/copyin"] * 1e-6
    per_byte = {"device_read": params.device_read_us_per_byte, "memcpy": params.memcpy_us_per_byte,
                "checksum": params.checksum_us_per_byte, "device_write": params.device_write_us_per_byte}
    if platform == "Gateway 486" and params.gateway_8bit_card:  # every byte by 8-bit programmed I/O
        per_byte["device_read"] = per_byte["device_write"] = params.gateway_pio_us_per_byte
    return CpuCostModel(DECSTATION_5000.clock_hz, fixed, {op: us * 1e-6 for op, us in per_byte.items()})


def configure(params: Params, system: System) -> System:
    """The system as the mechanism switches of ``params`` leave it (see COUNTERFACTUALS)."""
    if system.path != "library":
        return system
    if not params.decomposed:
        return replace(system, path="server", packet_filter="", newapi=False)
    pf = system.packet_filter
    if (pf == "IPC" and not params.ipc_per_packet) or (pf == "SHM-IPF" and not params.integrated_filter):
        pf = "SHM"
    return replace(system, packet_filter=pf, newapi=system.newapi and params.shared_buffers)


def _stage_ops(proto: str, system: System) -> dict:
    """Per stage: the Table 4 column whose fixed cost it pays, and its per-byte operations."""
    ops = {s: PER_BYTE_OPS[system.path].get(s, ()) for s in STAGES}
    ops = {s: (o[proto] if isinstance(o, dict) else o) for s, o in ops.items()}
    source = {s: system.path for s in STAGES}
    if system.path == "library" and system.packet_filter in ("SHM", "IPC"):
        # no integrated filter: the Mach 3.0 kernel first reads the whole packet out of the
        # device (as it does for the server), then copies it to the library's buffer
        source["device intr/read"] = "server"
        ops["device intr/read"] = ("device_read",)
        ops["kernel copyout"] = ("memcpy",)
    if system.packet_filter == "IPC":
        # Mach's packet filter delivers each packet in an IPC message, as it does to the UX server
        source["kernel copyout"] = "server"
    if system.newapi:  # shared buffers: no copy between the stack and the application
        ops["copyout/exit"] = ()
        if proto == "TCP":  # TCP's send references the shared buffer as UDP's does (§4.3)
            source["entry/copyin"], ops["entry/copyin"] = "by-reference", ()
    return {s: (source[s], ops[s]) for s in STAGES}


def stage_recipes(proto: str, system: System, nbytes: int) -> dict:
    """The work of every stage for one ``nbytes`` message, one way, as recipes."""
    if proto not in HEADERS:
        raise ValueError(f"proto must be 'TCP' or 'UDP', got {proto!r}")
    if nbytes < 1:
        raise ValueError(f"nbytes must be >= 1, got {nbytes!r}")
    out = {}
    for stage, (source, ops) in _stage_ops(proto, system).items():
        per_byte = {}
        for op in ops:
            per_byte[op] = per_byte.get(op, 0) + (nbytes - 1)
        out[stage] = Recipe(ops={f"{source}/{stage}": 1}, nbytes=per_byte)
    return out


def stage_costs(params: Params, proto: str, system: System, nbytes: int,
                platform: str = "DECstation 5000/200") -> dict:
    """Microseconds per stage for one message of ``nbytes`` one way (send and receive hosts)."""
    recipes = stage_recipes(proto, configure(params, system), nbytes)
    cpu = cpu_costs(params, proto, platform)
    return {s: r.seconds(cpu) * 1e6 for s, r in recipes.items()}


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


# --- the cells the model takes as given ---------------------------------------------

def _row_label(platform: str, system: System) -> str:
    return f"{platform} / {system.name}"


def _table4_echoes() -> tuple:
    """Table 4 cells at full size that are their 1-byte input unchanged (stages with no per-byte
    work) or the frame's length at 0.8 us a byte (the transit time)."""
    out = []
    for proto, (_, big) in TABLE4_SIZES.items():
        for short, system in TABLE4_SYSTEMS.items():
            column = f"{proto}_{short}_{big}B"
            out += [("table4", stage, column) for stage, (_, ops) in _stage_ops(proto, system).items() if not ops]
            out.append(("table4", "Network Transit Time", column))
    return tuple(out)


def _one_byte_round_trips() -> tuple:
    """Table 2 and 3 cells whose value is twice a one-way sum of Table 4's 1-byte costs and the wire."""
    params, out = Params(), []
    for artifact, rows in (("table2", [(pf, s) for pf, systems in PLATFORMS.items() for s in systems]),
                           ("table3", [("DECstation 5000/200", s) for s in TABLE3])):
        for platform, system in rows:
            ops = {op for proto in HEADERS for r in stage_recipes(proto, configure(params, system), 1).values()
                   for op in r.ops}
            if all(op.split("/")[0] in PATHS + ("by-reference",) for op in ops):  # only Table 4's fixed costs
                label = _row_label(platform, system)
                out += [(artifact, label, "tcp_rtt_ms_1B"), (artifact, label, "udp_rtt_ms_1B")]
    return tuple(out)


INPUTS = (
    Inputs(("table4_one_byte_us",), cells("table4", TABLE4_ROWS, [f"{p}_{short}_1B" for p in HEADERS
                                                                   for short in TABLE4_SYSTEMS]),
           "Table 4's 1-byte columns are the model's stage costs; their totals and the 51 us transit "
           "follow by arithmetic"),
    Inputs(("table4_one_byte_us",), _table4_echoes(),
           "a stage that does no per-byte work keeps its 1-byte cost at full size, and the transit time "
           "is the frame's length at 0.8 us a byte: arithmetic on inputs and on the Ethernet standard"),
    Inputs(("table4_one_byte_us",), _one_byte_round_trips(),
           "a 1-byte round trip is twice the 1-byte one-way sum of Table 4 and the wire"),
    Inputs(("recv_buffer_kb",),
           tuple(("table2", _row_label(pf, s), "recv_buffer_KB") for pf, systems in PLATFORMS.items()
                 for s in systems)
           + tuple(("table3", _row_label("DECstation 5000/200", s), "recv_buffer_KB") for s in TABLE3),
           "the receive buffer column is the window the ttcp runs use"),
)


# --- the Ethernet segment ------------------------------------------------------------

@dataclass
class _Frame:
    payload: int
    done: object          # succeeds with True when delivered, False when given up
    ready_at: float       # when the station may next try to send it
    attempts: int = 0


class CsmaCdSegment:
    """One shared Ethernet segment with CSMA/CD and truncated binary exponential backoff (IEEE 802.3).

    Each station queues its frames. Once the medium has been idle for an
    inter-frame gap, every station whose head frame is ready starts at once:
    one alone is sent (preamble and frame; delivered at its end), two or more
    collide, send preamble and jam, and each backs off k slot times after its
    n-th collision, k uniform in [0, 2**min(n, backoff_limit)); a frame is given
    up after ``attempt_limit`` attempts. A station that became ready while the
    medium was busy defers and starts when it frees, so two such stations
    always collide. The propagation delay of a private segment is taken as nil.
    """

    def __init__(self, sim, eth, rng, *, jam_bytes: int, backoff_limit: int, attempt_limit: int,
                 stations=("sender", "receiver")):
        self.sim, self.eth, self.rng = sim, eth, rng
        self.backoff_limit, self.attempt_limit = backoff_limit, attempt_limit
        bit_s = 1 / eth.bits_per_s
        self.slot_s = 8 * eth.min_frame_bytes * bit_s  # 802.3: the slot is the minimum frame, 512 bit times
        self.gap_s = 8 * eth.gap_bytes * bit_s
        self.preamble_s = 8 * eth.preamble_bytes * bit_s
        self.collision_s = self.preamble_s + 8 * jam_bytes * bit_s
        self.queues = {name: collections.deque() for name in stations}
        self.idle_since = -self.gap_s
        self.collisions = self.given_up = 0
        self._wake = sim.event()
        sim.process(self.medium())

    def send(self, station: str, payload: int):
        """Queue a frame of ``payload`` bytes; the event's value says whether it arrived."""
        frame = _Frame(payload, self.sim.event(), self.sim.now)
        self.queues[station].append(frame)
        if not self._wake.triggered:
            self._wake.succeed()
        return frame.done

    def medium(self):
        sim, eps = self.sim, 1e-12
        while True:
            heads = [q[0] for q in self.queues.values() if q]
            start = max(min(f.ready_at for f in heads), self.idle_since + self.gap_s) if heads else None
            if start is None or start > sim.now + eps:
                self._wake = sim.event()
                yield self._wake if start is None else sim.any_of([sim.timeout(start - sim.now), self._wake])
                continue
            ready = [q for q in self.queues.values() if q and q[0].ready_at <= sim.now + eps]
            if len(ready) == 1:
                frame = ready[0].popleft()
                yield sim.timeout(self.preamble_s + self.eth.frame_time_s(frame.payload))
                self.idle_since = sim.now
                frame.done.succeed(True)
                continue
            self.collisions += 1
            yield sim.timeout(self.collision_s)
            self.idle_since = sim.now
            for q in ready:
                self._back_off(q)

    def _back_off(self, queue):
        frame = queue[0]
        frame.attempts += 1
        if frame.attempts >= self.attempt_limit:
            queue.popleft()
            self.given_up += 1
            frame.done.succeed(False)
            return
        k = int(self.rng.integers(0, 2 ** min(frame.attempts, self.backoff_limit)))
        frame.ready_at = self.sim.now + k * self.slot_s


# --- ttcp ------------------------------------------------------------------------

@dataclass(frozen=True)
class TtcpCosts:
    """CPU seconds of each piece of work in a ttcp run, on the sending and receiving hosts."""

    send_s: float       # sender: one data segment, from write() to the device
    irq_s: float        # receiver, kernel: one data segment's interrupt, filter and copy towards the stack
    deliver_s: float    # receiver: one delivery of packets into the stack (Table 4's kernel copyout, 1 byte)
    deliver_each: bool  # True: one delivery per packet (an IPC message each); False: one per wakeup
    collect_s: float    # receiver: trapping for the next queued IPC message when the thread did not sleep
    proto_s: float      # receiver, protocol thread: one data segment up to the reader's copy
    wakeup_s: float     # receiver: passing data to the reader, once per batch
    ack_send_s: float   # receiver: one bare ACK, made inside the stack
    ack_recv_s: float   # sender: one ACK, interrupt to TCP

    @classmethod
    def of(cls, params: Params, system: System, platform: str) -> "TtcpCosts":
        """The costs of one configuration: stage recipes for an MSS segment and for a bare ACK."""
        cpu = cpu_costs(params, "TCP", platform)
        system = configure(params, system)
        data = stage_recipes("TCP", system, params.mss_bytes)
        bare = stage_recipes("TCP", system, 1)
        per_call = params.mss_bytes / params.ttcp_buffer_bytes

        def amortised(stage):  # the fixed part of read() or write() is paid once per ttcp buffer
            return bare[stage] * per_call + Recipe(nbytes=data[stage].nbytes)

        def seconds(*recipes):
            return sum(r.seconds(cpu) for r in recipes)

        return cls(
            send_s=seconds(amortised("entry/copyin"), *(data[s] for s in SEND[1:])),
            irq_s=seconds(data["device intr/read"], data["netisr/packet filter"],
                          Recipe(nbytes=data["kernel copyout"].nbytes)),
            deliver_s=seconds(bare["kernel copyout"]),
            deliver_each=system.path == "server" or system.packet_filter == "IPC",
            collect_s=seconds(syscalls.TRAP.system),  # a plain trap, no call of its own
            proto_s=seconds(*(data[s] for s in ("mbuf/queue", "ipintr", "tcp/udp_input")), amortised("copyout/exit")),
            wakeup_s=seconds(data["wake up user thread"]),
            ack_send_s=seconds(*(bare[s] for s in SEND[1:])),
            ack_recv_s=seconds(*(bare[s] for s in INTERRUPT_LEVEL + ("ipintr", "tcp/udp_input"))),
        )


@dataclass(frozen=True)
class Backoff:
    """The CSMA/CD constants of a segment (see :class:`CsmaCdSegment`)."""

    jam_bytes: int
    backoff_limit: int
    attempt_limit: int


class Ttcp:
    """A discrete-event ttcp run: a sender streams ``segments`` MSS segments to a receiver.

    The sender stops when a window's worth is unacknowledged. At the receiver
    each segment pays its kernel work at once, then joins the protocol
    thread's queue. The thread, woken only when it was asleep, pays one
    delivery per wakeup (shared memory) or per packet (an IPC message each),
    runs TCP and sends a cumulative ACK every ``ack_every`` segments. With
    ``backoff`` the two hosts share a CSMA/CD segment drawing on ``rng``;
    without, a collision-free FIFO medium.
    """

    def __init__(self, costs: TtcpCosts, *, segments: int, mss: int, window: int, ack_every: int,
                 backoff: Backoff | None = None, rng=None):
        self.sim = sim = Simulation()
        self.costs, self.segments, self.mss, self.window, self.ack_every = costs, segments, mss, window, ack_every
        if backoff is None:
            self.link, self.segment = sim.link(ETHERNET_10), None
        else:
            self.segment = CsmaCdSegment(sim, ETHERNET_10, make_rng(rng), jam_bytes=backoff.jam_bytes,
                                         backoff_limit=backoff.backoff_limit, attempt_limit=backoff.attempt_limit)
        self.sender_cpu = CpuAccount(sim, resource=sim.resource(1))
        self.receiver_cpu = CpuAccount(sim, resource=sim.resource(1))
        self.sent = 0                 # segments handed to the wire
        self.received = 0             # segments through the receiver's TCP
        self.acked = 0                # segments acknowledged at the sender
        self.queued = 0               # segments waiting for the protocol thread
        self.thread_awake = False
        self.window_open = None
        self.done = sim.event()

    def run(self) -> float:
        """Simulated seconds until the last segment is acknowledged."""
        self.sim.process(self.sender())
        self.sim.run(until=self.done)
        return self.sim.now

    def transmit(self, station: str, payload: int):
        if self.segment is None:
            return self.link.send(payload)
        return self.segment.send(station, payload)

    def sender(self):
        for _ in range(self.segments):
            while (self.sent - self.acked + 1) * self.mss > self.window:
                self.window_open = self.sim.event()
                yield self.window_open
            yield from self.sender_cpu.hold("send", self.costs.send_s)
            self.sent += 1
            self.sim.process(self.arrive(self.transmit("sender", self.mss + HEADERS["TCP"])))

    def arrive(self, frame):
        if (yield frame) is False:
            raise RuntimeError("a data frame was given up after too many collisions; ttcp has no retransmission")
        yield from self.receiver_cpu.hold("interrupt", self.costs.irq_s)
        self.queued += 1
        if not self.thread_awake:
            self.thread_awake = True
            self.sim.process(self.protocol_thread())

    def protocol_thread(self):
        c, cpu = self.costs, self.receiver_cpu
        if c.deliver_s and not c.deliver_each:
            yield from cpu.hold("delivery", c.deliver_s)  # shared memory: one wakeup of the library per batch
        yield from cpu.hold("wakeup", c.wakeup_s)
        first = True
        while self.queued:
            self.queued -= 1
            if c.deliver_s and c.deliver_each:  # an IPC message per packet; after the first, a trap to collect it
                yield from cpu.hold("delivery", c.deliver_s + (0.0 if first else c.collect_s))
            first = False
            yield from cpu.hold("protocol", c.proto_s)
            self.received += 1
            if self.received % self.ack_every == 0 or self.received == self.segments:
                yield from cpu.hold("ack", c.ack_send_s)
                self.send_ack(self.received)
        self.thread_awake = False

    def send_ack(self, upto: int):
        self.sim.process(self.ack(self.transmit("receiver", HEADERS["TCP"]), upto))

    def ack(self, frame, upto):
        if (yield frame) is False:  # given up after 16 collisions: the next ACK covers it
            if upto == self.segments:
                self.send_ack(upto)  # the last one has no successor: the delayed-ACK timer resends it
            return
        yield from self.sender_cpu.hold("ack", self.costs.ack_recv_s)
        self.acked = max(self.acked, upto)
        if self.window_open is not None and not self.window_open.triggered:
            self.window_open.succeed()
        if self.acked == self.segments and not self.done.triggered:
            self.done.succeed()


def ttcp_throughput(params: Params, system: System, platform="DECstation 5000/200", *, quick=False,
                    rng=0) -> float:
    """KB/s (KB = 1024 bytes, as ttcp prints) of a discrete-event ttcp run; ``rng`` draws the backoffs."""
    mss = params.mss_bytes
    total = (1 * MiB if quick else params.ttcp_bytes) // mss * mss
    backoff = Backoff(params.jam_bytes, params.backoff_limit, params.attempt_limit) \
        if params.medium == "csma/cd" else None
    run = Ttcp(TtcpCosts.of(params, system, platform), segments=total // mss, mss=mss,
               window=params.window_bytes(platform, system), ack_every=params.ack_every, backoff=backoff, rng=rng)
    return total / run.run() / 1024


# --- the artifacts ---------------------------------------------------------------------

def _latency_row(params, system, platform):
    row = {f"tcp_rtt_ms_{n}B": rtt_ms(params, "TCP", system, n, platform) for n in TCP_SIZES}
    row.update({f"udp_rtt_ms_{n}B": rtt_ms(params, "UDP", system, n, platform) for n in UDP_SIZES})
    return row


def _table(params, rows, quick, rng):
    out = []
    for (platform, system), child in zip(rows, spawn(rng, len(rows))):
        out.append({"platform": platform, "system": system.name,
                    "tcp_throughput_KB_per_s": ttcp_throughput(params, system, platform, quick=quick, rng=child),
                    "recv_buffer_KB": params.window_bytes(platform, system) // 1024,
                    **_latency_row(params, system, platform)})
    return pd.DataFrame(out).set_index(["platform", "system"])


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: TCP throughput (KB/s), receive buffer (KB), TCP and UDP round trips (ms) by message size.

    ``rng`` draws the Ethernet backoffs of the ttcp runs (one child stream per row).
    """
    params = params or Params()
    return _table(params, [(pf, s) for pf, systems in PLATFORMS.items() for s in systems], quick, rng)


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: the library with the NEWAPI socket interface (DECstation), same columns as Table 2."""
    params = params or Params()
    return _table(params, [("DECstation 5000/200", s) for s in TABLE3], quick, rng)


def table4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 4: microseconds per stage, one way, by protocol, stack and message size (DECstation)."""
    params = params or Params()
    cols = {}
    for proto, sizes in TABLE4_SIZES.items():
        for short, system in TABLE4_SYSTEMS.items():
            for n in sizes:
                c = stage_costs(params, proto, system, n)
                w = one_way_us(params, proto, system, n)
                col = {s: c[s] for s in STAGES}
                col.update({"Send Path Total": w["send"], "Receive Path Total": w["receive"],
                            "Network Transit Time": w["transit"], "Total": w["total"]})
                cols[f"{proto}_{short}_{n}B"] = col
    df = pd.DataFrame(cols).loc[list(TABLE4_ROWS)]
    df.index.name = "component"
    return df


# --- for the notebook ------------------------------------------------------------------

def setup_table() -> pd.DataFrame:
    """The two platforms and the network, from the hardware catalog, each number with its source."""
    rows = [{"machine": m.name, "cpu": m.cpu, "clock_MHz": m.clock_hz / 1e6, "nic": m.nic,
             "source": m.sources["clock_hz"]} for m in (DECSTATION_5000, catalog.get("Gateway 486/33"))]
    rows.append({"machine": "network", "cpu": "", "clock_MHz": None,
                 "nic": f"Ethernet, {ETHERNET_10.bits_per_s / 1e6:g} Mbit/s, one private segment",
                 "source": "IEEE 802.3; §4: a private network"})
    return pd.DataFrame(rows).set_index("machine")


def paths_table(proto: str = "UDP", systems=DECSTATION[:1] + DECSTATION[2:] + NEWAPI[-1:]) -> pd.DataFrame:
    """For every stage and configuration: whose Table 4 fixed cost it pays, and its per-byte operations."""
    params, cols = Params(), {}
    for system in systems:
        ops = _stage_ops(proto, configure(params, system))
        cols[system.name.replace("Mach 3.0+UX ", "")] = {
            stage: source + "".join(f" + {op}" for op in per_byte) for stage, (source, per_byte) in ops.items()}
    return pd.DataFrame(cols).rename_axis("stage")


def boundary_crossings(system: System) -> int:
    """Protection-boundary crossings on a one-way path (Table 4's asterisks, §4.3)."""
    marks = {"kernel": ("entry/copyin", "copyout/exit"),
             "server": ("entry/copyin", "ether_output", "kernel copyout", "copyout/exit"),
             "library": ("ether_output", "kernel copyout")}[system.path]
    return len(marks)


def crossings_table() -> pd.DataFrame:
    """Crossings per one-way message for each DECstation configuration."""
    rows = [{"system": s.name, "crossings": boundary_crossings(s)} for s in DECSTATION + NEWAPI]
    return pd.DataFrame(rows).set_index("system")


def then_and_now(rtt_now_us: pd.Series, memcpy_bytes_per_s: float, params: Params | None = None) -> pd.DataFrame:
    """The in-kernel UDP round trip and a 1472-byte copy: the model's DECstation beside this machine.

    ``rtt_now_us`` is measured round trips (us) by message size; ``memcpy_bytes_per_s`` a measured copy rate.
    """
    params = params or Params()
    kernel = DECSTATION[0]
    rows = [{"quantity": f"UDP round trip, {n} B", "then_us": rtt_ms(params, "UDP", kernel, int(n)) * 1000,
             "now_us": float(v)} for n, v in rtt_now_us.items()]
    rows.append({"quantity": "memory copy of 1472 B", "then_us": params.memcpy_us_per_byte * 1472,
                 "now_us": 1472 / memcpy_bytes_per_s * 1e6})
    out = pd.DataFrame(rows).set_index("quantity")
    out["speed_up"] = out["then_us"] / out["now_us"]
    return out


def receiver_time_table(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The receiving host's CPU time per segment (us) by kind of work, in one ttcp run per DECstation row."""
    params = params or Params()
    mss, rows = params.mss_bytes, []
    segments = (1 * MiB if quick else params.ttcp_bytes) // mss
    for system, child in zip(DECSTATION[:1] + DECSTATION[2:], spawn(rng, len(DECSTATION) - 1)):
        run = Ttcp(TtcpCosts.of(params, system, "DECstation 5000/200"), segments=segments, mss=mss,
                   window=params.window_bytes("DECstation 5000/200", system), ack_every=params.ack_every)
        seconds = run.run()
        row = {k: v / segments * 1e6 for k, v in run.receiver_cpu.seconds.items()}
        row["idle"] = (seconds - sum(run.receiver_cpu.seconds.values())) / segments * 1e6
        rows.append({"system": system.name, **row})
    cols = ["interrupt", "delivery", "wakeup", "protocol", "ack", "idle"]
    return pd.DataFrame(rows).set_index("system").reindex(columns=cols).fillna(0.0)


def rtt_curve(params: Params | None = None, systems=DECSTATION, proto="UDP", sizes=None) -> pd.DataFrame:
    """Round trip (ms) against message size for plotting: one column per system."""
    params = params or Params()
    sizes = np.arange(1, 1473, 16) if sizes is None else np.asarray(sizes)
    return pd.DataFrame({s.name: [rtt_ms(params, proto, s, int(n)) for n in sizes] for s in systems},
                        index=pd.Index(sizes, name="message_bytes"))
