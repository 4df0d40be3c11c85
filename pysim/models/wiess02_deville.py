"""Building an "impossible" verifier on a Java Card (Deville & Grimaud, WIESS 2002).

Regenerates Figure 1 (the non-stressing type encoding), Table 4's one
surviving relation (an erase is 38% slower than a write), the hardware and
deployment constants of §4 and §6 (``card``), §5.1's stack-map memory
(``memory``) and the mechanism of §5.2-§5.4 and §6.1 as an experiment on real
bytecode (``cache``, ``workload``): a stand-alone verifier whose stack maps live
in EEPROM under a small RAM cache.

First principles:

* **The encoding** (:func:`and_encoding`): one bit per kind of value below Top
  and, under the reference kind, one bit per kind of reference; Null has every
  reference bit set. Moving up the lattice only clears bits, so unification is
  a bitwise AND and writing a unified type over the old one only programs
  (1 -> 0) EEPROM cells. Figure 1 is this rule applied to Java Card's kinds
  (:data:`JAVACARD_KINDS`, :data:`JAVACARD_REFS`); the JDK's bytecode uses the
  same rule over the JVM's kinds (floats, longs, doubles and their arrays
  added). The lattice it must realise is given independently as a Hasse
  diagram (:data:`JAVACARD_PARENT`), so ``figure1`` checks that the printed
  codes are the lattice, pair by pair.
* **The verifier** (:class:`CardVerifier`): §2's algorithm (Kildall's
  worklist) with a stack map at every label (branch target, handler, entry)
  only, as §5.1 sizes it, or at every instruction (§2's textbook form, the
  counterfactual). The abstract interpretation of each instruction and the
  merge of two types are the lab's (:mod:`pysim.jvm.verify`), so the fixed
  point is the one the lab's verifier reaches (a test checks it). The order
  in which changed labels are taken is a heuristic (§6.1): lowest offset first.
* **The card's memory** (:class:`MapStore`): the maps of the method in
  :class:`pysim.hw.flash.NvPages` (EEPROM, 64-byte pages, erased to all ones =
  "not visited yet"), the current frame and a cache of maps in RAM. Policies
  (§6.1): all in RAM when the method fits, LRU, an "evolved" LRU that evicts
  clean maps first, and the control-flow-graph policy of §5.4, which evicts
  maps that no queued label can reach first and drops those without writing
  them back. A changed map is written back only when evicted; maps still in
  RAM at the end of a method are dropped.

Workload: methods of the JDK's java.base (``pysim.jvm.corpus``), no longer than
the largest applet of §6.2. The paper's applets are lost.

Not reproduced: Tables 2, 3, 5 and 6 (their numbers are lost in the text;
see paper.yaml). Absolute times rest on assumed card costs (no cell of the
paper is fitted), so the model compares policies and encodings, not
milliseconds.

Then vs now: ``workload`` and ``cache`` are the experiment on today's bytecode (HotSpot's own
verifier is not timed yet).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.hw.flash import NvPages, NvTiming
from pysim.jvm import ClassFile, Hierarchy, VerifyError, corpus
from pysim.jvm import opcodes as O
from pysim.jvm.code import _size, branch_targets
from pysim.jvm.verify import _STORE, _WIDE, TOP, _layout, _Run
from pysim.models import Counterfactual, Inputs, cells
from pysim.params import ModelParams, assumed, derived, given, stated
from pysim.rng import make_rng
from pysim.units import KiB

# --- Figure 1: the encoding --------------------------------------------------------------------------

#: Java Card's kinds of value below Top, one bit each from the lowest (Figure 1, left to right).
JAVACARD_KINDS = ("Int", "short", "ReturnAddress", "Object", "Uref")
#: Kinds of reference below Object, one bit each from the lowest (Figure 1).
JAVACARD_REFS = ("RefArray", "RefDerived", "Boolarray", "Bytearray", "Shortarray", "Intarray")
#: Figure 1 as a Hasse diagram (each type's parent), independent of the bit codes.
JAVACARD_PARENT = {"Top": None, "Int": "Top", "short": "Top", "ReturnAddress": "Top", "Object": "Top",
                   "Uref": "Top", **{r: "Object" for r in JAVACARD_REFS}, "Null": JAVACARD_REFS}
#: The JVM's kinds for the JDK's bytecode, by the same rule (Java Card has no float, long or double).
JVM_KINDS = ("int", "float", "long", "double", "object", "uninit")
JVM_REFS = ("refarray", "derived", "[Z", "[B", "[S", "[I", "[C", "[F", "[J", "[D")


def and_encoding(kinds, refs, ref_kind: str):
    """Codes by the paper's rule: {type: (kind_bits, ref_bits)}; Top is 0, Null has every ref bit."""
    codes = {"Top": (0, 0)}
    for i, k in enumerate(kinds):
        codes[k] = (1 << i, 0)
    ref = codes[ref_kind][0]
    for j, r in enumerate(refs):
        codes[r] = (ref, 1 << j)
    codes["Null"] = (ref, (1 << len(refs)) - 1)
    return codes


