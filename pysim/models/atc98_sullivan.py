"""Tribeca: a system for managing large databases of network traffic (Sullivan & Heybey, USENIX ATC 1998).

Regenerates Table 1 (records/s and KB/s of dd and twelve queries on a 260 MB
disk file), Table 2 (Tribeca against hand-coded stand-alone programs on
disk), Table 3 (the same on ID-1 tape) and the CPU figures of §3.5's text
(``cpu``: dd's share, Tribeca's range, the stand-alone programs' saving,
the tape runs' share and system time).

First principles: a double-buffered sequential scan (§3.1), simulated buffer
by buffer on the pysim engine (:class:`DoubleBufferedScan`). A device fills
one buffer while the single CPU works on the other; the CPU's work per
buffer is the I/O path's cost per byte (system time: the file system's copy
out of its cache for the disk, the HiPPI driver's programmed-I/O copy of
every word for the tape, which holds the CPU for the whole transfer) plus
the query's work per record (user time). So a scan runs at the device's
speed until the CPU's work per buffer outgrows the device's time, and at
the CPU's speed after: small records (64-byte ATM cells) and dear records
(bit fields to reconstruct, hash keys to assemble) cross over, 290-byte
frame-relay records with cheap predicates do not. A query's work per record
is a :class:`pysim.sw.Recipe` counted from its plan (:data:`QUERIES`): the
record parse, one executor visit per plan node, the operator calls,
predicates ordered by the optimizer's rank (§3.4) so that the expected
number evaluated follows from their selectivities, bit-field extractions,
hash-key materialisation only where §3.1 says Tribeca materialises (keys
assembled from non-contiguous values), and aggregate updates. The
stand-alone programs do the same work hand-coded: no node visits, no
operator calls.

Calibrated, each on one published cell (see CALIBRATION): the disk's
streaming rate (dd's KB/s), the disk path's CPU per byte (dd's 68% of the
CPU), the tape path's CPU per byte (the stand-alone frame4 on tape), the
executor's cost per node visit (Tribeca's frame4 on tape), Tribeca's
bit-field extraction (atm3) and its hash-key materialisation (atm1). Every
other cell is a prediction: the other legible rows of Table 1 (frame4-frame8, atm2,
atm4; frame1-frame3 are lost in its text), the stand-alone programs, Tribeca's
frame1-frame3 and the ratios of Table 2, frame1 on tape, and the CPU shares.

Then vs now (:func:`measure_now`, :func:`then_and_now`): record files of the
paper's shapes and sizes from :mod:`pysim.workloads.records`, scanned on this
machine by a hand-coded C program (built here; one buffer, or two filled by a
reader thread as Tribeca double-buffers), by DuckDB (a general-purpose engine
of today, in place of Tribeca) and by ``dd``, through the page cache and with
O_DIRECT.

Not reproduced: Figure 1 (a diagram), the coarse-grained index and the
window operators of §2-§3 (the paper gives no numbers for them). See
papers/atc98_sullivan/paper.yaml.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import cache_dir
from pysim.hw import CpuCostModel
from pysim.hw.catalog import Machine
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, derived, from_catalog, stated
from pysim.sw import CpuAccount, Recipe
from pysim.units import KiB, MB, MHz, Mbit_per_s, ns, us
from pysim.workloads import records
from pysim.harness.exclusive import exclusive

#: The workstation of §3.5. Not in the shared catalog yet: only its clock matters here, and only for the
#: operations whose cost is assumed in cycles.
SPARCSTATION_10 = Machine(
    name="Sun SPARCstation 10", cpu="SuperSPARC", clock_hz=40 * MHz, used_by=("atc98_sullivan",),
    sources={"clock_hz": "assumed: §3.5 names a 'Sun Sparc 10' only; its SuperSPARC ran at 33 to 50 MHz "
                         "depending on the model, and 40 MHz (models 40 and 41) is taken. Only the operations "
                         "priced in cycles depend on it"},
)

FRAME_QUERIES = tuple(f"frame{i}" for i in range(1, 9))
ATM_QUERIES = ("atm1", "atm2", "atm3", "atm4")
TABLE2_QUERIES = ("frame1", "frame2", "frame3", "frame4")
TABLE3_QUERIES = ("frame1", "frame4")
KB = KiB  # the paper's kilobyte: 1024 bytes (64-byte ATM records: KB/s = records/s x 64 / 1024 in every row)


@dataclass(frozen=True)
class Predicate:
    """A qualification on one field: the share of records that pass, and whether the field is a bit field."""

    field: str
    passes: float
    bitfield: bool = False


@dataclass(frozen=True)
class Query:
    """A query's plan as the executor runs it (Table 1's descriptions).

    ``quals``: qualification nodes, each a tuple of predicates, applied one after the other (a record
    reaches the next only if it passed); ``branches``: several qualification nodes on the same input
    whose outputs are multiplexed together (frame7, frame8; each record is tested by every branch);
    ``demux``: the fields of the demultiplexing key; ``key_contiguous``: whether those fields lie side by
    side in the record (else Tribeca materialises the key, §3.1 (c)); ``aggregates``: updates per record
    that reaches the aggregate node (count, or count and sum).
    """

    name: str
    data: str
    quals: tuple = ()
    branches: tuple = ()
    demux: tuple = ()
    key_contiguous: bool = True
    aggregates: int = 2

    def __post_init__(self):
        if self.data not in ("frame", "atm"):
            raise ValueError(f"data must be 'frame' or 'atm', got {self.data!r}")
        if self.quals and self.branches:
            raise ValueError(f"{self.name}: a plan has a chain of qualifications or multiplexed branches, not both")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Costs in microseconds or nanoseconds on the SPARCstation 10, rates in bytes/s."""

    # the workload (§1, §2.1, §3.5)
    atm_record_bytes: int = stated(64, "§3.5: for ATM the records are 64 bytes long")
    disk_frame_record_bytes: float = derived(290.26, "Table 1: KB/s x 1024 / records/s is 290.2 to 290.3 bytes "
                                                     "in every frame-relay row (the same file); Table 2 agrees")
    tape_frame_record_bytes: float = derived(238.12, "Table 3: KB/s x 1024 / records/s is 238.1 bytes in all "
                                                     "four runs (another data set, on tape)")
    file_bytes: int = stated(260_000_000, "§3.5: 260 megabyte disk files")
    virtual_circuits: int = stated(12, "§2.1: ATM cells from a dozen virtual circuits", ge=1)
    t1_interfaces: int = stated(16, "§1: groups of 16 T1 links", ge=1)
    t1_channels: int = assumed(24, "a T1 line carries 24 DS0 channels; the recorder separates them (Table 1, "
                                   "frame4)", ge=1)
    data_share: float = assumed(0.85, "the share of records of the data message type: the lab's frame-relay "
                                      "generator's (pysim.workloads.records), 85%", gt=0, le=1)
    ip_share: float = assumed(0.9, "§3.5: frame relay traffic 'carrying mostly IP'", gt=0, le=1)
    bridged_share: float = assumed(0.05, "frame7: IP bridged rather than routed, a small part of the traffic",
                                   gt=0, le=1)
    # the I/O path
    buffer_bytes: int = assumed(64 * KiB, "§3.5: 'the same block size for dd, the stand-alone programs and "
                                          "Tribeca', size not given; a few UFS clusters. In steady state the "
                                          "throughputs do not depend on it")
    disk_bytes_per_s: float = calibrated(5892096.0, "the disk's streaming rate through the file system")
    disk_cpu_ns_per_byte: float = calibrated(115.40885, "the disk path's CPU per byte: UFS and the copy out of "
                                                      "the buffer cache (system time)")
    tape_bytes_per_s: float = stated(256 * Mbit_per_s, "§1: ID-1 tapes transfer data at about 256 Mb/s")
    tape_cpu_ns_per_byte: float = calibrated(136.70721, "the HiPPI driver's programmed-I/O copy, per byte")
    # the per-record work: assumed in cycles of the SuperSPARC, or calibrated
    clock_hz: float = from_catalog(SPARCSTATION_10, "clock_hz")
    parse_variable_cycles: float = assumed(10.0, "a variable-length record: load its length, advance, check the "
                                                 "buffer's end")
    parse_fixed_cycles: float = assumed(4.0, "a fixed-size record: advance a pointer, check the buffer's end")
    compare_cycles: float = assumed(3.0, "a byte field against a constant: load, compare, branch")
    add_cycles: float = assumed(3.0, "an aggregate update: load, add, store")
    shift_cycles: float = assumed(4.0, "a bit field extracted by hand: loads, shift, mask")
    call_cycles: float = assumed(10.0, "an operator called through its type's table: load the pointer, call, "
                                       "a register window saved and restored")
    hash_cycles: float = assumed(30.0, "hash a short key and probe a table of a few dozen substreams")
    indirection_cycles: float = assumed(2.0, "§3.1: a multiplex leaves one more level of indirection")
    copy_ns_per_byte: float = assumed(40.0, "a SuperSPARC's bcopy, some 25 MB/s; only the counterfactual that "
                                            "materialises intermediate records copies")
    node_us: float = calibrated(1.405041, "one executor visit of a plan node per record: fetch the node, walk its "
                                        "predicate and target lists")
    bitfield_us: float = calibrated(3.421316, "Tribeca's extraction of an arbitrary-offset bit field (§2.2)")
    materialize_us: float = calibrated(4.826367, "assembling a hash key from values that are not contiguous (§3.1)")
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    tribeca_double_buffered: bool = stated(True, "§3.1: all streams are double-buffered so that one buffer can "
                                                 "be processed while another is being read")
    generic_executor: bool = stated(True, "§3.5: the stand-alone program does not have any of the overhead "
                                          "required to execute a general-purpose query")
    materialize_intermediate: bool = stated(False, "§3.1: intermediate records are never unnecessarily "
                                                   "materialized; a pointer into the input buffer is used")
    ordered_predicates: bool = stated(True, "§3.4: the optimizer orders the predicates to minimize expected cost")
    atm_bitfields: bool = stated(True, "§3.5: the ATM cell record format includes several bit fields that must "
                                       "be reconstructed to perform the query")
    tape_pio: bool = stated(True, "§3.5: the HiPPI interface uses programmed I/O; the driver copies each word")

    @property
    def cpu(self) -> CpuCostModel:
        """The SPARCstation 10's unit costs (seconds) for the operations of :func:`query_recipe`."""
        cyc = 1.0 / self.clock_hz
        fixed = {"parse": self.parse_variable_cycles * cyc, "parse_fixed": self.parse_fixed_cycles * cyc,
                 "compare": self.compare_cycles * cyc, "add": self.add_cycles * cyc,
                 "shift": self.shift_cycles * cyc, "virtual_call": self.call_cycles * cyc,
                 "hash": self.hash_cycles * cyc, "indirection": self.indirection_cycles * cyc,
                 "node": self.node_us * us, "bitfield": self.bitfield_us * us,
                 "materialize": self.materialize_us * us}
        return CpuCostModel(self.clock_hz, fixed, {"copy": self.copy_ns_per_byte * ns})


