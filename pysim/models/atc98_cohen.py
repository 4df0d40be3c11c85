"""Automatic program transformation with JOIE (Cohen, Chase & Kaminsky, USENIX ATC 1998).

Regenerates §4.4's per-class cost of parsing and transforming typical classes
with simple transformers on the paper's 167 MHz Ultra 1, for JOIE as built
and as §4.4 plans it (``section44``); §4.1's lazy, parse-once design over
chains of transformers (``section41``); and §4.3's facts about the
instructions that move values between the frame and the stack (``section43``).

First principles. JOIE's load-time pipeline as §4.1-§4.4 describe it
(:class:`ClassInfo`): each transformer asks for the elements it needs (the
constant pool, the interfaces, the fields, the method table, a method's
bytecode); an element is parsed on its first request and kept for the next
transformer; a new constant-pool entry is appended after a linear search of
the list of entries of its type; instructions live in Java arrays (an
insertion copies the array); the ClassInfo is linearised back to bytes
(parsed elements re-encoded through a stream, unparsed ones copied). Three
simple transformers: the interface marker ``Transformed`` (§3.1, §4.1's
example), a call at the entry of every method (§3.5), and Figure 1's
Automatic Observable. Each stage is a :class:`pysim.sw.Recipe` of operations
counted on the class's structure (bytes through synchronized Java streams,
objects allocated, list entries compared, references copied), priced in
cycles on the 167 MHz UltraSPARC. The classes are a synthetic corpus shaped
like javac's output (:func:`synthetic_shapes`, its parameters read off the
JDK's java.base); :func:`shape_of` gives the same structure for any real
class, so the 1998 costs apply to today's classes too. §4.3's counts come
from the toolkit's opcode table and encoder (:mod:`pysim.jvm`).

Calibrated: nothing (the paper prints no number to fit). Every unit cost is
assumed, with its reason; the design's choices are switches, and the
counterfactuals turn them (a tuned parser, eager parsing, re-parsing per
transformer, the plan without its index or its collections).

Then vs now (real, on this machine): the lab's toolkit (:mod:`pysim.jvm`) as
the transformer over the JDK's own classes, each stage timed per class, with
linear against hashed lookup, lazy against eager parsing, Figure 1's loop
against one pass, and two transformers chained through bytes against one
shared parse (:func:`measure_pipeline`, :func:`scaling`); and a real
``java.lang.instrument`` agent on ASM, written, compiled, packed and run
from here, inserting a call at method entry as third-party classes load,
against the same program without it (:func:`agent_experiment`).
:func:`then_and_now` sets both against the paper's statements.

Not reproduced: Table 1 (stages of the program lifecycle) holds no
measurement; Table 2 (JOIE's API) is lost in the text; Figure 1 is a code
listing (its transformer is modelled). See papers/atc98_cohen/paper.yaml.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.hw import CpuCostModel
from pysim.jvm import ClassFile, Code, ConstantPool, Member, insn
from pysim.jvm import opcodes as O
from pysim.jvm.constants import encode_mutf8
from pysim.models import Counterfactual, Inputs, cells
from pysim.params import ModelParams, assumed, stated
from pysim.rng import make_rng
from pysim.sw import Recipe
from pysim.units import MHz, ms
from pysim.harness.exclusive import one_core

#: The simple transformers: §4.1's interface marker, §3.5's call on entry, Figure 1's Automatic Observable.
TRANSFORMERS = ("interface", "entry", "observable")
#: §4.1's chains: each transformer gets the ClassInfo the previous one left.
CHAINS = {"1": ("interface",), "2": ("interface", "entry"), "3": ("interface", "entry", "observable")}
STAGES = ("parse", "constant_pool", "splice", "insert", "linearise")
POOL_TAGS = ("Utf8", "Class", "NameAndType", "Fieldref", "Methodref", "String", "other")
HOOK = ("joie/Hook", "enter", "(Ljava/lang/String;)V")   # the routine the entry transformer calls
MARKER = "joie/Transformed"                               # §3.1: transformed classes implement this
DIRTY = ("dirty", "Z")                                    # Figure 1's field


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Costs in cycles of JIT-compiled Java on the 167 MHz UltraSPARC-I (Ultra 1)."""

    clock_hz: float = stated(167 * MHz, "§4.4: 167 MHz Sun Microsystems Ultra 1 systems")
    # JOIE's design (switches, so a counterfactual is a change of parameters)
    lazy_parse: bool = stated(True, "§4.1: the toolkit methods parse the elements of the target classfile "
                                    "lazily as they are requested by transformers")
    keep_parse_state: bool = stated(True, "§4.1: each ClassInfo instance preserves parsing state across "
                                          "transformers")
    per_type_lists: bool = stated(True, "§4.1: as the toolkit parses the Constant Pool, it creates a list for "
                                        "each type of entry")
    cp_lookup: str = stated("linear", "§4.4: currently these searches are linear", choices=("linear", "hashed"))
    instructions_as: str = stated("array", "§4.4: ClassInfo currently represents ... lists of methods, fields, "
                                           "interfaces, and instructions as Java arrays",
                                  choices=("array", "linked"))
    planned_cp_lookup: str = stated("hashed", "§4.4: an index structure would significantly reduce the cost",
                                    choices=("linear", "hashed"))
    planned_instructions_as: str = stated("linked", "§4.4: in a future release we plan to instead use the Java "
                                                    "Collection interface", choices=("array", "linked"))
    # unit costs (cycles)
    call_cycles: float = assumed(10.0, "a direct call and return in JIT-compiled code on SPARC: call, save, "
                                       "restore, return, a few loads")
    virtual_call_cycles: float = assumed(15.0, "invokevirtual compiled: load the class, the method-table slot, "
                                               "an indirect call; a little more than a direct call")
    lock_cycles: float = assumed(200.0, "an uncontended monitor enter and exit in JDK 1.2's classic VM: a "
                                        "monitor-cache lookup under a global lock and the monitor's own mutex, "
                                        "each taken and released (some eight atomic load-store operations of "
                                        "~25 cycles on the UltraSPARC-I)")
    alloc_cycles: float = assumed(100.0, "allocating and zeroing a small object in the classic VM's heap, "
                                         "under its heap lock, with its share of collection")
    compare_cycles: float = assumed(20.0, "one entry of a linear constant-pool search: a call to equals() that "
                                          "fails on the first fields or characters")
    hash_cycles: float = assumed(80.0, "one hashed lookup: hashCode() over a name of some twenty characters at "
                                       "three cycles each and one probe")
    stream_work_cycles: float = assumed(6.0, "the work inside one read() or write() of a byte-array stream: a "
                                             "bounds test, an array access, a mask")
    char_cycles: float = assumed(8.0, "decoding or encoding one byte of modified UTF-8 in readUTF()/writeUTF()'s "
                                      "loop")
    copy_cycles_per_byte: float = assumed(0.7, "System.arraycopy at some 240 MB/s, the UltraSPARC-I's block "
                                               "copy bandwidth from cache")
    synchronized_streams: bool = assumed(True, "JDK 1.2's ByteArrayInputStream.read() and ByteArrayOutputStream."
                                               "write() are synchronized: a parser reading through "
                                               "DataInputStream takes a monitor for every byte")
    label_bytes: int = assumed(48, "the entry call's argument names the method: a class name, a method name and "
                                   "a descriptor of some sixteen characters each")
    # the corpus: 'typical classes' shaped like javac's output
    corpus_classes: int = assumed(1000, "classes in the synthetic corpus (a fifth of them in quick mode)", ge=10)
    methods_median: float = assumed(4.0, "methods per class, lognormal: the median of java.base (JDK 17), measured "
                                         "with pysim.jvm")
    methods_sigma: float = assumed(1.02, "methods per class: spread of log(methods) in java.base")
    no_code_share: float = assumed(0.08, "classes with no code at all (interfaces) in java.base", ge=0, lt=1)
    fieldless_share: float = assumed(0.30, "classes without fields in java.base", ge=0, lt=1)
    fields_median: float = assumed(2.8, "fields of a class that has fields, lognormal: java.base")
    fields_sigma: float = assumed(0.93, "fields per class: spread of log(fields) in java.base")
    insns_median: float = assumed(8.0, "instructions per method of a class of average size, lognormal; with the "
                                       "next three, java.base's quantiles come back: per class 54 (median) and 547 "
                                       "(90th percentile), per method 10 and 59")
    insns_sigma: float = assumed(1.0, "spread of log(instructions) among one class's methods")
    class_size_sigma: float = assumed(0.7, "spread of a class's own log size factor, shared by its methods")
    class_size_correlation: float = assumed(0.6, "correlation of that factor with log(methods): big classes have "
                                                 "more and bigger methods", ge=0, le=1)
    static_share: float = assumed(0.21, "static methods among methods with code in java.base", ge=0, le=1)
    putfield_share: float = assumed(0.0196, "putfield among the instructions of non-static methods in java.base",
                                    ge=0, le=1)
    branch_share: float = assumed(0.063, "branches among all instructions in java.base", ge=0, le=1)
    handler_share: float = assumed(0.004, "exception handlers per instruction in java.base", ge=0, le=1)
    pool_coefficient: float = assumed(4.48, "pool entries = coefficient x W^exponent, W = instructions + 8 "
                                            "methods + 4 fields: a log-log fit over java.base")
    pool_exponent: float = assumed(0.617, "see pool_coefficient: distinct references grow slower than code")
    pool_sigma: float = assumed(0.365, "spread of log(pool entries) about that fit in java.base")
    pool_shares: tuple = assumed(tuple(zip(POOL_TAGS, (0.565, 0.077, 0.133, 0.035, 0.110, 0.052, 0.028), strict=True)),
                                 "shares of the pool's entries by type in java.base")
    utf8_mean_bytes: float = assumed(23.8, "bytes of a Utf8 entry's text, mean over java.base")
    code_bytes_per_insn: float = assumed(4.9, "bytes of a Code attribute per instruction (code, handlers, line "
                                              "and variable tables) in java.base")
    member_bytes: int = assumed(16, "a field or method entry outside its Code: the 8-byte header and one small "
                                    "attribute (Signature, ConstantValue, Exceptions)")
    class_attribute_bytes: int = assumed(40, "a class's own attributes: SourceFile and InnerClasses")
    # §4.3's example
    relocation_example: tuple = stated((3, 5), "§4.3: a shortcut that references frame location 3; if the new "
                                               "target is location 5")

    def __post_init__(self):
        super().__post_init__()
        tags = tuple(t for t, _ in self.pool_shares)
        if tags != POOL_TAGS or not all(s >= 0 for _, s in self.pool_shares) \
                or not math.isclose(sum(s for _, s in self.pool_shares), 1.0, abs_tol=1e-6):
            raise ValueError(f"pool_shares must give a share >= 0 for each of {POOL_TAGS}, summing to 1, "
                             f"got {self.pool_shares!r}")
        a, b = self.relocation_example
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a < 65536 and 0 <= b < 65536):
            raise ValueError(f"relocation_example must be two frame locations in 0..65535, "
                             f"got {self.relocation_example!r}")