def dense_encoding(kinds, refs, ref_kind: str):
    """The counterfactual: types numbered one after the other, as a table-driven verifier stores them."""
    names = ["Top", *kinds, *refs, "Null"]
    return {n: (i, 0) for i, n in enumerate(names)}


def lattice_lub(a: str, b: str, parent=None) -> str:
    """The least upper bound in a Hasse diagram (Null's parents are every reference kind)."""
    parent = parent or JAVACARD_PARENT

    def ups(t):
        out, todo = [], [t]
        while todo:
            x = todo.pop(0)
            if x in out:
                continue
            out.append(x)
            p = parent[x]
            todo.extend([p] if isinstance(p, str) else list(p or ()))
        return out

    ua, ub = ups(a), set(ups(b))
    common = [x for x in ua if x in ub]
    # the least: the common ancestor every other common ancestor is above
    return next(x for x in common if all(y in ups(x) for y in common))


# --- parameters ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes, times in seconds."""

    # the card (§4, §6.1)
    eeprom_kb: int = given(32, "§6.1: 32 KB of persistent memory")
    rom_kb: int = given(32, "§6.1: 32 KB of ROM")
    ram_max_bytes: int = given(768, "§6.1: a maximum of 768 bytes of RAM")
    ram_enough_bytes: int = given(512, "§6.1: less than 512 bytes of RAM does not alter the efficiency")
    erase_over_write: float = given(1.38, "§4: an erase is 38% slower than a write (Table 4)")
    eeprom_over_ram: int = given(10000, "§4: writing persistent memory is up to 10000 times slower than RAM")
    serial_baud: int = given(9600, "§4: a half-duplex serial line from 9600 baud")
    verifier_code_kb: int = given(30, "§6.1: 30 KB of code for the stand-alone verifier")
    jcvm_code_kb: int = given(20, "§6.1: a standard JCVM is 20 KB of code")
    huge_applet_kb: int = given(13, "§6.1: a huge user application is about 13 KB")
    rsa_ms_per_64b: int = given(10, "§6.2: an RSA in something like 10 ms per 64 bytes")
    page_bytes: int = stated(64, "Table 4: the time for writing a 64 bytes page")
    write_page_s: float = assumed(2e-3, "Table 4's times are lost; 2002 smart-card EEPROMs (Atmel AT90SC) "
                                        "program a 64-byte page in about 2 ms")
    read_byte_s: float = assumed(1e-7, "EEPROM reads at about the speed of RAM: a cycle or two at a few MHz")
    clock_hz: float = assumed(3.57e6, "the clock is not stated; ISO 7816 readers clock cards at 3.57 MHz")
    cycles_per_insn: float = assumed(400.0, "abstract execution of one bytecode on an 8/16-bit AVR: decode, "
                                            "pop and check a few 2-byte types, push the result")
    cycles_per_slot_merge: float = assumed(12.0, "one slot of a merge: load two 2-byte codes, AND, compare")
    type_bytes: int = assumed(3, "T of §5.1: Figure 1's 11 bits in 2 bytes, and 1 byte naming the class of a "
                                 "reference or the offset of a new (classes are outside the encoding, §5.3)",
                              ge=2)
    # the workload
    modules: tuple = assumed(("java.base",), "the JDK's core classes stand in for the lost applets")
    every: int = assumed(20, "every 20th class of the module (a few thousand methods)", ge=1)
    quick_every: int = assumed(300, "the quick profile's sample", ge=1)
    max_code_bytes: int = assumed(4608, "§6.2's applets are 3 to 4.5 KB, so none holds a longer method", ge=1)
    ram_sizes: tuple = derived(tuple(range(128, 7 * 128, 128)), "128-byte steps up to §6.1's maximum "
                                                                "(ram_max_bytes), from Table 3's smallest RAM")
    # the mechanisms
    encoding: str = stated("and", "§5.3 and Figure 1: unification is a bitwise AND", choices=("and", "dense"))
    cache: bool = stated(True, "§5.2: RAM used as a cache of the maps in persistent memory")
    cfg_guided: bool = stated(True, "§5.4: the control-flow graph pilots eviction; dead labels are not written")
    maps_at: str = stated("labels", "§5.1: a map per branch target or handler, plus the current frame",
                          choices=("labels", "instructions"))

    def __post_init__(self):
        super().__post_init__()
        if not self.ram_sizes or any(int(r) != r or r < 0 for r in self.ram_sizes):
            raise ValueError(f"ram_sizes must be non-negative whole bytes, got {self.ram_sizes!r}")
        if not self.modules or not all(isinstance(m, str) for m in self.modules):
            raise ValueError(f"modules must name JDK modules, got {self.modules!r}")