CALIBRATION = (
    Fit("disk_bytes_per_s", "table1", "dd", "kbytes_per_s", (2e6, 2e7)),
    Fit("disk_cpu_ns_per_byte", "cpu", "dd, disk", "cpu_pct", (10.0, 160.0)),
    Fit("tape_cpu_ns_per_byte", "table3", "frame4", "standalone_kbytes_per_s", (50.0, 300.0)),
    Fit("node_us", "table3", "frame4", "tribeca_kbytes_per_s", (0.01, 10.0)),
    Fit("bitfield_us", "table1", "atm3", "kbytes_per_s", (0.01, 20.0)),
    Fit("materialize_us", "table1", "atm1", "kbytes_per_s", (0.01, 30.0)),
)
INPUTS = (
    Inputs((), cells("table3", ["frame4"], ["ratio"]),
           "the ratio of two fitted cells (Tribeca's and the stand-alone program's frame4 on tape): it follows "
           "from the fits by arithmetic alone"),
)
COUNTERFACTUALS = (
    Counterfactual("single-buffered", {"tribeca_double_buffered": False},
                   "Tribeca reads a buffer, then processes it: the device idles while the CPU works"),
    Counterfactual("hand-coded", {"generic_executor": False},
                   "Tribeca costs what the hand-coded stand-alone program costs: no node visits, no operator calls"),
    Counterfactual("materialized", {"materialize_intermediate": True},
                   "every plan node copies the record it passes on, as a conventional executor builds tuples"),
    Counterfactual("large-atm-records", {"atm_record_bytes": 290},
                   "ATM records as large as the frame-relay records: as few records per byte"),
    Counterfactual("byte-aligned-atm", {"atm_bitfields": False},
                   "the VCI and VPI read like byte fields: no bit fields to reconstruct, no key to assemble"),
    Counterfactual("dma-tape", {"tape_pio": False},
                   "a tape interface that moves the data by DMA into the user's buffer: no CPU per byte"),
)

#: The queries of Table 1, as plans (§2, §3.5). Selectivities come from Params (see :func:`_predicate`).
QUERIES = {
    "frame1": Query("frame1", "frame"),
    "frame2": Query("frame2", "frame", quals=(("msg_type",),)),
    "frame3": Query("frame3", "frame", quals=(("msg_type", "control", "nlpid"),)),
    "frame4": Query("frame4", "frame", quals=(("msg_type", "control", "nlpid", "interface", "channel"),)),
    "frame5": Query("frame5", "frame", quals=(("msg_type", "nlpid"),), demux=("src_port", "dst_port")),
    "frame6": Query("frame6", "frame", quals=(("msg_type", "nlpid"),), demux=("board", "interface", "channel")),
    "frame7": Query("frame7", "frame", branches=(("msg_type", "nlpid"), ("bridged", "ethertype"))),
    "frame8": Query("frame8", "frame", branches=(("msg_type", "nlpid"), ("bridged", "ethertype")),
                    demux=("board", "channel"), key_contiguous=False, aggregates=1),
    "atm1": Query("atm1", "atm", demux=("vci",), aggregates=1),
    "atm2": Query("atm2", "atm", demux=("vci", "vpi"), aggregates=1),
    "atm3": Query("atm3", "atm", quals=(("vci",),), aggregates=1),
    "atm4": Query("atm4", "atm", quals=(("vci", "vpi"),), aggregates=1),
}


def _predicate(p: Params, field: str) -> Predicate:
    """A field's predicate: the share of records passing it (the workload's shape), and its kind."""
    shares = {"msg_type": p.data_share, "control": 1.0, "nlpid": p.ip_share, "interface": 1 / p.t1_interfaces,
              "channel": 1 / p.t1_channels, "bridged": p.bridged_share, "ethertype": p.ip_share,
              "vci": 1 / p.virtual_circuits, "vpi": 1.0,
              "board": 1.0, "src_port": 1.0, "dst_port": 1.0}  # fields only demultiplexed on
    if field not in shares:
        raise ValueError(f"no predicate on {field!r}; known fields: {sorted(shares)}")
    return Predicate(field, shares[field], bitfield=field in ("vci", "vpi") and p.atm_bitfields)


# --- the work per record ------------------------------------------------------------------