CALIBRATION = ()
INPUTS = (
    Inputs((), cells("section43", ["example: from location", "example: to location"], ["value"]),
           "§4.3's example locations, stated parameters the model echoes"),
    Inputs((), cells("section43", ["load instruction types", "store instruction types", "typed families",
                                   "highest shortcut location", "locations without wide"], ["value"]),
           "facts of the JVM's instruction set, which the model takes as given (the toolkit's opcode table) "
           "and only counts: they check the table, not JOIE's mechanism"),
)
COUNTERFACTUALS = (
    Counterfactual("tuned-parser", {"synchronized_streams": False},
                   "a tuned parser that reads the class file from a byte array without a monitor per byte: "
                   "the opposite of §4.4's untuned prototype"),
    Counterfactual("eager-parse", {"lazy_parse": False}, "every element parsed when the class is loaded"),
    Counterfactual("reparse-per-transformer", {"keep_parse_state": False},
                   "each transformer parses the bytes the previous one wrote (as java.lang.instrument chains them)"),
    Counterfactual("no-index", {"planned_cp_lookup": "linear"}, "the planned release keeps linear searches"),
    Counterfactual("no-collections", {"planned_instructions_as": "array"},
                   "the planned release keeps instructions in arrays"),
)


# --- the structure of a class, as the costs need it -----------------------------------------------

@dataclass(frozen=True)
class MethodShape:
    """One method: whether it is static, and its code's size (no code: abstract or native)."""

    static: bool
    instructions: int = 0
    putfields: int = 0
    branches: int = 0
    handlers: int = 0
    code_bytes: int = 0      # the Code attribute's payload (0: no code)
    other_bytes: int = 16    # the method_info outside its Code attribute

    @property
    def has_code(self) -> bool:
        return self.code_bytes > 0


@dataclass(frozen=True)
class ClassShape:
    """What the costs of parsing and transforming a class depend on."""

    name: str
    total_bytes: int
    pool: tuple                # (tag, entries) for each of POOL_TAGS
    utf8_bytes: int            # the Utf8 entries' text
    pool_bytes: int            # the pool as written, without its count
    interfaces: int
    fields: int
    field_bytes: int
    methods: tuple             # of MethodShape
    attribute_bytes: int

    def entries(self, tag: str) -> int:
        return dict(self.pool)[tag]

    @property
    def pool_entries(self) -> int:
        return sum(n for _, n in self.pool)

    @property
    def instructions(self) -> int:
        return sum(m.instructions for m in self.methods)


_ENTRY_BYTES = {"Class": 3, "NameAndType": 5, "Fieldref": 5, "Methodref": 5, "String": 3, "other": 5}


def shape_of(cf: ClassFile, total_bytes: int | None = None) -> ClassShape:
    """The structure of a real class file, parsed with :mod:`pysim.jvm` (its code is decoded)."""
    counts = dict.fromkeys(POOL_TAGS, 0)
    utf8 = 0
    for _, entry in cf.pool:
        kind = {"InterfaceMethodref": "Methodref"}.get(entry[0], entry[0])
        counts[kind if kind in counts else "other"] += 1
        if entry[0] == "Utf8":
            utf8 += len(encode_mutf8(entry[1]))
    methods = []
    for m in cf.methods:
        code, attr = m.code(), m.attribute("Code")
        whole = len(m.to_bytes())
        if code is None:
            methods.append(MethodShape(bool(m.access & 0x0008), other_bytes=whole))
            continue
        ins = code.instructions()
        methods.append(MethodShape(
            bool(m.access & 0x0008), len(ins), sum(1 for i in ins if i.op == O.OPCODE["putfield"]),
            sum(1 for i in ins if O.FORMAT[i.op] in ("j2", "j4", "table", "lookup")), len(code.handlers),
            len(attr.data), whole - len(attr.data) - 6))
    return ClassShape(cf.name, total_bytes or len(cf.to_bytes()), tuple(counts.items()), utf8,
                      len(cf.pool.to_bytes()) - 2, len(cf.interfaces), len(cf.fields),
                      sum(len(f.to_bytes()) for f in cf.fields), tuple(methods),
                      sum(len(a.to_bytes()) for a in cf.attributes))


def _lognormal_count(rng, median: float, sigma: float) -> int:
    return max(1, round(median * math.exp(sigma * rng.standard_normal())))


def synthetic_shape(p: Params, rng, name: str = "C") -> ClassShape:
    """One class shaped like javac's output: methods, fields, code and a pool that grows with them."""
    z = rng.standard_normal()
    n_methods = max(1, round(p.methods_median * math.exp(p.methods_sigma * z)))
    factor = p.class_size_sigma * (p.class_size_correlation * z
                                   + math.sqrt(1 - p.class_size_correlation ** 2) * rng.standard_normal())
    has_code = rng.random() >= p.no_code_share
    methods = []
    for _ in range(n_methods):
        static = bool(rng.random() < p.static_share)
        if not has_code:
            methods.append(MethodShape(static, other_bytes=p.member_bytes))
            continue
        n = max(1, round(p.insns_median * math.exp(factor + p.insns_sigma * rng.standard_normal())))
        puts = 0 if static else int(rng.binomial(n, p.putfield_share))
        methods.append(MethodShape(static, n, puts, int(rng.binomial(n, p.branch_share)),
                                   int(rng.binomial(n, p.handler_share)),
                                   12 + round(p.code_bytes_per_insn * n), p.member_bytes))
    fields = 0 if rng.random() < p.fieldless_share else _lognormal_count(rng, p.fields_median, p.fields_sigma)
    weight = sum(m.instructions for m in methods) + 8 * len(methods) + 4 * fields
    entries = max(len(POOL_TAGS), round(p.pool_coefficient * weight ** p.pool_exponent
                                        * math.exp(p.pool_sigma * rng.standard_normal())))
    pool = tuple((tag, max(1, round(share * entries))) for tag, share in p.pool_shares)
    n_utf8 = dict(pool)["Utf8"]
    utf8 = round(n_utf8 * p.utf8_mean_bytes)
    pool_bytes = 3 * n_utf8 + utf8 + sum(_ENTRY_BYTES[t] * n for t, n in pool if t != "Utf8")
    field_bytes = fields * p.member_bytes
    total = 10 + pool_bytes + 8 + field_bytes + 2 + sum(m.code_bytes + 6 * m.has_code + m.other_bytes
                                                        for m in methods) \
        + 2 + p.class_attribute_bytes
    return ClassShape(name, total, pool, utf8, pool_bytes, 0, fields, field_bytes, tuple(methods),
                      p.class_attribute_bytes)