INPUTS = (
    Inputs(("eeprom_kb", "rom_kb", "ram_max_bytes", "ram_enough_bytes", "eeprom_over_ram", "serial_baud",
            "verifier_code_kb", "jcvm_code_kb", "huge_applet_kb", "rsa_ms_per_64b"),
           cells("card", ["eeprom_kb", "rom_kb", "ram_max_bytes", "ram_enough_bytes", "eeprom_over_ram",
                          "serial_baud", "verifier_code_kb", "jcvm_code_kb", "huge_applet_kb",
                          "rsa_ms_per_64b"], ["value"]),
           "the hardware and product constants of §4 and §6, taken as given"),
    Inputs(("erase_over_write",), cells("table4", ["erase"], ["vs_write"]), "§4's 38%, taken as given"),
    Inputs((), cells("figure1", ["Top", "Int", "short", "ReturnAddress", "Object", "Uref", *JAVACARD_REFS,
                                 "Null"], ["kind_bits", "ref_bits"]),
           "the codes follow from Figure 1's rule (one bit per kind, Null every reference bit) and its order"),
)

COUNTERFACTUALS = (
    Counterfactual("dense-encoding", {"encoding": "dense"}, "types numbered densely, as a verifier on a PC "
                                                            "stores them: a unification may set bits"),
    Counterfactual("no-cache", {"cache": False}, "RAM holds the current frame only; every changed map is "
                                                 "written through to EEPROM"),
    Counterfactual("no-cfg", {"cfg_guided": False}, "the CFG policy without the graph: plain LRU with "
                                                    "write-back of every changed map"),
    Counterfactual("every-instruction", {"maps_at": "instructions"}, "§2's textbook form: a map at every "
                                                                     "instruction"),
)

POLICIES = ("lru", "clean-lru", "cfg")


# --- artifacts: the encoding, the constants ------------------------------------------------------------

def _encoder(params):
    make = and_encoding if params.encoding == "and" else dense_encoding
    return make


def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1: each Java Card type's code (kind bits, reference bits) and, over every partner type,
    the share of pairs whose AND is their least upper bound in the lattice, and the share whose move up
    to that bound needs no erase. Columns: kind_bits, ref_bits, and_is_lub_pct, up_without_erase_pct."""
    p = params or Params()
    codes = _encoder(p)(JAVACARD_KINDS, JAVACARD_REFS, "Object")
    width = len(JAVACARD_REFS)
    full = {t: (k << width) | r for t, (k, r) in codes.items()}
    rows = []
    names = ["Top", *JAVACARD_KINDS, *JAVACARD_REFS, "Null"]
    for a in names:
        ok = up = 0
        for b in names:
            lub = lattice_lub(a, b)
            ok += (full[a] & full[b]) == full[lub]
            up += (full[lub] & ~full[a]) == 0
        rows.append({"type": a, "kind_bits": codes[a][0], "ref_bits": codes[a][1],
                     "and_is_lub_pct": 100.0 * ok / len(names), "up_without_erase_pct": 100.0 * up / len(names)})
    return pd.DataFrame(rows).set_index("type")


def table4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 4: a 64-byte page written and erased (the times are assumed; the ratio is §4's).
    Columns: time_ms, vs_write."""
    p = params or Params()
    w = p.write_page_s * 1e3
    return pd.DataFrame({"time_ms": [w, w * p.erase_over_write], "vs_write": [1.0, p.erase_over_write]},
                        index=pd.Index(["write", "erase"], name="operation"))