def _field_recipe(p: Params, pred: Predicate, hand_coded: bool) -> Recipe:
    """Reading one field and comparing it: an operator call and a compare in Tribeca (and the bit-field
    extraction for a bit field); the compare alone, or a shift and mask, in hand-coded C."""
    if hand_coded:
        return Recipe(ops={"shift": 1, "compare": 1} if pred.bitfield else {"compare": 1})
    ops = {"virtual_call": 1, "compare": 1}
    if pred.bitfield:
        ops.update(bitfield=1, virtual_call=2)
    return Recipe(ops=ops)


def ordered(p: Params, preds: list, hand_coded: bool) -> list:
    """The predicates in the order the optimizer evaluates them: by rank, cost / (1 - pass share), the
    cheapest filter first (§3.4); in written order when ordering is switched off."""
    if not p.ordered_predicates:
        return list(preds)
    cpu = p.cpu

    def rank(pred):
        cost = _field_recipe(p, pred, hand_coded).seconds(cpu)
        return cost / (1.0 - pred.passes) if pred.passes < 1 else float("inf")

    return sorted(preds, key=rank)


def _qual_node(p: Params, fields, hand_coded: bool) -> tuple:
    """(expected recipe per record entering the node, share of records that pass it)."""
    recipe, reach = Recipe(), 1.0
    for pred in ordered(p, [_predicate(p, f) for f in fields], hand_coded):
        recipe = recipe + reach * _field_recipe(p, pred, hand_coded)
        reach *= pred.passes
    return recipe, reach


def _demux_key(p: Params, q: Query, hand_coded: bool) -> Recipe:
    """Finding a record's substream: its key's bit fields extracted, the key assembled if its values are not
    contiguous in the record (§3.1 (c); hand-coded C builds it in a register), hashed and probed."""
    fields = [_predicate(p, f) for f in q.demux]
    bits = sum(f.bitfield for f in fields)
    key = Recipe(ops={"hash": 1})
    if bits:
        key = key + (Recipe(ops={"shift": bits}) if hand_coded else Recipe(ops={"bitfield": bits, "virtual_call": bits}))
    if (bits or not q.key_contiguous) and not hand_coded:
        key = key + Recipe(ops={"materialize": 1}, nbytes={"copy": 2 * len(fields)})
    return key


def query_recipe(p: Params, name: str, *, hand_coded: bool = False, record_bytes: float | None = None) -> Recipe:
    """The expected work per record of query ``name`` (a :class:`Recipe` on :attr:`Params.cpu`).

    Tribeca's plan visits a node per record per operator (qualification, demultiplex, aggregate; a
    multiplex adds an indirection) and calls each operator through its type; the stand-alone program
    (``hand_coded``, or Tribeca with ``generic_executor`` off) does only the operators' own work.
    ``record_bytes`` (default: the disk data set's) matters only when intermediate records are copied.
    """
    if name not in QUERIES:
        raise ValueError(f"query must be one of {sorted(QUERIES)}, got {name!r}")
    q = QUERIES[name]
    hand = hand_coded or not p.generic_executor
    node = Recipe() if hand else Recipe(ops={"node": 1})
    call = Recipe() if hand else Recipe(ops={"virtual_call": 1})
    size = record_bytes or (p.atm_record_bytes if q.data == "atm" else p.disk_frame_record_bytes)
    nodes = 0.0  # expected node visits, for the materialising counterfactual
    recipe = Recipe(ops={"parse_fixed" if q.data == "atm" else "parse": 1})
    reach = 1.0
    for fields in q.quals:
        work, passes = _qual_node(p, fields, hand)
        recipe, nodes = recipe + reach * (node + work), nodes + reach
        reach *= passes
    if q.branches:
        out = 0.0
        for fields in q.branches:  # every record meets every branch; the branches' outputs are multiplexed
            work, passes = _qual_node(p, fields, hand)
            recipe, nodes, out = recipe + node + work, nodes + 1, out + passes
        reach = min(out, 1.0)
        recipe = recipe + reach * Recipe(ops={"indirection": 1})
    if q.demux:
        recipe, nodes = recipe + reach * (node + _demux_key(p, q, hand)), nodes + reach
    recipe = recipe + reach * (node + q.aggregates * (call + Recipe(ops={"add": 1})))
    nodes += reach
    if p.materialize_intermediate and not hand:
        recipe = recipe + Recipe(nbytes={"copy": nodes * size})
    return recipe


def record_us(p: Params, name: str, *, hand_coded: bool = False, record_bytes: float | None = None) -> float:
    """Microseconds of CPU per record of query ``name`` (user time)."""
    return query_recipe(p, name, hand_coded=hand_coded, record_bytes=record_bytes).seconds(p.cpu) / us


# --- the scan ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Device:
    """A sequential source: its streaming rate, the CPU its data costs per byte, and whether the CPU
    itself moves the data (programmed I/O) or the device does (DMA)."""

    name: str
    bytes_per_s: float
    cpu_s_per_byte: float
    pio: bool = False

    def __post_init__(self):
        if not self.bytes_per_s > 0 or not self.cpu_s_per_byte >= 0:
            raise ValueError(f"{self.name}: bytes_per_s must be > 0 and cpu_s_per_byte >= 0")


def disk(p: Params) -> Device:
    """The SunOS UFS disk: DMA into the buffer cache, then the CPU copies out (§3.5)."""
    return Device("disk", p.disk_bytes_per_s, p.disk_cpu_ns_per_byte * ns)


def tape(p: Params) -> Device:
    """The ID-1 tape behind HiPPI: programmed I/O (§3.5), or DMA with no CPU per byte (the counterfactual)."""
    if p.tape_pio:
        return Device("tape", p.tape_bytes_per_s, p.tape_cpu_ns_per_byte * ns, pio=True)
    return Device("tape", p.tape_bytes_per_s, 0.0)


class DoubleBufferedScan:
    """One program scanning a device through ``buffers`` buffers on one CPU (§3.1).

    ``reading`` fills an empty buffer from the device: by DMA (the CPU is free meanwhile) or, with
    programmed I/O, by the CPU itself at the device's pace. ``processing`` takes a full buffer, pays the
    I/O path's CPU per byte (DMA: the copy out of the file system's cache) and the query's work for the
    buffer's records, and hands the buffer back. Two buffers let the device read one while the CPU
    works on the other; one buffer makes them take turns.
    """

    def __init__(self, sim: Simulation, device: Device, *, buffers: int, buffer_bytes: int,
                 record_bytes: float, record_s: float, n_buffers: int, warmup_buffers: int = 2):
        if buffers not in (1, 2):
            raise ValueError(f"buffers must be 1 or 2, got {buffers!r}")
        if not (n_buffers > warmup_buffers >= 1 and buffer_bytes > 0 and record_bytes > 0 and record_s >= 0):
            raise ValueError("need n_buffers > warmup_buffers >= 1, buffer_bytes > 0, record_bytes > 0, "
                             "record_s >= 0")
        self.sim, self.device, self.n, self.warm = sim, device, n_buffers, warmup_buffers
        self.bytes, self.records = buffer_bytes, buffer_bytes / record_bytes
        self.query_s = self.records * record_s
        self.fill_s = buffer_bytes / device.bytes_per_s
        self.io_cpu_s = buffer_bytes * device.cpu_s_per_byte
        self.cpu = CpuAccount(sim, resource=sim.resource(1))
        self.marks = []  # (time, CPU seconds by category) when the warm-up's last buffer and the last are done
        self.empty, self.full = sim.store(), sim.store()
        for slot in range(buffers):
            self.empty.put(slot)

    def reading(self):
        for _ in range(self.n):
            slot = yield self.empty.get()
            if self.device.pio:  # the driver copies each word as the device delivers it
                yield from self.cpu.hold("system", max(self.fill_s, self.io_cpu_s))
            else:
                yield self.sim.timeout(self.fill_s)
            yield self.full.put(slot)

    def processing(self):
        for k in range(self.n):
            slot = yield self.full.get()
            if not self.device.pio:
                yield from self.cpu.hold("system", self.io_cpu_s)
            yield from self.cpu.hold("user", self.query_s)
            if k in (self.warm - 1, self.n - 1):  # nothing still running is booked yet at this instant
                self.marks.append((self.sim.now, dict(self.cpu.seconds)))
            yield self.empty.put(slot)

    def results(self) -> dict:
        """Bytes/s, records/s and the CPU's shares (%) from the warm-up's last buffer to the last."""
        (t0, s0), (t1, s1) = self.marks
        window, done = t1 - t0, self.n - self.warm
        share = {c: 100.0 * (s1.get(c, 0.0) - s0.get(c, 0.0)) / window for c in ("system", "user")}
        busy = share["system"] + share["user"]
        return {"bytes_per_s": done * self.bytes / window, "records_per_s": done * self.records / window,
                "cpu_pct": busy, "system_pct": 100.0 * share["system"] / busy if busy else float("nan")}