def synthetic_shapes(p: Params, n: int, rng=0) -> list:
    """``n`` synthetic classes (see :func:`synthetic_shape`), reproducible from ``rng``."""
    gen = make_rng(rng)
    return [synthetic_shape(p, gen, f"C{i}") for i in range(n)]


def corpus(p: Params, rng=0, quick=False) -> list:
    """The artifacts' corpus: ``corpus_classes`` synthetic classes (a fifth in quick mode)."""
    return synthetic_shapes(p, max(10, p.corpus_classes // 5) if quick else p.corpus_classes, rng)


# --- JOIE's work, counted ------------------------------------------------------------------------

@dataclass(frozen=True)
class Design:
    """How a toolkit parses, searches and inserts."""

    lazy: bool = True
    keep_state: bool = True
    cp_lookup: str = "linear"
    per_type_lists: bool = True
    instructions_as: str = "array"


def joie_design(p: Params) -> Design:
    """JOIE as built (§4.1, §4.4)."""
    return Design(p.lazy_parse, p.keep_parse_state, p.cp_lookup, p.per_type_lists, p.instructions_as)


def planned_design(p: Params) -> Design:
    """JOIE as §4.4 plans it: an index over the constant pool, instructions in collections."""
    return dataclasses.replace(joie_design(p), cp_lookup=p.planned_cp_lookup,
                               instructions_as=p.planned_instructions_as)


class Tally:
    """Operation counts per stage: reads and writes through Java streams, bulk bytes, objects, searches."""

    OPS = ("read", "write", "bulk", "copy", "char", "alloc", "call", "virtual_call", "compare", "hash")

    def __init__(self):
        self.counts = {s: dict.fromkeys(self.OPS, 0.0) for s in STAGES}
        self.parses = {}   # element -> times parsed
        self.insertions = 0

    def add(self, stage: str, **ops):
        for op, n in ops.items():
            self.counts[stage][op] += n

    def parsed(self, element) -> None:
        self.parses[element] = self.parses.get(element, 0) + 1


def _method_table_bytes(s: ClassShape) -> int:
    """The method table outside the code: each method's header and attributes, and its Code header."""
    return sum(m.other_bytes + (6 if m.has_code else 0) for m in s.methods)


def _entry_size(tag: str, text: str = "") -> int:
    return 3 + len(text) if tag == "Utf8" else _ENTRY_BYTES[tag]


class ClassInfo:
    """JOIE's ClassInfo over one class's structure, counting the work of every request (§4.1-§4.4).

    Elements: 'pool', 'interfaces', 'fields', 'methods' (the member table) and ('code', i) for
    method i. Each is parsed on its first request (all at once when not lazy), and linearise()
    writes parsed elements back through a stream and copies unparsed ones in bulk.
    """

    def __init__(self, shape: ClassShape, design: Design, tally: Tally):
        self.s, self.d, self.t = shape, design, tally
        self.have = set()
        self.lists = dict(shape.pool)       # entries per type; appended entries counted in
        self.new_bytes = {"pool": 0, "utf8": 0, "interfaces": 0, "fields": 0}
        self.code_growth = {}               # method index -> (instructions, bytes) inserted
        tally.add("parse", read=16)          # magic, versions, access, this, super, counts
        if not design.lazy:
            for element in self.elements():
                self.need(element)

    def elements(self) -> list:
        return ["pool", "interfaces", "fields", "methods",
                *(("code", i) for i, m in enumerate(self.s.methods) if m.has_code)]

    # --- parsing on request ------------------------------------------------------------------------
    def need(self, element) -> None:
        """Parse ``element`` unless this ClassInfo already has (and, for code, its member table first)."""
        if element in self.have:
            return
        if isinstance(element, tuple):
            self.need("methods")
        s, t = self.s, self.t
        if element == "pool":
            n_utf8 = s.entries("Utf8")
            t.add("parse", read=s.pool_bytes - s.utf8_bytes, bulk=n_utf8, copy=s.utf8_bytes, char=s.utf8_bytes,
                  alloc=s.pool_entries + n_utf8, call=s.pool_entries)
        elif element == "interfaces":
            t.add("parse", read=2 * s.interfaces, alloc=1)
        elif element == "fields":
            t.add("parse", read=s.field_bytes, alloc=s.fields + 1)
        elif element == "methods":
            # the member table: headers and small attributes read; each Code attribute skipped by its length
            t.add("parse", read=_method_table_bytes(s), alloc=len(s.methods) + 1,
                  bulk=sum(1 for m in s.methods if m.has_code))
        else:
            m = s.methods[element[1]]
            nodes = m.instructions if self.d.instructions_as == "linked" else 0   # a list node per instruction
            t.add("parse", read=m.code_bytes, alloc=m.instructions + m.handlers + 2 + nodes,
                  call=m.instructions + m.branches)
        self.have.add(element)
        t.parsed(element)

    # --- the constant pool (§4.1, §4.4) ----------------------------------------------------------
    def search(self, tag: str, found_at: float | None = None) -> None:
        """One search for an entry of type ``tag``: a miss scans the whole list, a hit stops where it is."""
        if self.d.cp_lookup == "hashed":
            self.t.add("constant_pool", hash=1)
            return
        scanned = self.lists[tag] if self.d.per_type_lists else sum(self.lists.values())
        self.t.add("constant_pool", compare=scanned if found_at is None else found_at * scanned, call=1)

    def append(self, tag: str, text: str = "") -> None:
        """A new entry after a search that missed."""
        self.search(tag)
        self.lists[tag] += 1
        self.new_bytes["pool"] += _entry_size(tag, text)
        if tag == "Utf8":
            self.new_bytes["utf8"] += len(text)
        self.t.add("constant_pool", alloc=2 if tag == "Utf8" else 1, call=1,
                   hash=1 if self.d.cp_lookup == "hashed" else 0)

    def find_appended(self, tag: str) -> None:
        """A search that hits an entry this transformation appended (at the end of its list)."""
        self.search(tag, found_at=1.0)

    # --- insertion (§4.4) ---------------------------------------------------------------------------
    def insert(self, length: int, new: int) -> None:
        """Insert ``new`` items into a list of ``length``: an array is copied into a new one; a linked
        list (java.util.LinkedList) gets a node per item, linked in."""
        self.t.insertions += 1
        if self.d.instructions_as == "array":
            self.t.add("insert", alloc=1, copy=4 * (length + new))
        else:
            self.t.add("insert", alloc=new, call=2 * new)

    # --- linearising (§4.1, §4.2) -------------------------------------------------------------------
    def linearise(self) -> None:
        s, t = self.s, self.t
        t.add("linearise", write=16)
        copied = 0
        if "pool" in self.have:
            utf8 = s.utf8_bytes + self.new_bytes["utf8"]
            raw = s.pool_bytes + self.new_bytes["pool"]
            t.add("linearise", write=raw - utf8, bulk=self.lists["Utf8"], copy=utf8, char=utf8)
        else:
            copied += s.pool_bytes
        if "interfaces" in self.have:
            t.add("linearise", write=2 * s.interfaces + self.new_bytes["interfaces"])
        else:
            copied += 2 * s.interfaces
        if "fields" in self.have:
            t.add("linearise", write=s.field_bytes + self.new_bytes["fields"])
        else:
            copied += s.field_bytes
        if "methods" in self.have:
            t.add("linearise", write=_method_table_bytes(s))
        for i, m in enumerate(s.methods):
            if not m.has_code:
                continue
            if ("code", i) in self.have:
                n_new, b_new = self.code_growth.get(i, (0, 0))
                # two passes over the instructions (sizes, then bytes) and one offset per branch (§4.2)
                t.add("linearise", write=m.code_bytes + b_new, call=2 * (m.instructions + n_new) + m.branches)
            else:
                copied += m.code_bytes
        if "methods" not in self.have:
            copied += _method_table_bytes(s)
        copied += s.attribute_bytes
        t.add("linearise", bulk=1, copy=copied)


def _interface(ci: ClassInfo) -> None:
    """§3.1/§4.1: mark the class as implementing ``Transformed``."""
    ci.need("pool")
    ci.need("interfaces")
    ci.append("Class")
    ci.append("Utf8", MARKER)
    ci.new_bytes["interfaces"] += 2
    ci.insert(ci.s.interfaces, 1)


def _entry(ci: ClassInfo, p: Params) -> None:
    """§3.5: ``ldc "<method>"; invokestatic joie/Hook.enter(String)`` first thing in every method."""
    ci.need("pool")
    owner, name, desc = HOOK
    ci.search("Methodref")
    for tag, text in (("Class", ""), ("Utf8", owner), ("NameAndType", ""), ("Utf8", name), ("Utf8", desc),
                      ("Methodref", "")):
        ci.append(tag, text)
    for i, m in enumerate(ci.s.methods):
        if not m.has_code:
            continue
        ci.need(("code", i))
        ci.find_appended("Methodref")                 # §4.4: repeated searches of the pool
        ci.append("String")
        ci.append("Utf8", "x" * p.label_bytes)
        ci.t.add("splice", alloc=2)                    # the splice: ldc_w, invokestatic
        ci.insert(m.instructions, 2)
        n, b = ci.code_growth.get(i, (0, 0))
        ci.code_growth[i] = (n + 2, b + 6)


def _observable(ci: ClassInfo) -> None:
    """Figure 1: add ``boolean dirty``; after every putfield of a non-static method, set it."""
    ci.need("pool")
    ci.need("fields")
    ci.append("Utf8", DIRTY[0])                        # addField(Type.BOOLEAN, "dirty")
    ci.append("Utf8", DIRTY[1])
    ci.t.add("splice", alloc=1)                        # the Field
    ci.insert(ci.s.fields, 1)
    ci.new_bytes["fields"] += 8
    ci.search("Fieldref")                              # code.putField("dirty", true): the splice
    ci.search("Class", found_at=0.5)                   # the class's own entry, somewhere in the list
    ci.append("NameAndType")
    ci.find_appended("Utf8")
    ci.find_appended("Utf8")
    ci.append("Fieldref")
    ci.t.add("splice", alloc=3)                        # aload_0, iconst_1, putfield
    ci.need("methods")
    for i, m in enumerate(ci.s.methods):
        if m.static or not m.has_code:
            continue
        ci.need(("code", i))
        # the scan: getMnemonic().equals("putfield") on every instruction (through an iterator's
        # hasNext() and next() when the instructions are a collection)
        step = 1 + (2 if ci.d.instructions_as == "linked" else 0)
        ci.t.add("splice", virtual_call=step * m.instructions, call=m.instructions, compare=m.instructions)
        for k in range(m.putfields):
            ci.insert(m.instructions + 3 * k, 3)
            ci.t.add("splice", call=1)                 # insts = code.getInstructions()
        if m.putfields:
            n, b = ci.code_growth.get(i, (0, 0))
            ci.code_growth[i] = (n + 3 * m.putfields, b + 5 * m.putfields)


def transform(shape: ClassShape, chain, p: Params, design: Design) -> Tally:
    """The work of loading ``shape`` through the transformers of ``chain`` under ``design``."""
    unknown = [t for t in chain if t not in TRANSFORMERS]
    if unknown or not chain:
        raise ValueError(f"chain must name transformers of {TRANSFORMERS}, got {tuple(chain)!r}")
    tally = Tally()
    ci = ClassInfo(shape, design, tally)
    for k, name in enumerate(chain):
        if k and not design.keep_state:       # bytes between transformers: write, then parse again
            ci.linearise()
            ci = ClassInfo(shape, design, tally)
        if name == "interface":
            _interface(ci)
        elif name == "entry":
            _entry(ci, p)
        else:
            _observable(ci)
    ci.linearise()
    return tally


# --- pricing ------------------------------------------------------------------------------------------

def cost_model(p: Params) -> CpuCostModel:
    """Seconds per operation on the 167 MHz UltraSPARC."""
    c = 1.0 / p.clock_hz
    return CpuCostModel(p.clock_hz, fixed_s={
        "call": p.call_cycles * c, "virtual_call": p.virtual_call_cycles * c, "lock": p.lock_cycles * c,
        "alloc": p.alloc_cycles * c, "compare": p.compare_cycles * c, "hash": p.hash_cycles * c,
        "stream_work": p.stream_work_cycles * c, "char": p.char_cycles * c},
        per_byte_s={"copy": p.copy_cycles_per_byte * c})


def stream_call(p: Params) -> Recipe:
    """One read() or write() on a byte-array stream: a virtual call, its monitor if synchronized, its work."""
    return Recipe(ops={"virtual_call": 1, "lock": 1 if p.synchronized_streams else 0, "stream_work": 1})


def recipe(counts: dict, p: Params) -> Recipe:
    """A stage's counts as a Recipe of priced operations."""
    out = (counts["read"] + counts["write"] + counts["bulk"]) * stream_call(p)
    return out + Recipe(ops={"alloc": counts["alloc"], "call": counts["call"], "virtual_call": counts["virtual_call"],
                             "compare": counts["compare"], "hash": counts["hash"], "char": counts["char"]},
                        nbytes={"copy": counts["copy"]})


def stage_ms(tally: Tally, p: Params, cpu: CpuCostModel | None = None) -> dict:
    """Milliseconds per stage (and in total) of one class's tally."""
    cpu = cpu or cost_model(p)
    out = {f"{s}_ms": recipe(tally.counts[s], p).seconds(cpu) / ms for s in STAGES}
    out["total_ms"] = sum(out.values())
    return out


def per_class(shapes, chain, p: Params, design: Design) -> pd.DataFrame:
    """Stage milliseconds, insertions and parsing counts for every class of ``shapes``."""
    cpu, rows = cost_model(p), []
    for sh in shapes:
        t = transform(sh, chain, p, design)
        row = {"class": sh.name, "bytes": sh.total_bytes, **stage_ms(t, p, cpu), "insertions": t.insertions,
               "elements_parsed": len(t.parses), "element_parses": sum(t.parses.values()),
               "max_parses_per_element": max(t.parses.values()),
               "member_tables_parsed": sum(1 for e in t.parses if e in ("fields", "methods")),
               "instructions_parsed": sum(sh.methods[e[1]].instructions for e in t.parses if isinstance(e, tuple))}
        rows.append(row)
    out = pd.DataFrame(rows).set_index("class")
    out["us_per_insertion"] = 1e3 * out["insert_ms"] / out["insertions"].where(out["insertions"] > 0)
    return out


# --- the artifacts ----------------------------------------------------------------------------------

STAT_COLUMNS = (*(f"{s}_ms" for s in STAGES), "total_ms", "us_per_insertion")


def section44(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.4: milliseconds to parse and transform a class, per stage, over the corpus of typical classes.

    Index: (design, transformer, statistic): design 'JOIE' (as built) or 'planned' (§4.4's index and
    collections); statistic 'median' or 'p90' over the corpus, each column on its own.
    Columns: parse_ms, constant_pool_ms, splice_ms (finding where to insert and building what is
    inserted), insert_ms (placing it in the lists), linearise_ms, total_ms, us_per_insertion.
    """
    p = params or Params()
    shapes = corpus(p, rng, quick)
    rows = []
    for label, design in (("JOIE", joie_design(p)), ("planned", planned_design(p))):
        for name in TRANSFORMERS:
            df = per_class(shapes, (name,), p, design)
            for stat, q in (("median", 0.5), ("p90", 0.9)):
                rows.append({"design": label, "transformer": name, "statistic": stat,
                             **{c: float(df[c].quantile(q)) for c in STAT_COLUMNS}})
    return pd.DataFrame(rows).set_index(["design", "transformer", "statistic"])


def section41(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.1: chains of transformers over one ClassInfo (JOIE), parsed eagerly, or through bytes.

    Index: (chain, parsing): chain '1' (interface), '2' (+ entry), '3' (+ observable); parsing
    'JOIE' (lazy, state kept: as p says), 'eager' (every element at load), 'bytes between' (each
    transformer parses what the previous one wrote). Columns: elements_parsed, member_tables_parsed,
    instructions_parsed (means per class), max_parses_per_element (over the corpus), parse_ms and
    total_ms (medians).
    """
    p = params or Params()
    shapes = corpus(p, rng, quick)
    joie = joie_design(p)
    designs = {"JOIE": joie, "eager": dataclasses.replace(joie, lazy=False),
               "bytes between": dataclasses.replace(joie, keep_state=False)}
    rows = []
    for chain, names in CHAINS.items():
        for label, design in designs.items():
            df = per_class(shapes, names, p, design)
            rows.append({"chain": chain, "parsing": label, "elements_parsed": df["elements_parsed"].mean(),
                         "member_tables_parsed": df["member_tables_parsed"].mean(),
                         "instructions_parsed": df["instructions_parsed"].mean(),
                         "max_parses_per_element": float(df["max_parses_per_element"].max()),
                         "parse_ms": float(df["parse_ms"].median()), "total_ms": float(df["total_ms"].median())})
    return pd.DataFrame(rows).set_index(["chain", "parsing"])


# --- §4.3: moving values between the frame and the stack ------------------------------------------

def frame_instructions() -> pd.DataFrame:
    """Every instruction that loads a frame location onto the stack or stores into one, from the
    toolkit's opcode table: the explicit forms (a local-index operand) and their shortcuts (the
    location in the opcode). Columns: name, kind (load/store), type letter, slot (shortcuts)."""
    rows = []
    for op, name in sorted(O.NAME.items()):
        if O.FORMAT[op] != "l" or not name.endswith(("load", "store")):
            continue          # ret also takes a local index, but jumps rather than moving a value
        kind = "load" if name.endswith("load") else "store"
        rows.append({"name": name, "kind": kind, "type": name[0], "slot": None})
        for _, oname in sorted(O.NAME.items()):
            head, _, slot = oname.rpartition("_")
            if head == name and slot.isdigit():
                rows.append({"name": oname, "kind": kind, "type": name[0], "slot": int(slot)})
    return pd.DataFrame(rows)


def encoded_bytes(ins) -> int:
    """The bytes one instruction takes in a method's code, as the toolkit lays it out."""
    data = Code(1, 65535, [ins], [], ConstantPool()).to_bytes()
    return int.from_bytes(data[4:8], "big")


def relocate(ins, slot: int):
    """The instruction ``ins`` (a load or store) moved to frame location ``slot``: a shortcut where
    one exists, else the explicit form (which the toolkit prefixes with wide past its operand's reach)."""
    table = frame_instructions()
    row = table[table["name"] == ins.name]
    if row.empty:
        raise ValueError(f"{ins.name} does not move a value between the frame and the stack")
    kind, kind_type = row.iloc[0]["kind"], row.iloc[0]["type"]
    explicit = f"{kind_type}{kind}"
    shortcut = f"{explicit}_{slot}"
    if shortcut in O.OPCODE:
        return insn(shortcut)
    return insn(explicit, slot)


def section43(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.3's facts about relocating frame locations, counted from the opcode table and the
    toolkit's encoder, and its example. Index: fact. Column: value."""
    p = params or Params()
    table = frame_instructions()
    shortcuts = table.dropna(subset=["slot"])
    first_wide = next(s for s in range(65536) if encoded_bytes(insn("iload", s)) > 2)
    a, b = p.relocation_example
    before = insn(f"iload_{a}") if f"iload_{a}" in O.OPCODE else insn("iload", a)
    after = relocate(before, b)
    facts = {
        "load instruction types": float((table["kind"] == "load").sum()),
        "store instruction types": float((table["kind"] == "store").sum()),
        "typed families": float(table["type"].nunique()),
        "shortcut locations": float(shortcuts["slot"].nunique()),
        "highest shortcut location": float(shortcuts["slot"].max()),
        "locations without wide": float(first_wide),
        "example: from location": float(a),
        "example: to location": float(b),
        "example: bytes before": float(encoded_bytes(before)),
        "example: bytes after": float(encoded_bytes(after)),
        "example: opcode changes": float(before.op != after.op),
    }
    return pd.DataFrame({"value": facts}).rename_axis("fact")


# --- then vs now: the lab's toolkit as the transformer, timed stage by stage -----------------------

PUTFIELD = O.OPCODE["putfield"]


def _with_code(cf):
    """(method, decoded code) for every method that has code: the lazy parse of the bytecode."""
    return [(m, m.code()) for m in cf.methods if m.attribute("Code") is not None]


def entry_splices(cf) -> dict:
    """Constant-pool entries for the entry call: the Hook's Methodref once, a String naming each method."""
    ref = cf.pool.add_member_ref("Methodref", *HOOK)
    return {m.name + m.descriptor: [insn("ldc_w", cf.pool.add_string(f"{cf.name}.{m.name}{m.descriptor}")),
                                    insn("invokestatic", ref)]
            for m in cf.methods if m.attribute("Code") is not None}


def observable_splice(cf):
    """Figure 1's field and splice: ``boolean dirty`` added; ``aload_0; iconst_1; putfield dirty``."""
    cf.fields.append(Member(0x0001, cf.pool.add_utf8(DIRTY[0]), cf.pool.add_utf8(DIRTY[1]), [], cf.pool))
    ref = cf.pool.add_member_ref("Fieldref", cf.name, *DIRTY)
    return lambda: [insn("aload_0"), insn("iconst_1"), insn("putfield", ref)]


def figure1_loop(code, make) -> tuple:
    """Figure 1's loop on the toolkit's list of items: after each putfield insert the splice, fetch the
    instructions again (``insts = code.getInstructions()``) and skip past the splice.
    Returns (insertions, items moved or fetched again: the loop's quadratic work)."""
    k = n = moved = 0
    while k < len(code.items):
        item = code.items[k]
        if getattr(item, "op", None) == PUTFIELD:
            splice = make()
            code.insert(k + 1, splice)
            code.instructions()
            moved += len(code.items)
            k += len(splice)
            n += 1
        k += 1
    return n, moved


def one_pass(code, make) -> int:
    """The same splices placed in one pass that builds a new list (what an iterator over a linked list
    does). Returns insertions."""
    code.decoded_frames()     # frames are held by label before the items move
    out, n = [], 0
    for item in code.items:
        out.append(item)
        if getattr(item, "op", None) == PUTFIELD:
            out.extend(make())
            n += 1
    code.items = out
    return n


def _non_static(pairs):
    return [(m, c) for m, c in pairs if not m.access & 0x0008]


class PipelineTimer:
    """One class through the stages, each timed with ``clock`` (seconds): a small stopwatch."""

    def __init__(self, clock):
        self.clock, self.times = clock, {}

    def run(self, stage: str, fn, *args, **kwargs):
        t0 = self.clock()
        out = fn(*args, **kwargs)
        self.times[stage] = self.times.get(stage, 0.0) + (self.clock() - t0)
        return out


def time_class(data: bytes, clock, *, linear: bool = True, chain: bool = True) -> dict:
    """Time one class through the toolkit: the entry transformer's stages (lazy parse, hashed lookup),
    and the ablations: eager parse, linear lookup, Figure 1's loop against one pass (Automatic
    Observable), the interface marker lazily and eagerly, and two transformers chained through
    bytes against one shared parse. Seconds per stage, and the counts each stage's work follows."""
    t = PipelineTimer(clock)
    cf = t.run("parse", ClassFile.parse, data)
    pairs = t.run("decode", _with_code, cf)
    splices = t.run("constant_pool", entry_splices, cf)
    hashed_comparisons = cf.pool.comparisons

    def insert_all():
        for m, code in pairs:
            code.insert_at_entry(splices[m.name + m.descriptor])
            code.max_stack = max(code.max_stack, 1)

    def linearise():
        for m, code in pairs:
            m.set_code(code)
        return cf.to_bytes()

    t.run("insert", insert_all)
    out = t.run("linearise", linearise)
    row = {"bytes": len(data), "bytes_out": len(out), "pool": len(cf.pool), "methods": len(pairs),
           "instructions": sum(len(c.instructions()) - 2 for _, c in pairs),
           "hashed_comparisons": hashed_comparisons}
    t.run("eager_parse", ClassFile.parse, data, eager=True)
    t.run("marker_lazy", _marker, data, eager=False)
    t.run("marker_eager", _marker, data, eager=True)
    if linear:
        lin = ClassFile.parse(data, lookup="linear")
        _with_code(lin)
        t.run("constant_pool_linear", entry_splices, lin)
        row["linear_comparisons"] = lin.pool.comparisons
    for label, place in (("figure1", figure1_loop), ("one_pass", one_pass)):
        obs = ClassFile.parse(data)
        targets = _non_static(_with_code(obs))
        done = t.run(label, _place_all, targets, place, observable_splice(obs))
        row["observable_items"] = sum(len(c.items) for _, c in targets)
        if label == "figure1":
            row["putfields"], row["figure1_moved"] = sum(d[0] for d in done), sum(d[1] for d in done)
    if chain:
        t.run("chain_shared", _chain_shared, data)
        t.run("chain_bytes", _chain_bytes, data)
    row.update({f"{k}_s": v for k, v in t.times.items()})
    return row


def _place_all(targets, place, make) -> list:
    return [place(code, make) for _, code in targets]


def _marker(data: bytes, *, eager: bool) -> bytes:
    """§4.1's example: parse, add the interface Transformed, write."""
    cf = ClassFile.parse(data, eager=eager)
    cf.interfaces.append(cf.pool.add_class(MARKER))
    return cf.to_bytes()


def _entry_in_place(cf):
    splices = entry_splices(cf)
    pairs = _with_code(cf)
    for m, code in pairs:
        code.insert_at_entry(splices[m.name + m.descriptor])
        code.max_stack = max(code.max_stack, 1)
    return pairs


def _observable_in_place(cf, pairs):
    make = observable_splice(cf)
    for _, code in _non_static(pairs):
        if one_pass(code, make):
            code.max_stack += 2


def _chain_shared(data: bytes) -> bytes:
    """Entry call, then Automatic Observable, on one parse (JOIE's ClassInfo)."""
    cf = ClassFile.parse(data)
    pairs = _entry_in_place(cf)
    _observable_in_place(cf, pairs)
    for m, code in pairs:
        m.set_code(code)
    return cf.to_bytes()


def _chain_bytes(data: bytes) -> bytes:
    """The same two transformers, each parsing the bytes the other wrote (java.lang.instrument's chain)."""
    cf = ClassFile.parse(data)
    for m, code in _entry_in_place(cf):
        m.set_code(code)
    cf = ClassFile.parse(cf.to_bytes())
    pairs = _with_code(cf)
    _observable_in_place(cf, pairs)
    for m, code in pairs:
        m.set_code(code)
    return cf.to_bytes()


@one_core()
def measure_pipeline(classes, *, clock, params: Params | None = None, linear: bool = True,
                     chain: bool = True) -> pd.DataFrame:
    """Time every class of ``classes`` (an iterable of (name, bytes), such as
    :func:`pysim.jvm.corpus.jdk_classes`) through :func:`time_class`; 'fetch_s' is the time to get
    each class from the iterable (for the JDK's jmods: inflating it from the archive). Beside each,
    untimed, what the 1998 model predicts for that very class ('model_<transformer>_ms': JOIE on the
    Ultra 1, from :func:`shape_of`).

    ``clock`` is a wall clock in seconds (``time.perf_counter``). One row per class.
    """
    p = params or Params()
    rows, it = [], iter(classes)
    while True:
        t0 = clock()
        try:
            name, data = next(it)
        except StopIteration:
            break
        fetch = clock() - t0
        row = {"class": name, "fetch_s": fetch, **time_class(data, clock, linear=linear, chain=chain)}
        shape = shape_of(ClassFile.parse(data), len(data))
        for name_ in TRANSFORMERS:
            row[f"model_{name_}_ms"] = stage_ms(transform(shape, (name_,), p, joie_design(p)), p)["total_ms"]
        rows.append(row)
    if not rows:
        raise ValueError("measure_pipeline needs at least one class")
    return pd.DataFrame(rows).set_index("class")


def _slope(x, y) -> tuple:
    """Least-squares slope of log(y) on log(x) over the points where both are positive, and its r^2."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 3:
        return float("nan"), float("nan")
    lx, ly = np.log(x[ok]), np.log(y[ok])
    b, a = np.polyfit(lx, ly, 1)
    resid = ly - (a + b * lx)
    total = ((ly - ly.mean()) ** 2).sum()
    return float(b), float(1 - (resid ** 2).sum() / total) if total > 0 else 1.0


#: Each timed stage, and the count its work should follow: (stage column, count column or expression).
SCALING = {
    "parse (lazy)": ("parse_s", "pool"),
    "parse (eager)": ("eager_parse_s", "pool + instructions"),
    "decode bytecode": ("decode_s", "instructions"),
    "constant pool, hashed": ("constant_pool_s", "hashed_comparisons"),
    "constant pool, linear": ("constant_pool_linear_s", "linear_comparisons"),
    "insert at entry": ("insert_s", "instructions"),
    "linearise": ("linearise_s", "instructions"),
    "Figure 1 loop": ("figure1_s", "observable_items + figure1_moved"),
    "one pass": ("one_pass_s", "observable_items"),
}


def scaling(measured: pd.DataFrame, regressor: str = "bytes") -> pd.DataFrame:
    """How each stage's time grows with the class (log-log slope against ``regressor``), beside how
    its operation count grows: if time follows the count, the two exponents agree.

    Index: stage. Columns: time_exponent, time_r2, count, count_exponent, classes.
    """
    rows = []
    for stage, (col, count) in SCALING.items():
        if col not in measured:
            continue
        n = measured.eval(count) if "+" in count else measured[count]
        b, r2 = _slope(measured[regressor], measured[col])
        bc, _ = _slope(measured[regressor], n)
        rows.append({"stage": stage, "time_exponent": b, "time_r2": r2, "count": count, "count_exponent": bc,
                     "classes": int(((measured[regressor] > 0) & (measured[col] > 0)).sum())})
    return pd.DataFrame(rows).set_index("stage")


# --- then vs now: a real java.lang.instrument agent on ASM ----------------------------------------

#: Debian's ASM (libasm-java): the agent is compiled against it and carries its classes.
ASM_JARS = ("/usr/share/java/asm.jar",)
#: Third-party classes the measured program loads: ASM's tree and commons, BCEL and Javassist
#: (libasm-java, libbcel-java, libjavassist-java), bytecode toolkits that descend from JOIE's era.
THIRD_PARTY_JARS = ("/usr/share/java/asm.jar", "/usr/share/java/asm-tree.jar", "/usr/share/java/asm-commons.jar",
                    "/usr/share/java/bcel.jar", "/usr/share/java/javassist.jar")
#: What the agent does to each class: nothing installed; installed but returning null (the JVM's hook
#: alone); ASM read and written back unchanged; a call inserted at every method's entry; the same
#: with every stack-map frame recomputed (COMPUTE_FRAMES).
AGENT_MODES = ("plain", "hook", "copy", "entry", "frames")

AGENT_JAVA = r"""package joie;

import java.io.*;
import java.lang.instrument.*;
import java.security.ProtectionDomain;
import java.util.*;
import org.objectweb.asm.*;

/** JOIE's load-time transformation as java.lang.instrument does it: a transformer per class loaded. */
public final class Agent implements ClassFileTransformer {
    private final String mode, stats;
    private final StringBuilder batch = new StringBuilder();
    private ClassLoader current;
    private int failures;

    Agent(String mode, String stats) { this.mode = mode; this.stats = stats; }

    public static void premain(String args, Instrumentation inst) {
        String[] a = (args == null ? "entry" : args).split(",", 2);
        inst.addTransformer(new Agent(a[0], a.length > 1 ? a[1] : ""));
    }

    public synchronized byte[] transform(ClassLoader loader, String name, Class<?> redefined,
                                         ProtectionDomain domain, byte[] bytes) {
        if (loader == null || loader == ClassLoader.getSystemClassLoader()
                || loader == ClassLoader.getPlatformClassLoader()) return null;   // the program's classes only
        if (loader != current) { flush(); current = loader; }                      // one batch per loader
        long t0 = System.nanoTime();
        byte[] out = null;
        try { out = rewrite(bytes, loader); } catch (Throwable e) { failures++; }
        long ns = System.nanoTime() - t0;
        batch.append(name).append(' ').append(bytes.length).append(' ')
             .append(out == null ? bytes.length : out.length).append(' ').append(ns).append('\n');
        return out;
    }

    private void flush() {
        if (batch.length() == 0 || stats.isEmpty()) return;
        try (Writer w = new FileWriter(stats)) { w.write("# failures " + failures + "\n" + batch); }
        catch (IOException e) { failures++; }
        batch.setLength(0);
    }

    private byte[] rewrite(byte[] bytes, ClassLoader loader) {
        if (mode.equals("hook")) return null;
        ClassReader reader = new ClassReader(bytes);
        boolean frames = mode.equals("frames");
        ClassWriter writer = frames ? new Frames(reader, loader) : new ClassWriter(reader, 0);
        ClassVisitor v = mode.equals("copy") ? writer : new EntryCall(writer, reader.getClassName());
        reader.accept(v, frames ? ClassReader.SKIP_FRAMES : 0);
        return writer.toByteArray();
    }

    /** ldc "<class>.<method><descriptor>"; invokestatic Hook.enter(String) first thing in every method. */
    static final class EntryCall extends ClassVisitor {
        private final String owner;
        EntryCall(ClassVisitor next, String owner) { super(Opcodes.ASM9, next); this.owner = owner; }

        @Override public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, ex);
            if (mv == null || (access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0) return mv;
            String label = owner + "." + name + desc;
            return new MethodVisitor(Opcodes.ASM9, mv) {
                @Override public void visitCode() {
                    super.visitCode();
                    super.visitLdcInsn(label);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, "@OWNER@", "@NAME@", "@DESC@", false);
                }
                @Override public void visitMaxs(int stack, int locals) { super.visitMaxs(Math.max(stack, 1), locals); }
            };
        }
    }

    /** COMPUTE_FRAMES, with superclasses read from class files rather than by loading classes mid-load. */
    static final class Frames extends ClassWriter {
        private final ClassLoader loader;
        Frames(ClassReader r, ClassLoader loader) { super(r, ClassWriter.COMPUTE_FRAMES); this.loader = loader; }

        @Override protected String getCommonSuperClass(String a, String b) {
            ClassReader ra = read(a), rb = read(b);
            if (ra == null || rb == null || (ra.getAccess() & Opcodes.ACC_INTERFACE) != 0
                    || (rb.getAccess() & Opcodes.ACC_INTERFACE) != 0) return "java/lang/Object";
            List<String> up = new ArrayList<>();
            for (ClassReader r = ra; r != null; r = read(r.getSuperName())) up.add(r.getClassName());
            for (ClassReader r = rb; r != null; r = read(r.getSuperName()))
                if (up.contains(r.getClassName())) return r.getClassName();
            return "java/lang/Object";
        }

        private ClassReader read(String type) {
            if (type == null) return null;
            String res = type + ".class";
            try (InputStream in = loader.getResource(res) != null ? loader.getResourceAsStream(res)
                                                                  : ClassLoader.getSystemResourceAsStream(res)) {
                return in == null ? null : new ClassReader(in);
            } catch (IOException e) { return null; }
        }
    }
}
"""

HOOK_JAVA = r"""package joie;

/** What transformed methods call on entry; on the boot class path, so every class loader sees it. */
public final class Hook {
    public static long calls;
    public static void enter(String where) { calls++; }
}
"""

#: The builder (a snippet run through the harness): compile the agent with the JDK's own compiler
#: (javax.tools), then write hook.jar and agent.jar (its classes, ASM's, and a Premain-Class manifest).
BUILDER_DECLS = r"""
static void add(JarOutputStream jar, String name, byte[] data) throws IOException {
    jar.putNextEntry(new JarEntry(name)); jar.write(data); jar.closeEntry();
}
static void buildAgent(String dir, String asm) throws Exception {
    Path d = Paths.get(dir), classes = d.resolve("classes");
    if (Files.exists(d.resolve("agent.jar"))) return;
    javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
    if (javac == null) throw new IllegalStateException("this Java has no compiler (javax.tools)");
    int rc = javac.run(null, null, null, "-nowarn", "-cp", asm, "-d", classes.toString(),
                       d.resolve("Agent.java").toString(), d.resolve("Hook.java").toString());
    if (rc != 0) throw new IllegalStateException("javac failed on the agent (exit " + rc + ")");
    try (JarOutputStream hook = new JarOutputStream(Files.newOutputStream(d.resolve("hook.jar")))) {
        add(hook, "joie/Hook.class", Files.readAllBytes(classes.resolve("joie/Hook.class")));
    }
    Manifest mf = new Manifest();
    mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    mf.getMainAttributes().putValue("Premain-Class", "joie.Agent");
    mf.getMainAttributes().putValue("Boot-Class-Path", "hook.jar");
    Path tmp = d.resolve("agent.jar.tmp");
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(tmp), mf)) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(classes.resolve("joie"), "Agent*.class")) {
            for (Path p : ds) add(jar, "joie/" + p.getFileName(), Files.readAllBytes(p));
        }
        for (String lib : asm.split(":")) {
            try (JarFile jf = new JarFile(lib)) {
                for (Enumeration<JarEntry> e = jf.entries(); e.hasMoreElements();) {
                    JarEntry x = e.nextElement();
                    if (x.getName().endsWith(".class") && !x.getName().startsWith("META-INF/")
                            && !x.getName().endsWith("module-info.class"))
                        add(jar, x.getName(), jf.getInputStream(x).readAllBytes());
                }
            }
        }
    }
    Files.move(tmp, d.resolve("agent.jar"));
}
"""

#: The measured program: every iteration defines the third-party classes through a fresh class loader
#: and links them (getDeclaredMethods() links a class, so the JVM verifies what the agent wrote).
WORKLOAD_DECLS = r"""
static URL[] urls;
static String[] names;
static List<String> listClasses(String jars) throws Exception {
    List<String> out = new ArrayList<>();
    List<URL> u = new ArrayList<>();
    for (String j : jars.split(":")) {
        u.add(new File(j).toURI().toURL());
        try (JarFile jf = new JarFile(j)) {
            for (Enumeration<JarEntry> e = jf.entries(); e.hasMoreElements();) {
                String n = e.nextElement().getName();
                if (n.endsWith(".class") && !n.startsWith("META-INF/") && !n.endsWith("module-info.class"))
                    out.add(n.substring(0, n.length() - 6).replace('/', '.'));
            }
        }
    }
    urls = u.toArray(new URL[0]);
    Collections.sort(out);
    return out;
}
static String[] loadable(List<String> all, int every) throws Exception {
    List<String> ok = new ArrayList<>();
    try (URLClassLoader l = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
        for (int i = 0; i < all.size(); i += every) {
            try { Class.forName(all.get(i), false, l).getDeclaredMethods(); ok.add(all.get(i)); }
            catch (NoClassDefFoundError | ClassNotFoundException | TypeNotPresentException e) { }
        }
    }
    return ok.toArray(new String[0]);
}
static long loadAll() {
    long k = 0;
    try (URLClassLoader l = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
        for (String n : names) k += Class.forName(n, false, l).getDeclaredMethods().length;
    } catch (Exception e) { throw new RuntimeException(e); }
    return k;
}
"""

_JAVA_IMPORTS = ("java.util.*", "java.util.jar.*", "java.net.*", "java.nio.file.*")


def agent_sources() -> dict:
    """The agent's Java sources, by file name (the entry call names :data:`HOOK`)."""
    owner, name, desc = HOOK
    agent = AGENT_JAVA.replace("@OWNER@", owner).replace("@NAME@", name).replace("@DESC@", desc)
    return {"Agent.java": agent, "Hook.java": HOOK_JAVA}