def card(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4 and §6's constants, and what follows from them: the serial line's time for 1 KB (8N1), the
    EEPROM's time for a verifier's worth of code. Columns: value."""
    p = params or Params()
    rows = {k: getattr(p, k) for k in ("eeprom_kb", "rom_kb", "ram_max_bytes", "ram_enough_bytes",
                                       "eeprom_over_ram", "serial_baud", "verifier_code_kb", "jcvm_code_kb",
                                       "huge_applet_kb", "rsa_ms_per_64b")}
    rows["serial_s_per_kb"] = KiB * 10 / p.serial_baud  # a start bit, 8 data bits, a stop bit
    rows["eeprom_write_s_per_kb"] = KiB / p.page_bytes * p.write_page_s
    return pd.DataFrame({"value": pd.Series(rows, dtype=float)}).rename_axis("quantity")


# --- the workload -----------------------------------------------------------------------------------

@dataclass
class Method:
    """One method's body, laid out, with its labels and control-flow graph."""

    name: str
    run: object
    insns: list
    pcs: list
    labels: list          # instruction indices holding a map, ascending
    handlers: list        # (start, end, handler index, catch type)
    covering: list        # handlers covering each instruction
    targets: list         # branch targets of each instruction (indices)
    reach: dict           # label -> bitmask of the labels reachable from it (itself included)
    code_bytes: int
    max_locals: int
    max_stack: int


@functools.lru_cache(maxsize=4)
def _hierarchy():
    return Hierarchy.jdk()


@functools.lru_cache(maxsize=8)
def _class_files(modules: tuple, every: int):
    return tuple((name, ClassFile.parse(data)) for name, data in corpus.jdk_classes(list(modules), every=every))


def _method(cf, m, maps_at: str) -> Method | None:
    code = m.code()
    if code is None:
        return None
    run = _Run(code, (cf.name, m.name, m.descriptor, m.access), _hierarchy())
    insns, pcs, index_of = _layout(code)
    n = len(insns)
    if not n:
        return None
    handlers = [(index_of[id(h.start)], index_of[id(h.end)], index_of[id(h.handler)],
                 ("object", code.pool.class_name(h.catch_type)) if h.catch_type else ("object", "java/lang/Throwable"))
                for h in code.handlers]
    targets = {0} | {h[2] for h in handlers}
    succ, branch = [], []
    for k, ins in enumerate(insns):
        ts = [index_of[id(t)] for t in branch_targets(ins.op, ins.args)]
        branch.append(ts)
        targets.update(ts)
        s = set(ts)
        if ins.op not in O.ENDS_BLOCK and k + 1 < n:
            s.add(k + 1)
        s.update(h[2] for h in handlers if h[0] <= k < h[1])
        succ.append(s)
    labels = sorted(range(n) if maps_at == "instructions" else targets)
    bit = {lab: 1 << i for i, lab in enumerate(labels)}
    # the labels reachable from each instruction: a backward fixed point over bitmasks
    reach_at = [bit.get(k, 0) for k in range(n)]
    changed = True
    while changed:
        changed = False
        for k in range(n - 1, -1, -1):
            r = reach_at[k]
            for s in succ[k]:
                r |= reach_at[s]
            if r != reach_at[k]:
                reach_at[k] = r
                changed = True
    reach = {lab: reach_at[lab] for lab in labels}
    size = pcs[-1] + _size(insns[-1], pcs[-1], id(insns[-1]) in code._far, code.pool)
    return Method(f"{cf.name}.{m.name}{m.descriptor}", run, insns, pcs, labels, handlers,
                  [[h for h in handlers if h[0] <= k < h[1]] for k in range(n)], branch, reach, size,
                  code.max_locals, code.max_stack)


def methods(params: Params | None = None, *, quick: bool = False) -> list:
    """The workload: the sampled JDK methods no longer than ``max_code_bytes`` (CorpusUnavailable
    without a JDK)."""
    p = params or Params()
    out = []
    for _, cf in _class_files(tuple(p.modules), p.quick_every if quick else p.every):
        for m in cf.methods:
            meth = _method(cf, m, p.maps_at)
            if meth is not None and meth.code_bytes <= p.max_code_bytes:
                out.append(meth)
    return out


# --- the verifier --------------------------------------------------------------------------------------

class Encoder:
    """Maps as bytes: a TOS byte, then ``type_bytes`` per local and stack slot, each a 2-byte code and a
    class byte (the class of a reference or the offset of a ``new``; 0xff: none), 0xff padding."""

    def __init__(self, encoding: str, type_bytes: int):
        make = and_encoding if encoding == "and" else dense_encoding
        width = len(JVM_REFS) if encoding == "and" else 0
        self.codes = {t: (k << width) | r for t, (k, r) in make(JVM_KINDS, JVM_REFS, "object").items()}
        self.pad = b"\xff" * (type_bytes - 3)
        self.type_bytes = type_bytes

    def slot(self, t, classes: dict, old_side: int = 0xFF) -> bytes:
        side, kind = old_side, t[0]  # a type with no class keeps the byte as it is (no write)
        if kind == "object":
            name = t[1]
            if name == "java/lang/Object":
                key = "object"
            elif name.startswith("["):
                key = name if name in self.codes else "refarray"
                if key == "refarray":
                    side = classes.setdefault(name, len(classes)) & 0xFF
            else:
                key = "derived"
                side = classes.setdefault(name, len(classes)) & 0xFF
        elif kind in ("uninit", "uninit_this"):
            key = "uninit"
            side = (t[1] if kind == "uninit" else 0) & 0xFF
        else:
            key = {"null": "Null", "top": "Top"}.get(kind, kind)
        code = self.codes[key]
        return bytes((code & 0xFF, code >> 8, side)) + self.pad

    def encode(self, locals_, stack, max_locals, max_stack, classes, old: bytes | None = None) -> bytes:
        slots = list(locals_) + list(stack)
        out = bytearray((len(stack),))
        for i, t in enumerate(slots):
            out += self.slot(t, classes, old[1 + i * self.type_bytes + 2] if old else 0xFF)
        out += b"\xff" * (self.type_bytes * (max_locals + max_stack - len(slots)))
        return bytes(out)


@dataclass
class Trace:
    """One method's verification: the map accesses in order, and the work counts."""

    map_bytes: int
    labels: int
    events: list          # ("load", label, queued mask) or ("merge", label, changed, bytes or None, queued mask)
    passes: int
    instructions: int
    slot_merges: int
    class_merges: int     # two different classes unified into one that is not Object
    object_merges: int    # two different classes unified into Object
    frames: dict


def verify_on_card(meth: Method, encoding: str = "and", type_bytes: int = 3) -> Trace:
    """§2's algorithm over ``meth``'s labels, lowest changed label first; the accesses to the maps."""
    run, insns, pcs, n = meth.run, meth.insns, meth.pcs, len(meth.insns)
    is_label = set(meth.labels)
    bit = {lab: 1 << i for i, lab in enumerate(meth.labels)}
    check = run.check
    enc = Encoder(encoding, type_bytes)
    classes, stored = {}, {}
    frames = {0: run.entry_frame()}
    events, queued = [], {0}
    counts = {"passes": 0, "insns": 0, "slots": 0, "class": 0, "object": 0}

    def mask():
        return sum(bit[q] for q in queued)

    def merge_into(k, locals_, stack):
        old = frames.get(k)
        if old is None:
            new = (list(locals_), list(stack))
        else:
            if len(old[1]) != len(stack):
                raise VerifyError(pcs[k], "the stack depths differ")
            counts["slots"] += len(old[0]) + len(old[1])
            for x, y in zip(old[0] + old[1], list(locals_) + list(stack), strict=True):
                if x != y and x[0] == "object" and y[0] == "object":
                    lub = check.merge(x, y, on_stack=False, offset=pcs[k])
                    counts["object" if lub == ("object", "java/lang/Object") else "class"] += 1
            new_l = [check.merge(x, y, on_stack=False, offset=pcs[k]) for x, y in zip(old[0], locals_, strict=True)]
            new_s = [check.merge(x, y, on_stack=True, offset=pcs[k]) for x, y in zip(old[1], stack, strict=True)]
            for i in range(len(new_l)):
                if new_l[i] in _WIDE and (i + 1 >= len(new_l) or new_l[i + 1] != TOP):
                    new_l[i] = TOP
            new = (new_l, new_s)
            if new_l == old[0] and new_s == old[1]:
                events.append(("merge", k, False, None, mask()))
                return
        frames[k] = new
        queued.add(k)
        data = enc.encode(new[0], new[1], meth.max_locals, meth.max_stack, classes, stored.get(k))
        stored[k] = data
        events.append(("merge", k, True, data, mask()))

    while queued:
        k = min(queued)
        queued.discard(k)
        counts["passes"] += 1
        events.append(("load", k, mask()))
        locals_, stack = (list(x) for x in frames[k])
        while True:
            ins = insns[k]
            for h in meth.covering[k]:
                merge_into(h[2], locals_, [h[3]])
            counts["insns"] += 1
            run.execute(ins, pcs[k], locals_, stack, next_offset=pcs[k + 1] if k + 1 < n else None)
            if meth.covering[k] and (ins.op in _STORE or ins.op == O.OPCODE["iinc"]):
                for h in meth.covering[k]:
                    merge_into(h[2], locals_, [h[3]])
            for t in meth.targets[k]:
                merge_into(t, locals_, stack)
            if ins.op in O.ENDS_BLOCK:
                break
            if k + 1 >= n:
                raise VerifyError(pcs[k], "control falls off the end of the code")
            if k + 1 in is_label:
                merge_into(k + 1, locals_, stack)
                break
            k += 1
    map_bytes = 1 + type_bytes * (meth.max_locals + meth.max_stack)
    return Trace(map_bytes, len(meth.labels), events, counts["passes"], counts["insns"], counts["slots"],
                 counts["class"], counts["object"], {pcs[k]: f for k, f in frames.items()})


# --- the card's memory: maps in EEPROM under a RAM cache -------------------------------------------------

class MapStore:
    """One method's maps: EEPROM (:class:`NvPages`) with a cache of ``capacity`` maps in RAM."""

    def __init__(self, meth: Method, trace: Trace, params: Params, policy: str, capacity: int):
        if policy not in (*POLICIES, "none"):
            raise ValueError(f"policy must be one of {(*POLICIES, 'none')}, got {policy!r}")
        p = params
        page = p.page_bytes
        size = max(page, -(-trace.map_bytes * len(meth.labels) // page) * page)
        timing = NvTiming(erase_unit_bytes=page, program_s_per_byte=0.0, erase_s=p.write_page_s * p.erase_over_write,
                          program_setup_s=p.write_page_s)
        self.nv = NvPages(timing, size)
        self.p, self.trace, self.meth = p, trace, meth
        self.policy = policy
        self.capacity = capacity if policy != "none" else 0
        self.guided = policy == "cfg" and p.cfg_guided
        self.index = {lab: i for i, lab in enumerate(meth.labels)}
        self.reach = [meth.reach[lab] for lab in meth.labels]
        self.cache = {}   # label -> [bytes, dirty], in LRU order (oldest first)
        self.stored = {}  # label -> bytes in EEPROM
        self.dropped = []  # (event index, label) of the maps dropped dead
        self.at = 0
        self.n = dict(page_writes=0, erases=0, writebacks=0, dead_drops=0, evictions=0, read_bytes=0, hits=0)

    def _write(self, label, data):
        """Program the bytes that differ from EEPROM, one write per page touched (a page write's time
        each, plus an erase where a bit must go back to 1: NvPages decides)."""
        off = self.index[label] * self.trace.map_bytes
        old = self.nv.data[off:off + len(data)].tobytes()
        page = self.p.page_bytes
        spans = {}
        start = 0
        while start < len(data):  # page by page: equal slices are skipped at C speed
            end = min(len(data), (off + start) // page * page + page - off)
            if data[start:end] != old[start:end]:
                lo, hi = start, end
                while data[lo] == old[lo]:
                    lo += 1
                while data[hi - 1] == old[hi - 1]:
                    hi -= 1
                spans[(off + start) // page] = (lo, hi)
            start = end
        for pg, (lo, hi) in spans.items():
            wear = int(self.nv.wear[pg])
            self.nv.write(off + lo, data[lo:hi])
            self.n["page_writes"] += 1
            self.n["erases"] += int(self.nv.wear[pg]) - wear
        self.stored[label] = data

    def _read(self, label):
        self.n["read_bytes"] += self.trace.map_bytes

    def _touch(self, label, data=None, dirty=False):
        entry = self.cache.pop(label)
        if data is not None:
            entry = [data, entry[1] or dirty]
        self.cache[label] = entry

    def _evict(self, qmask, current):
        order = list(self.cache)
        victim = order[0]
        if self.policy == "clean-lru":
            victim = next((lab for lab in order if not self.cache[lab][1]), order[0])
        elif self.guided:
            live_now = self.reach[self.index[current]]
            live = live_now | qmask
            m = qmask
            while m:
                low = m & -m
                live |= self.reach[low.bit_length() - 1]
                m ^= low
            dead = [lab for lab in order if not live >> self.index[lab] & 1]
            if dead:
                victim = dead[0]
                data, dirty = self.cache.pop(victim)
                self.n["evictions"] += 1
                self.n["dead_drops"] += dirty
                self.dropped.append((self.at, victim))
                return
            victim = next((lab for lab in order if not live_now >> self.index[lab] & 1), order[0])
        data, dirty = self.cache.pop(victim)
        self.n["evictions"] += 1
        if dirty:
            self.n["writebacks"] += 1
            self._write(victim, data)

    def _allocate(self, label, data, dirty, qmask, current):
        if len(self.cache) >= self.capacity:
            self._evict(qmask, current)
        self.cache[label] = [data, dirty]

    def replay(self) -> dict:
        current = 0
        for self.at, ev in enumerate(self.trace.events):
            label = ev[1]
            if ev[0] == "load":
                current = label
                if label in self.cache:
                    self.n["hits"] += 1
                    self._touch(label)
                elif label in self.stored:
                    self._read(label)
                    if self.capacity:
                        self._allocate(label, self.stored[label], False, ev[2], current)
                continue
            _, label, changed, data, qmask = ev
            if label in self.cache:
                self.n["hits"] += 1
                self._touch(label, data, changed)
                continue
            if label in self.stored:
                self._read(label)
            elif not changed:
                continue  # the entry's map, never stored: recomputed from the signature
            if not self.capacity:
                if changed:
                    self._write(label, data)
                continue
            self._allocate(label, data if changed else self.stored[label], changed, qmask, current)
        used = self.nv.data.reshape(-1, self.p.page_bytes)
        self.n["prep_erases"] = int(np.any(used != 0xFF, axis=1).sum())  # erased again for the next method
        self.n["eeprom_s"] = self.nv.time_s + self.n["prep_erases"] * self.nv.timing.erase_s \
            + self.n["read_bytes"] * self.p.read_byte_s
        return self.n


def cpu_seconds(trace: Trace, p: Params) -> float:
    """The card's CPU time for one method: bytecodes executed abstractly and slots merged."""
    return (trace.instructions * p.cycles_per_insn + trace.slot_merges * p.cycles_per_slot_merge) / p.clock_hz


@functools.lru_cache(maxsize=4)
def _traced(params: Params, quick: bool):
    out = []
    for meth in methods(params, quick=quick):
        try:
            trace = verify_on_card(meth, params.encoding, params.type_bytes)
        except VerifyError:
            continue  # jsr/ret, refused by the lab's verifier too; counted in ``workload``
        out.append((meth, trace))
    return out


def capacity(trace: Trace, ram_bytes: int, params: Params) -> int:
    """Maps the RAM holds besides the current frame (0 without a cache)."""
    if not params.cache:
        return 0
    return max(0, ram_bytes // trace.map_bytes - 1)


@functools.lru_cache(maxsize=4)
def _sweep(params: Params, quick: bool, policies: tuple = (*POLICIES, "none")) -> pd.DataFrame:
    rows = []
    traced = _traced(params, quick)
    for policy in policies:
        for ram in params.ram_sizes:
            tot = dict(page_writes=0, erases=0, prep_erases=0, writebacks=0, dead_drops=0, evictions=0,
                       read_bytes=0, eeprom_s=0.0)
            unaffected = overflow = 0
            cpu = 0.0
            for meth, trace in traced:
                n = MapStore(meth, trace, params, policy, capacity(trace, ram, params)).replay()
                for k in tot:
                    tot[k] += n[k]
                unaffected += n["page_writes"] == 0 and n["read_bytes"] == 0
                overflow += trace.map_bytes > ram
                cpu += cpu_seconds(trace, params)
            rows.append({"policy": policy, "ram_bytes": ram, **{k: tot[k] for k in tot if k != "read_bytes"},
                         "eeprom_reads_kb": tot["read_bytes"] / KiB, "eeprom_time_s": tot["eeprom_s"],
                         "time_s": cpu + tot["eeprom_s"], "unaffected_pct": 100.0 * unaffected / len(traced),
                         "frame_too_big_pct": 100.0 * overflow / len(traced)})
    return pd.DataFrame(rows).set_index(["policy", "ram_bytes"])


def cache(params: Params | None = None, *, rng=0, quick=False, policies=None) -> pd.DataFrame:
    """§5.4 and §6.1 on the JDK's methods: EEPROM page writes, erases (of a page to set a bit; the
    erases that prepare each method's area apart), write-backs, dead maps dropped, evictions, EEPROM
    reads and time, the card's total time, and the share of methods verified without touching EEPROM,
    by cache policy ("none": write-through) and RAM size. Index: policy, ram_bytes. ``policies``
    limits the sweep to some of ``POLICIES`` and "none" (all by default)."""
    p = params or Params()
    make_rng(rng)  # deterministic: no randomness
    if policies is None:
        return _sweep(p, quick).copy()
    bad = set(policies) - {*POLICIES, "none"}
    if bad or not policies:
        raise ValueError(f"policies must be a non-empty selection of {(*POLICIES, 'none')}, got {policies!r}")
    return _sweep(p, quick, tuple(policies)).copy()


def memory(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.1's memory for the maps, M = T (S + L) (J + 1), over the workload's methods; the share that
    fits §6.1's RAM sizes. Index: statistic. Columns: value."""
    p = params or Params()
    ms = np.array([p.type_bytes * (m.max_locals + m.max_stack) * len(m.labels) for m in methods(p, quick=quick)])
    return pd.DataFrame({"value": {
        "methods": float(len(ms)), "median_bytes": float(np.median(ms)), "p90_bytes": float(np.percentile(ms, 90)),
        "p99_bytes": float(np.percentile(ms, 99)), "max_bytes": float(ms.max()),
        "over_3kb_pct": 100.0 * np.mean(ms > 3 * KiB), "over_4kb_pct": 100.0 * np.mean(ms > 4 * KiB),
        "fits_512_pct": 100.0 * np.mean(ms <= p.ram_enough_bytes),
        "fits_768_pct": 100.0 * np.mean(ms <= p.ram_max_bytes)}}).rename_axis("statistic")


def workload(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Then vs now on the JDK's bytecode: methods, bytecode, Kildall's passes, instructions executed
    per instruction of code, unifications between two classes, and the card's time per KB at §6.1's
    768 B with the CFG policy. Index: statistic. Columns: value."""
    p = params or Params()
    all_m = methods(p, quick=quick)
    traced = _traced(p, quick)
    static = sum(len(m.insns) for m, _ in traced)
    code_kb = sum(m.code_bytes for m, _ in traced) / KiB
    slots = sum(t.slot_merges for _, t in traced)
    ram = max(p.ram_sizes)
    row = _sweep(p, quick).loc[("cfg", ram)]
    return pd.DataFrame({"value": {
        "methods": float(len(traced)), "refused": float(len(all_m) - len(traced)), "code_kb": code_kb,
        "labels_per_method": float(np.mean([len(m.labels) for m, _ in traced])),
        "passes_per_label": sum(t.passes for _, t in traced) / sum(len(m.labels) for m, _ in traced),
        "executed_per_instruction": sum(t.instructions for _, t in traced) / static,
        "peak_map_bytes": float(max(t.map_bytes * len(m.labels) for m, t in traced)),
        "class_pair_unif_pct": 100.0 * sum(t.class_merges + t.object_merges for _, t in traced) / max(slots, 1),
        "class_to_class_unif_pct": 100.0 * sum(t.class_merges for _, t in traced) / max(slots, 1),
        "card_s_per_kb": float(row["time_s"]) / code_kb,
        "card_eeprom_share_pct": 100.0 * float(row["eeprom_time_s"] / row["time_s"])}}).rename_axis("statistic")