def scan(device: Device, *, record_bytes: float, record_s: float, buffers: int = 2,
         buffer_bytes: int = 64 * KiB, n_buffers: int = 200) -> dict:
    """Simulate one scan of ``n_buffers`` buffers; bytes/s, records/s, CPU % and system share (%)."""
    sim = Simulation()
    run = DoubleBufferedScan(sim, device, buffers=buffers, buffer_bytes=buffer_bytes, record_bytes=record_bytes,
                             record_s=record_s, n_buffers=n_buffers)
    sim.process(run.reading())
    sim.process(run.processing())
    sim.run()
    return run.results()


def _n_buffers(quick: bool) -> int:
    # the scan is in its steady state from the second buffer on; the full profile runs longer to show it
    return 64 if quick else 512


def _run(p: Params, program: str, name: str | None, where: str, quick: bool) -> dict:
    """A copy of :func:`_scan_of` (cached: the CPU figures reuse the tables' runs)."""
    return dict(_scan_of(p, program, name, where, quick))


@functools.lru_cache(maxsize=512)
def _scan_of(p: Params, program: str, name: str | None, where: str, quick: bool) -> dict:
    """One program's scan: 'dd' (no work per record), 'tribeca' or 'standalone', on the disk or the tape.

    dd and the stand-alone programs read through the file system's read-ahead, so their reads always
    overlap their work; Tribeca's own double buffering is a switch.
    """
    if program == "dd":
        size, work = 1.0, 0.0
    else:
        q = QUERIES[name]
        size = p.atm_record_bytes if q.data == "atm" else (
            p.disk_frame_record_bytes if where == "disk" else p.tape_frame_record_bytes)
        work = record_us(p, name, hand_coded=program == "standalone", record_bytes=size) * us
    buffers = 1 if program == "tribeca" and not p.tribeca_double_buffered else 2
    device = disk(p) if where == "disk" else tape(p)
    r = scan(device, record_bytes=size, record_s=work, buffers=buffers, buffer_bytes=p.buffer_bytes,
             n_buffers=_n_buffers(quick))
    r["kbytes_per_s"] = r["bytes_per_s"] / KB
    r["records_per_s"] = float("nan") if program == "dd" else r["records_per_s"]
    return r


# --- the artifacts ----------------------------------------------------------------------