def _digest(text: str) -> str:
    """A stable short digest (FNV-1a, 64 bits): names a build folder by its sources."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def _readable(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class AgentRuns:
    """What :func:`agent_experiment` measured: per mode, and per class for each agent mode."""

    available: bool
    reason: str = ""
    modes: pd.DataFrame | None = None     # index mode
    classes: pd.DataFrame | None = None   # index (mode, class)


def _not_available(reason: str) -> AgentRuns:
    return AgentRuns(False, f"not available: {reason}")


def build_agent(*, timeout_s: float = 180.0):
    """Write the agent's sources and build agent.jar and hook.jar (cached by their sources).

    Returns (folder, None) or (None, why not)."""
    from pysim.harness.runners import PipeClock, Snippet, build, cache_dir

    missing = [j for j in ASM_JARS if not _readable(j)]
    if missing:
        return None, f"ASM is not installed ({', '.join(missing)}; Debian package libasm-java)"
    sources = agent_sources()
    folder = cache_dir() / f"atc98_cohen-agent-{_digest(''.join(sources.values()) + BUILDER_DECLS)}"
    if _readable(str(folder / "agent.jar")):
        return folder, None
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (folder / name).write_text(text)
    builder = Snippet("java", "sink += 0;", setup=f'buildAgent("{folder}", "{":".join(ASM_JARS)}");',
                      decls=BUILDER_DECLS, includes=_JAVA_IMPORTS)
    command, why = build(builder, timeout_s=timeout_s)
    if command is None:
        return None, why
    try:
        with PipeClock(command, timeout_s=timeout_s):
            pass                                   # the builder's setup ran before it said "ready"
    except (RuntimeError, TimeoutError, OSError) as e:
        return None, f"building the agent failed: {e}"
    return folder, None


def _read_stats(path) -> tuple:
    """(failures, per-class DataFrame) from the agent's last complete batch, or (0, None)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0, None
    failures = int(lines[0].split()[-1]) if lines and lines[0].startswith("# failures") else 0
    rows = [line.split() for line in lines[1:] if line.strip()]
    df = pd.DataFrame([{"class": r[0], "bytes_in": int(r[1]), "bytes_out": int(r[2]), "transform_us": int(r[3]) / 1e3}
                       for r in rows])
    return failures, (df.set_index("class") if len(df) else None)