def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: dd and the twelve queries on a 260 MB disk file.

    Index: query. Columns: records_per_s, kbytes_per_s (KB of 1024 bytes), cpu_pct, system_pct (share of
    the CPU time spent in the kernel), slower_than_dd_pct, record_us (the query's CPU per record).
    """
    p = params or Params()
    rows = {"dd": _run(p, "dd", None, "disk", quick)}
    for name in (*FRAME_QUERIES, *ATM_QUERIES):
        rows[name] = {**_run(p, "tribeca", name, "disk", quick), "record_us": record_us(p, name)}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df["slower_than_dd_pct"] = 100.0 * (1.0 - df["kbytes_per_s"] / df.loc["dd", "kbytes_per_s"])
    cols = ["records_per_s", "kbytes_per_s", "cpu_pct", "system_pct", "slower_than_dd_pct", "record_us"]
    return df[cols].rename_axis("query")


def _versus(p: Params, names, where: str, quick: bool) -> pd.DataFrame:
    rows = {}
    for name in names:
        t, s = _run(p, "tribeca", name, where, quick), _run(p, "standalone", name, where, quick)
        rows[name] = {"tribeca_records_per_s": t["records_per_s"], "tribeca_kbytes_per_s": t["kbytes_per_s"],
                      "standalone_records_per_s": s["records_per_s"],
                      "standalone_kbytes_per_s": s["kbytes_per_s"],
                      "ratio": t["kbytes_per_s"] / s["kbytes_per_s"],
                      "tribeca_cpu_pct": t["cpu_pct"], "standalone_cpu_pct": s["cpu_pct"],
                      "tribeca_system_pct": t["system_pct"], "standalone_system_pct": s["system_pct"]}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("query")


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: Tribeca against the stand-alone programs, frame1-frame4 on disk.

    Columns: tribeca_ and standalone_ records_per_s, kbytes_per_s, cpu_pct, system_pct; ratio (Tribeca's
    KB/s over the stand-alone program's).
    """
    return _versus(params or Params(), TABLE2_QUERIES, "disk", quick)


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: the same on ID-1 tape, frame1 and frame4 (the tape data set's records: 238 bytes)."""
    return _versus(params or Params(), TABLE3_QUERIES, "tape", quick)


def cpu(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.5's CPU figures.

    Rows: 'dd, disk'; 'Tribeca, disk, least' and 'Tribeca, disk, most' (over the frame-relay queries);
    'stand-alone, disk' (frame1-frame4); 'tape, all runs' (Tribeca and the stand-alone programs, Table 3).
    Columns: cpu_pct (the mean over the rows' runs, or the least or most), system_pct (share of the CPU
    time in the kernel, the least over the runs), less_cpu_than_tribeca_pct (the stand-alone programs' CPU
    time below Tribeca's for the same file, mean over frame1-frame4).
    """
    p = params or Params()
    t1, t2, t3 = table1(p, quick=quick), table2(p, quick=quick), table3(p, quick=quick)
    frames = t1.loc[list(FRAME_QUERIES)]
    # CPU seconds per byte: a share of the CPU over the bytes per second it reads
    t_cpu = t2["tribeca_cpu_pct"] / t2["tribeca_kbytes_per_s"]
    s_cpu = t2["standalone_cpu_pct"] / t2["standalone_kbytes_per_s"]
    tape_cpu = pd.concat([t3["tribeca_cpu_pct"], t3["standalone_cpu_pct"]])
    tape_sys = pd.concat([t3["tribeca_system_pct"], t3["standalone_system_pct"]])
    rows = {
        "dd, disk": {"cpu_pct": t1.loc["dd", "cpu_pct"], "system_pct": t1.loc["dd", "system_pct"]},
        "Tribeca, disk, least": {"cpu_pct": frames["cpu_pct"].min(), "system_pct": frames["system_pct"].min()},
        "Tribeca, disk, most": {"cpu_pct": frames["cpu_pct"].max(), "system_pct": frames["system_pct"].min()},
        "stand-alone, disk": {"cpu_pct": t2["standalone_cpu_pct"].mean(),
                              "system_pct": t2["standalone_system_pct"].min(),
                              "less_cpu_than_tribeca_pct": 100.0 * (1.0 - s_cpu / t_cpu).mean()},
        "tape, all runs": {"cpu_pct": tape_cpu.mean(), "system_pct": tape_sys.min()},
    }
    df = pd.DataFrame.from_dict(rows, orient="index")
    return df[["cpu_pct", "system_pct", "less_cpu_than_tribeca_pct"]].rename_axis("figure")


def crossover(params: Params | None = None, *, record_bytes=(16, 32, 64, 128, 290, 512, 1024, 4096),
              record_us_values=(0.0, 1.0, 2.0, 5.0, 10.0, 20.0)) -> pd.DataFrame:
    """KB/s of a disk scan against record size and CPU per record, by the closed form of the double-buffered
    scan (device-bound until the CPU's work per byte outgrows the device's time): the map Table 1's queries
    sit on. Index: (record_bytes, record_us). Columns: kbytes_per_s, bound ('device' or 'CPU')."""
    p = params or Params()
    d = disk(p)
    rows = []
    for size in record_bytes:
        for work in record_us_values:
            cpu_per_byte = d.cpu_s_per_byte + work * us / size
            rate = min(d.bytes_per_s, 1.0 / cpu_per_byte)
            rows.append({"record_bytes": size, "record_us": work, "kbytes_per_s": rate / KB,
                         "bound": "device" if d.bytes_per_s <= 1.0 / cpu_per_byte else "CPU"})
    return pd.DataFrame(rows).set_index(["record_bytes", "record_us"])


# --- then vs now: the scan on this machine ------------------------------------------------

#: The queries run on this machine: the fields of the lab's record files (pysim.workloads.records).
#: frame4 keeps its selective predicates (one T1 interface, one channel, data frames); frame6
#: demultiplexes the data frames by interface and channel; atm3 counts one VCI, atm1 every VCI.
NOW_QUERIES = {
    "frame1": ("frame", "SELECT count(*), sum(length), 0 FROM fr"),
    "frame4": ("frame", "SELECT count(*), sum(length), 0 FROM fr WHERE channel = 7 AND interface = 3 "
                        "AND msg_type = 1"),
    "frame6": ("frame", "SELECT sum(c), sum(s), count(*) FROM (SELECT interface, channel, count(*) AS c, "
                        "sum(length) AS s FROM fr WHERE msg_type = 1 GROUP BY interface, channel)"),
    "atm3": ("atm", "SELECT count(*), 0, 0 FROM atm WHERE ((hdr >> 4) & 65535) = 40"),
    "atm1": ("atm", "SELECT sum(c), 0, count(*) FROM (SELECT (hdr >> 4) & 65535 AS vci, count(*) AS c "
                    "FROM atm GROUP BY vci)"),
}
NOW_VCIS = 12          # §2.1: a dozen virtual circuits; the lab's generator numbers them from 32
NOW_BUFFER_BYTES = 1 << 20

#: The hand-coded scanner: the five queries over the lab's record layouts, one buffer or two (a reader
#: thread fills one while the main thread works on the other), through the page cache or with O_DIRECT.
SCANNER_C = r"""#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PRE 8192                  /* room before each buffer for a record split across two reads */
#define FR_HEAD 16

typedef struct { unsigned char *data; ssize_t n; int full; } slot;

static int fd;
static size_t bufsize;
static slot slots[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint64_t records, matched, total, groups[65536], sums[65536];
static FILE *extract;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static void usage(double *u, double *s)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    *u = r.ru_utime.tv_sec + 1e-6 * r.ru_utime.tv_usec;
    *s = r.ru_stime.tv_sec + 1e-6 * r.ru_stime.tv_usec;
}

/* Fill a buffer: the whole buffer, or what is left of the file. */
static ssize_t fill(unsigned char *buf)
{
    size_t got = 0;
    while (got < bufsize) {
        ssize_t n = read(fd, buf + got, bufsize - got);
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Each query walks the complete records in [p, p + len) and returns the bytes it used. */
static size_t frame1(const unsigned char *p, size_t len)
{
    size_t pos = 0;
    while (pos + FR_HEAD <= len && pos + FR_HEAD + u16(p + pos + 8) <= len) {
        unsigned l = u16(p + pos + 8);
        records++; matched++; total += l;
        pos += FR_HEAD + l;
    }
    return pos;
}

static size_t frame4(const unsigned char *p, size_t len)
{
    size_t pos = 0;
    while (pos + FR_HEAD <= len && pos + FR_HEAD + u16(p + pos + 8) <= len) {
        const unsigned char *h = p + pos;
        unsigned l = u16(h + 8);
        records++;
        if (h[12] == 7 && h[11] == 3 && h[10] == 1) { matched++; total += l; }   /* most selective first */
        pos += FR_HEAD + l;
    }
    return pos;
}

static size_t frame6(const unsigned char *p, size_t len)
{
    size_t pos = 0;
    while (pos + FR_HEAD <= len && pos + FR_HEAD + u16(p + pos + 8) <= len) {
        const unsigned char *h = p + pos;
        unsigned l = u16(h + 8);
        records++;
        if (h[10] == 1) { unsigned g = (unsigned)h[11] * 256u + h[12]; groups[g]++; sums[g] += l; }
        pos += FR_HEAD + l;
    }
    return pos;
}

static size_t extract_headers(const unsigned char *p, size_t len)
{
    size_t pos = 0;
    while (pos + FR_HEAD <= len && pos + FR_HEAD + u16(p + pos + 8) <= len) {
        fwrite(p + pos, FR_HEAD, 1, extract);
        records++;
        pos += FR_HEAD + u16(p + pos + 8);
    }
    return pos;
}

static unsigned vci(const unsigned char *r) { return (unsigned)(r[9] & 0x0F) << 12 | (unsigned)r[10] << 4 | r[11] >> 4; }

static size_t atm3(const unsigned char *p, size_t len)
{
    size_t n = len / 64;
    for (size_t i = 0; i < n; i++) if (vci(p + 64 * i) == 40) matched++;
    records += n;
    return 64 * n;
}

static size_t atm1(const unsigned char *p, size_t len)
{
    size_t n = len / 64;
    for (size_t i = 0; i < n; i++) groups[vci(p + 64 * i)]++;
    records += n;
    return 64 * n;
}

static void *reader(void *arg)
{
    (void)arg;
    for (unsigned i = 0;; i++) {
        slot *s = &slots[i % 2];
        pthread_mutex_lock(&mu);
        while (s->full) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        ssize_t n = fill(s->data);
        pthread_mutex_lock(&mu);
        s->n = n; s->full = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        if (n <= 0) return NULL;
    }
}

int main(int argc, char **argv)
{
    if (argc < 7) { fprintf(stderr, "usage: scan file query cache|direct buffers passes bufsize [out]\n"); return 2; }
    const char *path = argv[1], *query = argv[2];
    int direct = strcmp(argv[3], "direct") == 0, nbuf = atoi(argv[4]), passes = atoi(argv[5]);
    bufsize = (size_t)atol(argv[6]);
    size_t (*work)(const unsigned char *, size_t) =
        !strcmp(query, "frame1") ? frame1 : !strcmp(query, "frame4") ? frame4 : !strcmp(query, "frame6") ? frame6 :
        !strcmp(query, "atm3") ? atm3 : !strcmp(query, "atm1") ? atm1 : !strcmp(query, "extract") ? extract_headers : NULL;
    if (work == NULL || (nbuf != 1 && nbuf != 2) || passes < 1 || bufsize % 4096) { fprintf(stderr, "bad arguments\n"); return 2; }
    if (work == extract_headers && (argc < 8 || (extract = fopen(argv[7], "wb")) == NULL)) { fprintf(stderr, "no output\n"); return 2; }
    for (int i = 0; i < 2; i++) {
        unsigned char *mem;
        if (posix_memalign((void **)&mem, 4096, PRE + bufsize)) return 3;
        memset(mem, 0, PRE + bufsize);
        slots[i].data = mem + PRE;
    }
    if (direct) {  /* write back anything still dirty, so O_DIRECT reads the device and nothing else */
        int f = open(path, O_RDONLY);
        if (f < 0 || fsync(f)) { perror("fsync"); return 4; }
        close(f);
    }
    for (int pass = 0; pass < passes; pass++) {
        records = matched = total = 0;
        memset(groups, 0, sizeof groups); memset(sums, 0, sizeof sums);
        fd = open(path, O_RDONLY | (direct ? O_DIRECT : 0));
        if (fd < 0) { perror("open"); return 4; }
        double u0, s0, u1, s1, t0 = now();
        usage(&u0, &s0);
        pthread_t th;
        if (nbuf == 2) pthread_create(&th, NULL, reader, NULL);
        size_t carry = 0;
        for (unsigned i = 0;; i++) {
            slot *s = &slots[nbuf == 2 ? i % 2 : 0];
            if (nbuf == 2) {
                pthread_mutex_lock(&mu);
                while (!s->full) pthread_cond_wait(&cv, &mu);
                pthread_mutex_unlock(&mu);
            } else {
                s->n = fill(s->data);
            }
            if (s->n < 0) { perror("read"); return 4; }
            if (s->n == 0) break;
            unsigned char *start = s->data - carry;
            size_t len = carry + (size_t)s->n, used = work(start, len);
            carry = len - used;
            if (carry > PRE) { fprintf(stderr, "a record longer than %d bytes\n", PRE); return 5; }
            slot *next = &slots[nbuf == 2 ? (i + 1) % 2 : 0];
            memmove(next->data - carry, start + used, carry);
            if (nbuf == 2) {
                pthread_mutex_lock(&mu);
                s->full = 0;
                pthread_cond_broadcast(&cv);
                pthread_mutex_unlock(&mu);
            }
        }
        if (nbuf == 2) {
            pthread_join(th, NULL);
            slots[0].full = slots[1].full = 0;
        }
        double t1 = now();
        usage(&u1, &s1);
        close(fd);
        uint64_t ngroups = 0;
        for (unsigned g = 0; g < 65536; g++) if (groups[g]) { ngroups++; matched += groups[g]; total += sums[g]; }
        if (carry) { fprintf(stderr, "the file ends inside a record\n"); return 5; }
        printf("pass %d %llu %llu %llu %llu %.9f %.6f %.6f\n", pass, (unsigned long long)records,
               (unsigned long long)matched, (unsigned long long)total, (unsigned long long)ngroups,
               t1 - t0, u1 - u0, s1 - s0);
        fflush(stdout);
    }
    if (extract) fclose(extract);
    return 0;
}
"""

#: DuckDB's side, run as its own Python process: load the record files' fields into a database file,
#: then run each query warm (the database cached) and cold (its file evicted from the page cache with
#: posix_fadvise, a fresh connection). One thread, as the C scanner's query runs on one.
DUCKDB_PY = r'''
import os, resource, sys, time
try:
    import duckdb
    import numpy as np
    import pandas as pd
except ImportError as e:
    print("error", str(e).replace(" ", "_")); sys.exit(0)
atm_path, fr_headers, db, passes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
queries = [q.split("=", 1) for q in sys.argv[5:]]


def usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def timed(fn):
    u0, s0 = usage(); t0 = time.perf_counter()
    out = fn()
    t = time.perf_counter() - t0; u1, s1 = usage()
    return out, (t, u1 - u0, s1 - s0)


def connect():
    con = duckdb.connect(db)
    con.execute("SET threads=1")
    return con


def evict():
    fd = os.open(db, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


for p in (db, db + ".wal"):
    if os.path.exists(p):
        os.remove(p)
con = connect()


def load_atm():
    a = np.fromfile(atm_path, dtype=np.dtype([("ts", "<u8"), ("hdr", ">u4"), ("rest", "V52")]))
    frame = pd.DataFrame({"ts": a["ts"], "hdr": a["hdr"].astype(np.uint32)})
    con.register("atm_frame", frame)
    con.execute("CREATE TABLE atm AS SELECT * FROM atm_frame")
    con.unregister("atm_frame")
    return len(frame)


def load_fr():
    h = np.fromfile(fr_headers, dtype=np.dtype([("ts", "<u8"), ("length", "<u2"), ("msg_type", "u1"),
                                                ("interface", "u1"), ("channel", "u1"), ("protocol", "u1"),
                                                ("pad", "V2")]))
    frame = pd.DataFrame({k: h[k] for k in ("ts", "length", "msg_type", "interface", "channel", "protocol")})
    con.register("fr_frame", frame)
    con.execute("CREATE TABLE fr AS SELECT * FROM fr_frame")
    con.unregister("fr_frame")
    return len(frame)


for table, fn in (("atm", load_atm), ("fr", load_fr)):
    n, (t, u, s) = timed(fn)
    print("load", table, n, t, u, s)
_, (t, u, s) = timed(lambda: con.execute("CHECKPOINT"))
print("load", "checkpoint", 0, t, u, s)
con.close()
print("size", os.path.getsize(db))
con = connect()
for name, sql in queries:
    con.execute(sql).fetchall()  # warm: DuckDB's buffers and the page cache hold the table
    for i in range(passes):
        out, (t, u, s) = timed(lambda: con.execute(sql).fetchone())
        print("run", name, "warm", t, u, s, *[int(x or 0) for x in out])
con.close()
for name, sql in queries:
    for i in range(passes):
        evict()
        con = connect()
        out, (t, u, s) = timed(lambda: con.execute(sql).fetchone())
        con.close()
        print("run", name, "cold", t, u, s, *[int(x or 0) for x in out])
'''


def _workdir():
    d = cache_dir() / "atc98_sullivan"
    d.mkdir(parents=True, exist_ok=True)
    return d


def record_files(file_bytes: int, *, rng=0) -> dict:
    """The ATM and frame-relay record files of about ``file_bytes`` each (pysim.workloads.records),
    written once per size and seed and kept: {'atm': path, 'frame': path}."""
    if file_bytes < 1 << 16:
        raise ValueError(f"file_bytes must be >= 65536, got {file_bytes!r}")
    seed = rng if isinstance(rng, int) else 0
    out = {}
    for kind in ("atm", "frame"):
        path = _workdir() / f"{kind}-{file_bytes}-{seed}.bin"
        if not path.exists():
            data = (records.atm_records(file_bytes // 64, vcis=NOW_VCIS, rng=seed) if kind == "atm"
                    else records.frame_relay_records(file_bytes, mean_bytes=290.0, rng=seed))
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        out[kind] = path
    return out


def _digest(text: str) -> str:
    """A stable short digest (FNV-1a, 64 bits): names the build by its source."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def build_scanner() -> tuple:
    """(path of the compiled hand-coded scanner, "") or (None, why not)."""
    digest = _digest(SCANNER_C)
    exe = _workdir() / f"scan-{digest}"
    if exe.exists():
        return exe, ""
    src = exe.with_suffix(".c")
    src.write_text(SCANNER_C)
    r = run_command(["gcc", "-O2", "-std=c99", "-pthread", "-o", exe, src], timeout_s=120.0)
    if not r.available:
        return None, r.reason
    if r.returncode != 0:
        return None, f"gcc failed: {r.stderr.strip()[-400:]}"
    return exe, ""


def _parse_passes(text: str) -> list:
    """The scanner's 'pass' lines: (records, matched, total, groups, elapsed_s, user_s, system_s)."""
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) == 9 and w[0] == "pass":
            out.append((*(int(x) for x in w[2:6]), *(float(x) for x in w[6:9])))
    return out


def _row(data, query, system, mode, nbytes, runs, note="", n_records=None) -> dict:
    """One measured configuration from its passes: the fastest pass (a shared machine only slows a scan).
    ``n_records`` gives the records scanned where the program does not count them (DuckDB)."""
    base = {"data": data, "query": query, "system": system, "mode": mode}
    if not runs:
        return {**base, "available": False, "note": note or "no run"}
    best = min(runs, key=lambda r: r[4])
    records_, matched, total, groups, t, u, s = best
    records_ = n_records if n_records is not None else records_
    return {**base, "available": True, "mb_per_s": nbytes / t / MB, "records_per_s": records_ / t if records_ else np.nan,
            "cpu_pct": 100.0 * (u + s) / t, "user_pct": 100.0 * u / t, "system_pct": 100.0 * s / t,
            "user_ns_per_record": 1e9 * u / records_ if records_ else np.nan, "records": records_,
            "matched": matched, "total": total, "groups": groups, "passes": len(runs), "note": note}


#: The configurations measured for every query: (mode label, scanner's read mode, buffers).
SCAN_MODES = (("page cache, one buffer", "cache", 1), ("O_DIRECT, one buffer", "direct", 1),
              ("O_DIRECT, two buffers", "direct", 2))


def _configs(exe, files: dict) -> dict:
    """Every measured configuration: (data, query, system, mode) -> the command of one pass."""
    out = {}
    for data in ("frame", "atm"):
        for mode, flags in (("page cache, one buffer", []), ("O_DIRECT, one buffer", ["iflag=direct"])):
            out[(data, "dd", "dd", mode)] = ["dd", f"if={files[data]}", "of=/dev/null", "bs=1M", *flags]
    if exe is not None:
        for query, (data, _) in NOW_QUERIES.items():
            for mode, how, buffers in SCAN_MODES:
                out[(data, query, "hand-coded C", mode)] = [exe, files[data], query, how, buffers, 1,
                                                            NOW_BUFFER_BYTES]
    return out


def _one_pass(argv) -> tuple:
    """Run one pass; (records, matched, total, groups, elapsed_s, user_s, system_s), or (None, why)."""
    r = run_command(argv, env={"LC_ALL": "C"}, timeout_s=300.0)
    if not r.available or r.returncode != 0:
        return None, f"not available: {r.reason or r.stderr.strip()[-200:]}"
    if argv[0] == "dd":  # dd's own seconds; its CPU time (from wait4) scaled to them
        try:
            t = _dd_seconds(r.stderr)
        except ValueError as e:
            return None, f"not available: {e}"
        return (0, 0, 0, 0, t, r.user_s * t / r.elapsed_s, r.system_s * t / r.elapsed_s), ""
    passes = _parse_passes(r.stdout)
    return (passes[0], "") if passes else (None, "not available: the scanner printed no pass")


def _measured_rounds(configs: dict, sizes: dict, rounds: int, device_rounds: int) -> list:
    """Every configuration once per round, each round starting one further on, so that a change in the
    machine's load hits every configuration alike; the page cache is filled first. The scans from the
    device (O_DIRECT) take ten times as long as those through the page cache, so they stop after
    ``device_rounds``."""
    for key, argv in configs.items():
        if key[1] == "dd" and key[3].startswith("page cache"):
            _one_pass(argv)
    keys, runs, why = list(configs), {k: [] for k in configs}, {}
    for r in range(rounds):
        shift = r % len(keys)
        for key in keys[shift:] + keys[:shift]:
            if r >= device_rounds and key[3].startswith("O_DIRECT"):
                continue
            result, note = _one_pass(configs[key])
            if result is None:
                why[key] = note
            else:
                runs[key].append(result)
    return [_row(*key, sizes[key[0]], runs[key], why.get(key, "")) for key in keys]


def _dd_seconds(stderr: str) -> float:
    """The seconds dd reports on its last line ('N bytes ... copied, S s, R MB/s')."""
    for line in reversed(stderr.splitlines()):
        if " copied, " in line:
            return float(line.split(" copied, ")[1].split()[0])
    raise ValueError(f"no dd summary in {stderr[-200:]!r}")


def _duckdb_runs(python, exe, files: dict, sizes: dict, quick: bool) -> list:
    """Load the records into DuckDB (the frame-relay headers extracted by the C scanner first) and run
    the queries warm and cold; rows for the loads and the runs."""
    if python is None:
        return [{"data": "both", "query": "load", "system": "DuckDB", "mode": "load", "available": False,
                 "note": "not available: no Python interpreter given to run DuckDB"}]
    work = _workdir()
    headers, script, db = work / "fr-headers.bin", work / "duckdb_scan.py", work / "tribeca_now.duckdb"
    script.write_text(DUCKDB_PY)
    rows = []
    if exe is not None:
        r = run_command([exe, files["frame"], "extract", "cache", 1, 1, NOW_BUFFER_BYTES, headers], timeout_s=300.0)
        runs = _parse_passes(r.stdout) if r.available else []
        rows.append(_row("frame", "extract headers", "hand-coded C", "load", sizes["frame"], runs))
    else:
        return [{"data": "both", "query": "load", "system": "DuckDB", "mode": "load", "available": False,
                 "note": "not available: the frame-relay headers need the C scanner"}]
    queries = [f"{name}={sql}" for name, (_, sql) in NOW_QUERIES.items()]
    r = run_command([python, script, files["atm"], headers, db, 2 if quick else 3, *queries], timeout_s=600.0)
    if not r.available or r.returncode != 0 or r.stdout.startswith("error"):
        why = r.reason or r.stdout.strip()[6:].replace("_", " ") or r.stderr.strip()[-300:]
        return rows + [{"data": "both", "query": "load", "system": "DuckDB", "mode": "load", "available": False,
                        "note": f"not available: {why}"}]
    runs, size, loaded = {}, np.nan, {}
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] == "load":
            loaded[{"atm": "atm", "fr": "frame"}.get(w[1], "both")] = int(w[2])
            t, u, s = (float(x) for x in w[3:6])
            data = {"atm": "atm", "fr": "frame"}.get(w[1], "both")
            rows.append({"data": data, "query": f"load {w[1]}", "system": "DuckDB", "mode": "load",
                         "available": True, "seconds": t, "records": int(w[2]), "cpu_pct": 100 * (u + s) / t,
                         "user_pct": 100 * u / t, "system_pct": 100 * s / t})
        elif w[0] == "size":
            size = float(w[1])
        elif w[0] == "run":
            t, u, s = (float(x) for x in w[3:6])
            matched, total, groups = (int(x) for x in w[6:9])
            runs.setdefault((w[1], w[2]), []).append((0, matched, total, groups, t, u, s))
    for (name, mode), rs in runs.items():
        data = NOW_QUERIES[name][0]
        rows.append(_row(data, name, "DuckDB", f"{mode} cache", sizes[data], rs, n_records=loaded.get(data)))
    rows.append({"data": "both", "query": "database file", "system": "DuckDB", "mode": "load", "available": True,
                 "bytes_on_disk": size, "note": "the records' header fields only, columnar and compressed"})
    return rows


def _verify(files: dict, runs: pd.DataFrame, quick: bool) -> str:
    """Check the C scanner's frame1 against the lab's reference parser (records, frame bytes)."""
    data = files["frame"].read_bytes()
    ref = records.frame_relay_summary(data)
    c = runs[(runs["query"] == "frame1") & (runs["system"] == "hand-coded C") & runs["available"]]
    if c.empty:
        return "not checked: no C frame1 run"
    ok = bool((c["records"] == ref["records"]).all() and (c["total"] == ref["frame_bytes"]).all())
    return (f"frame1 agrees with pysim.workloads.records.frame_relay_summary ({ref['records']} records)" if ok
            else f"frame1 DISAGREES with the reference parser ({ref['records']} records, {ref['frame_bytes']} bytes)")


@functools.lru_cache(maxsize=4)
@exclusive()
def measure_now(*, quick: bool = False, python: str | None = None, rng=0) -> pd.DataFrame:
    """The scans run for real on this machine.

    Record files of the paper's shapes (64-byte ATM cells on a dozen VCIs; frame-relay records of mean
    290 bytes) and the paper's size (260 MB each; 16 MB in the quick profile), from
    :mod:`pysim.workloads.records`. Each query (:data:`NOW_QUERIES`) runs in a hand-coded C scanner
    compiled here (1 MB buffers: one, or two with a reader thread), through the page cache and with
    O_DIRECT; ``dd bs=1M`` reads the same files; the scanner's and dd's configurations run in interleaved
    rounds, one pass each (:func:`_measured_rounds`: seven through the page cache and five from the device; five and
    three in the quick profile). DuckDB (in ``python``'s environment, one
    thread) loads the records' fields and runs the same queries warm and with its file evicted from the
    page cache. Every configuration's fastest pass is kept (a shared machine only slows a scan).

    Index: running number. Columns: data, query, system, mode, available, mb_per_s (of the record file,
    MB = 10^6 bytes), records_per_s, cpu_pct, user_pct, system_pct, user_ns_per_record, records, matched,
    total, groups, passes, seconds (loads), bytes_on_disk, note. ``attrs['check']`` says whether the C
    scanner agrees with the lab's reference parser, ``attrs['agree']`` whether DuckDB and C agree.
    """
    size = 16 * MB if quick else Params().file_bytes
    files = record_files(size, rng=rng)
    sizes = {k: files[k].stat().st_size for k in files}
    exe, why = build_scanner()
    rows = _measured_rounds(_configs(exe, files), sizes, 5 if quick else 7, 3 if quick else 5)
    if exe is None:
        rows += [{"data": "both", "query": "scanner", "system": "hand-coded C", "mode": "build", "available": False,
                  "note": f"not available: {why}"}]
    rows += _duckdb_runs(python, exe, files, sizes, quick)
    df = pd.DataFrame(rows)
    for col in ("mb_per_s", "records_per_s", "cpu_pct", "seconds", "bytes_on_disk", "matched", "total", "groups"):
        if col not in df:
            df[col] = np.nan
    df.attrs["check"] = _verify(files, df, quick)
    df.attrs["agree"] = _agreement(df)
    df.attrs["file_bytes"] = sizes
    return df


def _agreement(df: pd.DataFrame) -> str:
    """Whether DuckDB's answers equal the C scanner's, query by query."""
    ok = []
    for name in NOW_QUERIES:
        sel = df[(df["query"] == name) & df["available"]]
        answers = {tuple(int(v) for v in r) for r in sel[["matched", "total", "groups"]].itertuples(index=False)
                   if np.isfinite(list(r)).all()}
        ok.append(len(answers) <= 1)
    return "DuckDB and the C scanner give the same answers" if all(ok) else "DuckDB and the C scanner DISAGREE"


def then_and_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """1998 (the model of the SPARCstation 10 and its disk) beside this machine, query by query.

    Index: (query, quantity). Columns: then (the model), now_c (the hand-coded scanner), now_duckdb.
    Quantities (MB = 10^6 bytes of the record file):

    * 'MB/s': from the disk then; through the page cache now (DuckDB: its tables cached);
    * 'MB/s from the device': O_DIRECT with two buffers now (DuckDB: its file evicted from the page cache);
    * 'share of dd (%)', 'share of dd from the device (%)': the scan's speed over dd's on the same path;
    * 'two buffers over one': Tribeca double-buffered over single-buffered then; the scanner's two
      buffers over one with O_DIRECT now;
    * 'CPU busy from the device (%)': Tribeca's share of the CPU on the disk then; the scanner's with
      O_DIRECT and one buffer now;
    * 'time per record (ns)': the whole scan's time over its records (page cache now);
    * 'query work per record (ns)': the model's work per record then; now the scan's time per record less
      dd's time for the same bytes through the page cache;
    * 'engine over hand-coded': Tribeca's speed over the stand-alone program's then, DuckDB's over the C
      scanner's now;
    * 'load over one query': DuckDB's load (the headers extracted, inserted, checkpointed) over one warm
      query (Tribeca needs no load: it parses the records as it reads them, §3.1).
    """
    p = params or Params()
    t1 = table1(p, quick=True)
    single = table1(dataclasses.replace(p, tribeca_double_buffered=False), quick=True)
    ok = measured[measured["available"].astype(bool)]

    def pick(query, system, mode, col, data=None):
        sel = ok[(ok["query"] == query) & (ok["system"] == system) & (ok["mode"] == mode)]
        if data is not None:
            sel = sel[sel["data"] == data]
        return float(sel[col].iloc[0]) if len(sel) else np.nan

    load_s = {data: ok[(ok["system"] != "dd") & (ok["mode"] == "load") & (ok["data"].isin([data, "both"]))]
              ["seconds"].fillna(0).sum() for data in ("frame", "atm")}
    extract = pick("extract headers", "hand-coded C", "load", "mb_per_s")
    load_s["frame"] += measured.attrs.get("file_bytes", {}).get("frame", 0) / MB / extract if extract > 0 else 0
    rows = []
    for name, (data, _) in NOW_QUERIES.items():
        dd_cache = pick("dd", "dd", "page cache, one buffer", "mb_per_s", data)
        dd_direct = pick("dd", "dd", "O_DIRECT, one buffer", "mb_per_s", data)
        c = {k: pick(name, "hand-coded C", k, "mb_per_s") for k in
             ("page cache, one buffer", "O_DIRECT, one buffer", "O_DIRECT, two buffers")}
        c_rate = pick(name, "hand-coded C", "page cache, one buffer", "records_per_s")
        d_warm, d_cold = pick(name, "DuckDB", "warm cache", "mb_per_s"), pick(name, "DuckDB", "cold cache", "mb_per_s")
        d_rate = pick(name, "DuckDB", "warm cache", "records_per_s")
        record_bytes = 1e6 * c["page cache, one buffer"] / c_rate if c_rate > 0 else np.nan
        then_mb, then_rate = t1.loc[name, "kbytes_per_s"] * KB / MB, t1.loc[name, "records_per_s"]
        engine = _run(p, "tribeca", name, "disk", True)["kbytes_per_s"] / _run(p, "standalone", name, "disk",
                                                                               True)["kbytes_per_s"]
        rows += [
            (name, "MB/s", then_mb, c["page cache, one buffer"], d_warm),
            (name, "MB/s from the device", then_mb, c["O_DIRECT, two buffers"], d_cold),
            (name, "share of dd (%)", 100.0 - t1.loc[name, "slower_than_dd_pct"],
             100.0 * c["page cache, one buffer"] / dd_cache, 100.0 * d_warm / dd_cache),
            (name, "share of dd from the device (%)", 100.0 - t1.loc[name, "slower_than_dd_pct"],
             100.0 * c["O_DIRECT, two buffers"] / dd_direct, 100.0 * d_cold / dd_direct),
            (name, "two buffers over one", t1.loc[name, "kbytes_per_s"] / single.loc[name, "kbytes_per_s"],
             c["O_DIRECT, two buffers"] / c["O_DIRECT, one buffer"], np.nan),
            (name, "CPU busy from the device (%)", t1.loc[name, "cpu_pct"],
             pick(name, "hand-coded C", "O_DIRECT, one buffer", "cpu_pct"), pick(name, "DuckDB", "cold cache", "cpu_pct")),
            (name, "time per record (ns)", 1e9 / then_rate, 1e9 / c_rate, 1e9 / d_rate),
            (name, "query work per record (ns)", 1e3 * record_us(p, name),
             1e9 / c_rate - 1e3 * record_bytes / dd_cache, np.nan),
            (name, "engine over hand-coded", engine, 1.0, d_warm / c["page cache, one buffer"]),
            (name, "load over one query", np.nan, np.nan,
             load_s[data] / (measured.attrs.get("file_bytes", {}).get(data, 0) / MB / d_warm) if d_warm > 0 else np.nan),
        ]
    df = pd.DataFrame(rows, columns=["query", "quantity", "then", "now_c", "now_duckdb"])
    return df.set_index(["query", "quantity"])