def agent_experiment(*, quick: bool = False, modes=None, tries: int | None = None, jars=THIRD_PARTY_JARS,
                     timeout_s: float = 180.0) -> AgentRuns:
    """Load third-party classes through a fresh class loader, again and again, with and without the
    agent, timed by the lmbench harness (:mod:`pysim.harness`): the median seconds of an iteration per
    mode, and the agent's own nanosecond timing of each class it transformed (its last full batch).

    The program loads every second class of the jars (and the classes those need), five tries per
    mode; quick mode every eighth, in two modes (plain and entry), three tries each.
    """
    from pysim.harness import lmbench
    from pysim.harness.runners import PipeClock, Snippet, build

    modes = tuple(modes or (("plain", "entry") if quick else AGENT_MODES))
    unknown = [m for m in modes if m not in AGENT_MODES]
    if unknown:
        raise ValueError(f"modes must be among {AGENT_MODES}, got {unknown}")
    tries = tries or (3 if quick else 5)
    if tries < 1:
        raise ValueError(f"tries must be >= 1, got {tries!r}")
    present = [j for j in jars if _readable(j)]
    if not present:
        return _not_available(f"none of the third-party jars is installed ({', '.join(jars)})")
    folder, why = build_agent(timeout_s=timeout_s)
    if folder is None:
        return _not_available(why)
    every = 8 if quick else 2
    workload = Snippet("java", "sink += loadAll();", decls=WORKLOAD_DECLS, includes=_JAVA_IMPORTS,
                       setup=f'names = loadable(listClasses("{":".join(present)}"), {every});')
    command, why = build(workload, timeout_s=timeout_s)
    if command is None:
        return _not_available(why)
    rows, per_class = [], []
    for mode in modes:
        stats = folder / f"stats-{mode}.txt"
        if _readable(str(stats)):
            stats.unlink()
        argv = list(command) if mode == "plain" else \
            [command[0], f"-javaagent:{folder / 'agent.jar'}={mode},{stats}", *command[1:]]
        try:
            with PipeClock(argv, timeout_s=timeout_s) as clock:
                result = lmbench.bench(clock, 1e-3, tries=tries)
        except (RuntimeError, TimeoutError, OSError, ValueError) as e:
            return _not_available(f"the {mode} run failed: {str(e)[-600:]}")
        failures, classes = _read_stats(stats)
        per = sorted(result.per_iteration_s)
        row = {"mode": mode, "iteration_ms": 1e3 * result.value_s, "min_iteration_ms": 1e3 * per[0],
               "tries": tries, "failures": failures}
        if classes is not None:
            row.update({"classes": len(classes), "transform_us_median": classes["transform_us"].median(),
                        "transform_us_p90": classes["transform_us"].quantile(0.9),
                        "transform_ms_total": classes["transform_us"].sum() / 1e3,
                        "growth": classes["bytes_out"].sum() / classes["bytes_in"].sum()})
            per_class.append(classes.assign(mode=mode).reset_index().set_index(["mode", "class"]))
        rows.append(row)
    out = pd.DataFrame(rows).set_index("mode")
    if "classes" in out and "plain" in out.index:
        n = out["classes"].dropna().max()
        out["per_class_us"] = 1e3 * out["iteration_ms"] / n
        out["added_per_class_us"] = out["per_class_us"] - out.loc["plain", "per_class_us"]
        # the fastest try as well: on a shared machine other work only ever adds to a run
        out["added_per_class_us_min"] = 1e3 * (out["min_iteration_ms"] - out.loc["plain", "min_iteration_ms"]) / n
    return AgentRuns(True, "", out, pd.concat(per_class) if per_class else None)


# --- then and now, side by side ------------------------------------------------------------------

def _ratio_median(num, den) -> float:
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    ok = (num > 0) & (den > 0)
    return float(np.median(num[ok] / den[ok])) if ok.any() else float("nan")


def _loop_ratio(s44: pd.DataFrame) -> float:
    """Figure 1's splicing (scan and insertions) in JOIE's arrays over the planned list, median class."""
    cols = ["splice_ms", "insert_ms"]
    return float(s44.loc[("JOIE", "observable", "median"), cols].sum()
                 / s44.loc[("planned", "observable", "median"), cols].sum())


def toolkit_ms(measured: pd.DataFrame) -> pd.Series:
    """Per class, milliseconds to parse and transform with the entry call in the lab's toolkit."""
    return 1e3 * measured[["parse_s", "decode_s", "constant_pool_s", "insert_s", "linearise_s"]].sum(axis=1)


def then_and_now(measured: pd.DataFrame | None, agent: AgentRuns | None, params: Params | None = None, *,
                 rng=0, quick=False) -> pd.DataFrame:
    """The paper's statements beside the model of 1998 and today's measurements.

    ``measured`` comes from :func:`measure_pipeline` (None: not measured), ``agent`` from
    :func:`agent_experiment`. Index: statement. Columns: section, unit, then_model (JOIE on the
    Ultra 1, synthetic corpus), then_model_jdk (the same model on the measured JDK classes),
    now_toolkit (pysim.jvm in Python), now_agent (ASM in the JVM), criterion, holds_now (whether
    today's fastest measurement bears the statement out, by the criterion).
    """
    p = params or Params()
    s44 = section44(p, rng=rng, quick=quick)
    shapes = corpus(p, rng, quick)
    joie = joie_design(p)
    pair = ("entry", "observable")
    kept = per_class(shapes, pair, p, joie)["total_ms"].median()
    through_bytes = per_class(shapes, pair, p, dataclasses.replace(joie, keep_state=False))["total_ms"].median()
    lazy = per_class(shapes, ("interface",), p, joie)["total_ms"].median()
    eager = per_class(shapes, ("interface",), p, dataclasses.replace(joie, lazy=False))["total_ms"].median()
    m = measured if measured is not None else pd.DataFrame()
    with_puts = m[m["putfields"] > 0] if "putfields" in m else m
    a = agent.modes if agent is not None and agent.available else pd.DataFrame()

    def col(df, c, f):
        return f(df[c]) if c in df else float("nan")

    def agent_val(mode, c):
        return float(a.loc[mode, c]) if mode in a.index and c in a else float("nan")

    rows = [
        ("parse and transform a typical class (median)", "§4.4", "ms",
         s44.loc[("JOIE", "entry", "median"), "total_ms"], col(m, "model_entry_ms", np.median),
         float(np.median(toolkit_ms(m))) if len(m) else float("nan"),
         agent_val("entry", "transform_us_median") / 1e3, "at least 1 ms", lambda v: v >= 1),
        ("parse and transform a larger typical class (90th percentile)", "§4.4", "ms",
         s44.loc[("JOIE", "entry", "p90"), "total_ms"], col(m, "model_entry_ms", lambda s: s.quantile(0.9)),
         float(toolkit_ms(m).quantile(0.9)) if len(m) else float("nan"),
         agent_val("entry", "transform_us_p90") / 1e3, "at least 10 ms", lambda v: v >= 10),
        ("constant-pool work with an index, over linear search (median class)", "§4.4", "ratio",
         s44.loc[("planned", "entry", "median"), "constant_pool_ms"] / s44.loc[("JOIE", "entry", "median"),
                                                                               "constant_pool_ms"],
         float("nan"), _ratio_median(m.get("constant_pool_s", []), m.get("constant_pool_linear_s", [])),
         float("nan"), "at most 0.5", lambda v: v <= 0.5),
        ("Figure 1's loop (insert into the array, fetch it again) over one pass (median class with putfields)",
         "§4.4", "ratio", _loop_ratio(s44), float("nan"),
         _ratio_median(with_puts.get("figure1_s", []), with_puts.get("one_pass_s", [])), float("nan"),
         "above 1", lambda v: v > 1),
        ("the interface marker parsed lazily, over eagerly (median class)", "§4.1", "ratio", lazy / eager,
         float("nan"), _ratio_median(m.get("marker_lazy_s", []), m.get("marker_eager_s", [])), float("nan"),
         "below 1", lambda v: v < 1),
        ("two transformers through bytes, over one shared parse (median class)", "§4.1", "ratio",
         through_bytes / kept, float("nan"), _ratio_median(m.get("chain_bytes_s", []), m.get("chain_shared_s", [])),
         float("nan"), "above 1", lambda v: v > 1),
        ("loading and linking a class without a transformer", "§4.4", "ms", float("nan"), float("nan"), float("nan"),
         agent_val("plain", "per_class_us") / 1e3, "", None),
        ("what the agent adds to loading a class (entry call)", "§4.4", "ms", float("nan"), float("nan"),
         float("nan"), agent_val("entry", "added_per_class_us") / 1e3, "", None),
        ("recomputing every stack-map frame, over keeping them (median class)", "now only", "ratio", float("nan"),
         float("nan"), float("nan"), agent_val("frames", "transform_us_median") / agent_val("entry", "transform_us_median"),
         "", None),
    ]
    out = []
    for stmt, sec, unit, then, then_jdk, tk, ag, crit, test in rows:
        now = [v for v in (ag, tk) if not math.isnan(v)]
        holds = test(now[0]) if test is not None and now else None
        out.append({"statement": stmt, "section": sec, "unit": unit, "then_model": then, "then_model_jdk": then_jdk,
                    "now_toolkit": tk, "now_agent": ag, "criterion": crit, "holds_now": holds})
    return pd.DataFrame(out).set_index("statement")


def agent_scaling(runs: AgentRuns) -> pd.DataFrame:
    """How the agent's time per class grows with the class's bytes (log-log slope), per mode.

    Index: mode. Columns: exponent, r2, classes, median_us.
    """
    if not runs.available or runs.classes is None:
        return pd.DataFrame(columns=["exponent", "r2", "classes", "median_us"]).rename_axis("mode")
    rows = []
    for mode, df in runs.classes.groupby(level="mode"):
        b, r2 = _slope(df["bytes_in"], df["transform_us"])
        rows.append({"mode": mode, "exponent": b, "r2": r2, "classes": len(df),
                     "median_us": float(df["transform_us"].median())})
    return pd.DataFrame(rows).set_index("mode")


def corpus_quantiles(shapes) -> pd.DataFrame:
    """Quantiles of a corpus's classes: bytes, pool entries, methods, instructions, putfields.

    Index: quantile (p10, median, p90). Works on :class:`ClassShape` lists and on
    :func:`measure_pipeline`'s table alike.
    """
    if isinstance(shapes, pd.DataFrame):
        df = shapes[["bytes", "pool", "methods", "instructions", "putfields"]]
    else:
        df = pd.DataFrame([{"bytes": sh.total_bytes, "pool": sh.pool_entries, "methods": len(sh.methods),
                            "instructions": sh.instructions, "putfields": sum(m.putfields for m in sh.methods)}
                           for sh in shapes])
    out = df.quantile([0.1, 0.5, 0.9])
    out.index = ["p10", "median", "p90"]
    return out.rename_axis("quantile")
