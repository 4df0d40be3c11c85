"""Deducing similarities in Java sources from bytecodes (Baker & Manber, USENIX ATC 1998).

Regenerates Figure 1 (a section of a disassembled class file in the paper's
one-item-a-line format), Figure 2 (the same after the offset encoding),
§3.2's worked edit (a 4 changed to a 5 in two places of a 182-line file:
diff and siff on the raw and on the encoded listing), §4.1's experiment
(random changes, grouped by source similarity as Table 1 was) and what §2.4,
§3.3 and §6 say the tools make of named edits (an added block, local edits,
reordered methods, a jump across an insertion, a renamed variable).

First principles: the paper's own mechanism, run on real class-file bytes.

* The listing (§3.2): a method's code read with :mod:`pysim.jvm`, one item a
  line, typed ``o`` (opcode), ``c`` (pool index), ``v`` (local variable),
  ``i``/``u`` (signed/unsigned integer), ``j`` (jump, from bytes to lines):
  :func:`listing`.
* The offset encoding (§3.4, as in dup): every pool and local-variable index
  becomes minus the number of lines since the previous use of the same index
  (0 for the first), pool and locals apart, over the whole file:
  :func:`encode_offsets`.
* siff (§2.1): fingerprints of k-byte blocks, kept when their hash is 0
  modulo p, so a block sampled in one file is sampled in every file that
  holds it; A's similarity to B is the share of A's fingerprints found in B
  (asymmetric): :func:`fingerprints`, :func:`siff_similarity`,
  :func:`siff_pairs` (all against all through an inverted index). Winnowing
  is the alternative sampling rule (``sampling="winnow"``).
* dup (§2.2, §3.3): jumps turned into labels, parameters (pool and local
  indices, labels, integers) typed apart, and parameterised matches found
  exactly: in prev-offset form a section starting at s matches at t when the
  exact parts agree and each parameter's previous occurrence agrees or lies
  before s, so along a diagonal the earliest start of a match ending at t is
  a running maximum (:func:`scan_diagonals`); seeds of equal window hashes
  pick the diagonals (:func:`pmatches`, :func:`dup_pairs`).
* diff (§2.3): Myers' O(ND) shortest edit script (:func:`diff_script`),
  counted as GNU diff's normal output (:func:`diff_stats`).
* Programs: the paper's are not given, so :class:`ProgramWriter` writes
  Java-like classes (int fields and methods, loops, conditions, calls) that
  print as source and that :class:`Compiler` turns into class files through
  :mod:`pysim.jvm`: locals numbered in declaration order, the constant pool
  sorted by key as the JDK 1.x javac wrote it (sun.tools.asm.ConstantPool)
  or in order of first use as javac writes it today. The edits of §3.2 and
  §4.1 are made on these programs.

Nothing is calibrated. Taken as given (see INPUTS): Figure 1's pool and local
indices, the jump convention its ``j+17`` shows, and the distances Figure 2
prints for indices whose previous use lies before the excerpt.

Then vs now (real, on this machine; the notebook passes in a clock and a
javac batch compiler, which a model cannot start itself): the whole pipeline
on the installed JDK's class files (:func:`jdk_corpus`,
:func:`near_duplicates`, :func:`query_one`, :func:`corpus_then_and_now`:
§4.2's pair counts and §4.4's times beside today's) and on javac-compiled
mutations of real JDK sources made with :func:`pysim.workloads.java_source.mutate`
(:func:`mutation_plan`, :func:`mutation_results`, :func:`mutation_statements`:
source against bytecode similarity, and the paper's statements about edits
checked on today's compiler); :func:`then_and_now` joins the two.

Not reproduced: Tables 1-3, whose numbers are lost in the text we hold; the
counts of §4.2-§4.3 over the paper's 2056 files and its blind tester's 12
changed programs, and §4.4's times, none of which the text describes enough
to rebuild. See papers/atc98_baker/paper.yaml.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from pysim.jvm import ClassFile, Code, Label, insn
from pysim.jvm import corpus as jdk
from pysim.jvm import opcodes as O
from pysim.jvm.code import decode
from pysim.models import Counterfactual, Inputs, cells
from pysim.params import ModelParams, assumed, given, stated
from pysim.rng import make_rng
from pysim.workloads import java_source

PARAMETER_KINDS = ("c", "v", "i", "u", "L")   # §3.3: dup's parameter tokens, each type apart
SIFF_BANDS = (("90-100", 90.0, 100.0), ("80-89", 80.0, 90.0), ("70-79", 70.0, 80.0))  # §4.1's groups
SCENARIOS = ("identical", "local renamed", "local edits", "block added", "methods reordered",
             "jump over insertion")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs: the listing format, the tools' settings, the compiler, the programs and their edits."""

    # the listing (§3.2) and Figure 1's excerpt
    figure1_excerpt: tuple = given(
        (("invokevirtual", 106), ("ifeq", "after"), ("aload", 4), ("getfield", 253), ("aload", 5),
         ("invokevirtual", 102), ("aload", 4), ("getfield", 253), ("aload", 4), ("invokevirtual", 260),
         ("label", "after"), ("aload", 5), ("getfield", 253)),
        "Figure 1: the excerpt's instructions (its comments name them) with their pool and local indices; "
        "the jump lands after the two calls, where the stack is empty again")
    figure2_previous_use: tuple = given(
        (("c", 106, 26), ("v", 4, 10), ("c", 253, 10), ("v", 5, 10), ("c", 102, 26), ("c", 260, 26)),
        "Figure 2: for each index first used in the excerpt after a use before it, the lines back to that use")
    jump_lines_from: str = given("offset line", "Figure 1, line 4: j+17 reaches line 21 (the aload after the "
                                 "if's body) counted from the line holding the offset; from the opcode's line "
                                 "it would reach line 20, an operand", choices=("offset line", "opcode line"))
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    offset_encoding: bool = stated(True, "§3.4: siff and diff run on offset-encoded listings")
    dup_jump_labels: bool = stated(True, "§3.3: jumps are turned into 'goto label' form before dup runs")
    dup_parameters: bool = stated(True, "§2.2, §3.3: dup matches parameters (indices, labels, integers) "
                                        "up to a one-to-one renaming")
    # siff (§2.1)
    sampling: str = assumed("siff", "§2.1: 'if a sample taken from one file appears in another it is "
                                    "guaranteed to be taken there too': a block is kept when its hash is 0 "
                                    "modulo p; 'winnow' keeps each window's smallest hash instead",
                            choices=("siff", "winnow"))
    block_bytes: int = assumed(50, "§1: a block is 'a non-trivial segment of code, usually a few lines': "
                                   "50 bytes are about ten lines of listing, or a line or two of Java", ge=4)
    sample_modulus: int = assumed(8, "about one block in eight kept: fine enough that a 500-byte file "
                                     "(§4.2's smallest) still has a few fingerprints", ge=1)
    siff_threshold_pct: float = stated(50.0, "§4.2: 'allowing for at least 50% similarity'", gt=0, le=100)
    # dup (§2.2)
    dup_threshold_lines: int = stated(200, "§4.2: 'at least one common code section of 200 lines or more'",
                                      ge=2)
    dup_seed_lines: int = assumed(16, "the window whose hash seeds a candidate match: short against any "
                                      "threshold, long enough to be rare", ge=2)
    # the compiler
    pool_order: str = assumed("sorted", "JDK 1.0.2 and 1.1 (§5): sun.tools.asm.ConstantPool.write sorts the "
                                        "pool by a key per entry, numbers first; 'first use' is today's javac",
                              choices=("sorted", "first use"))
    pooled_constants: bool = assumed(True, "§3.2: changing a 4 to a 5 moved indices throughout the file, which "
                                           "a constant does only through a pool entry of its own; the text "
                                           "gives no other way")
    # the programs (the paper's are not given)
    source_lines: int = stated(182, "§3.2: 'a 182-line Java file'", ge=20)
    constant_edits: int = stated(2, "§3.2: 'changing a 4 to a 5 in two places'", ge=1)
    edited_from: int = stated(4, "§3.2: a 4 ...", ge=-1, le=5)
    edited_to: int = stated(5, "§3.2: ... changed to a 5", ge=-1, le=5)
    method_lines: int = assumed(20, "lines per method of the generated programs: a screenful, typical of "
                                    "the applets and libraries of 1998", ge=6)
    fields_per_class: int = assumed(6, "int fields of a generated class", ge=1)
    nesting_pct: float = assumed(25.0, "share of statements that open an if or a while block",
                                 ge=0, lt=100)
    experiment_programs: int = stated(2, "§4.1: 'We ran these tests on two different Java programs'", ge=1)
    experiment_lines: int = assumed(400, "the two programs of §4.1: not given; a class of a few hundred lines",
                                    ge=40)
    max_changes: int = assumed(60, "§4.1 varied the number of changes so that the source similarities fill "
                                   "the 70-79% group; in a 400-line program that takes changes of up to 60 "
                                   "statements", ge=1)
    low_siff_threshold_pct: float = stated(25.0, "§4.3: 'All 12 were found by siff when run with a 25% "
                                                 "similarity threshold'", gt=0, le=100)
    low_dup_threshold_lines: int = stated(50, "§4.3: '... and by dup when run with a 50-line threshold'", ge=2)
    # the paper's measurements (§4.2, §4.4), set beside this machine's in the then-vs-now tables
    paper_files: int = stated(2056, "§4.2: 2056 Java bytecode files")
    paper_collections: int = stated(38, "§4.2: from 38 collections")
    paper_siff_pairs: int = stated(634, "§4.2: siff reported 634 ordered pairs of at least 50% similarity")
    paper_siff_cross_pairs: int = stated(43, "§4.2: 43 between files in different collections")
    paper_siff_low_pairs: int = stated(1430, "§4.3: 1430 ordered pairs at a 25% threshold")
    paper_dup_pairs: int = stated(92, "§4.2: dup reported 92 ordered pairs with a common section of 200 lines")
    paper_siff_elapsed_s: float = stated(41.0, "§4.4: siff used 41 seconds of elapsed time")
    paper_siff_user_s: float = stated(4.0, "§4.4: and 4 seconds of user time")
    paper_dup_elapsed_s: float = stated(115.0, "§4.4: dup used 1 minute 55 seconds of elapsed time")
    paper_dup_user_s: float = stated(67.0, "§4.4: and 1 minute 7 seconds of user time")
    paper_encode_siff_s: float = stated(420.0, "§4.4: encoding the 2056 files took 7 minutes for siff")
    paper_encode_dup_s: float = stated(480.0, "§4.4: and 8 minutes (independently) for dup")
    paper_query_user_s: float = stated(0.2, "§4.4: one 50K bytecode against the index: 0.2 s of user time")
    paper_query_bytes: int = stated(50 * 1024, "§4.4: 'one 50K bytecode'")
    paper_index_pct: float = stated(5.0, "§4.4: the index occupied about 5% of the total size of all files")
    block_share_pct: float = assumed(60.0, "§2.4's added block (its size is not given), as a share of the file "
                                           "it joins: over half, so the block is a large part of the result", gt=0)

    def __post_init__(self):
        super().__post_init__()
        if self.edited_from == self.edited_to:
            raise ValueError(f"edited_to must differ from edited_from, got {self.edited_to!r}")
        if self.dup_seed_lines > self.dup_threshold_lines:
            raise ValueError(f"dup_seed_lines must be <= dup_threshold_lines ({self.dup_threshold_lines}), "
                             f"got {self.dup_seed_lines!r}")


FIGURE1_INDEX_LINES = ("2", "6", "8", "10", "12", "14", "16", "18", "20", "22", "24")
FIGURE2_OUTSIDE_LINES = ("2", "6", "8", "10", "12", "20")
FIGURE1_OPCODE_LINES = ("1", "3", "5", "7", "9", "11", "13", "15", "17", "19", "21", "23")
CALIBRATION = ()
INPUTS = (
    Inputs(("figure1_excerpt",), cells("figure1", FIGURE1_INDEX_LINES, ["value"]),
           "the excerpt's pool and local indices, taken as given"),
    Inputs((), cells("figure1", FIGURE1_OPCODE_LINES, ["value"]),
           "the opcodes' numbers are the JVM specification's for the mnemonics Figure 1 prints beside them"),
    Inputs(("jump_lines_from",), cells("figure1", ["4"], ["value"]),
           "the jump convention, read off Figure 1's j+17"),
    Inputs(("figure2_previous_use",), cells("figure2", FIGURE2_OUTSIDE_LINES, ["value"]),
           "offsets whose previous use lies outside the excerpt, taken as given"),
    Inputs((), cells("edit_example", ["encoded"], ["source_lines"]),
           "the program's length is §3.2's, a setting (source_lines) echoed in the table"),
)
COUNTERFACTUALS = (
    Counterfactual("no-offsets", {"offset_encoding": False},
                   "siff and diff on the raw disassembly, indices as the compiler wrote them (§3.2)"),
    Counterfactual("today's-javac", {"pool_order": "first use", "pooled_constants": False},
                   "a compiler that pools only what the code loads, in order of first use: an edited small "
                   "constant renumbers nothing"),
    Counterfactual("raw-listing-today", {"offset_encoding": False, "pool_order": "first use",
                                         "pooled_constants": False},
                   "raw indices from a compiler that numbers its pool by first use, so moving a method "
                   "renumbers what follows"),
    Counterfactual("dup-fixed-jumps", {"dup_jump_labels": False},
                   "dup on jumps encoded as fixed line offsets, the 'precomputed fixed encoding' of §3.3"),
    Counterfactual("dup-exact", {"dup_parameters": False},
                   "dup matching every token exactly, with no parameters"),
    Counterfactual("one-line-blocks", {"block_bytes": 4},
                   "siff blocks of a single short line, which §1's 'non-trivial segment of code, usually a "
                   "few lines' rules out"),
)


# --- the listing (§3.2) ------------------------------------------------------------------------

@dataclass(frozen=True)
class Listing:
    """A disassembled file: one item a line, (kind, value) with kind ``o`` (opcode), ``c`` (pool index),
    ``v`` (local variable), ``i``/``u`` (signed/unsigned integer) or ``j`` (jump, in lines); ``target``
    holds, for a jump line, the line of the opcode it jumps to (-1 elsewhere). Lines are numbered from 0
    across all methods."""

    kinds: tuple
    values: tuple
    target: tuple

    def __len__(self):
        return len(self.kinds)

    def text(self, params: Params | None = None) -> str:
        """The listing siff and diff read: offset-encoded (Figure 2), unless the encoding is switched off."""
        return render(encode_offsets(self, params))

    def raw_text(self) -> str:
        """The listing as disassembled (Figure 1), indices as the compiler wrote them."""
        return render(zip(self.kinds, self.values, strict=True))


def render(items) -> str:
    """Items (kind, value) as text: ``o182``, ``c-26``, ``v4``, ``j+17``."""
    out = []
    for kind, value in items:
        if kind == "o":
            out.append(f"o{value:03d}")
        elif kind == "j":
            out.append(f"j{value:+d}")
        else:
            out.append(f"{kind}{value}")
    return "\n".join(out) + "\n" if out else ""


def _operand_items(fmt: str, args: tuple) -> list:
    """The operand lines of one instruction; a jump's value is its target's byte offset for now."""
    if fmt in ("", "wide"):
        return []
    if fmt in ("b", "s"):
        return [("i", args[0])]
    if fmt == "l":
        return [("v", args[0])]
    if fmt == "i":
        return [("v", args[0]), ("i", args[1])]
    if fmt in ("c1", "c2", "indy"):
        return [("c", args[0])]
    if fmt in ("iface", "multi"):
        return [("c", args[0]), ("u", args[1])]
    if fmt == "atype":
        return [("u", args[0])]
    if fmt in ("j2", "j4"):
        return [("j", args[0])]
    if fmt == "table":
        default, low, high, targets = args
        return [("j", default), ("i", low), ("i", high), *(("j", t) for t in targets)]
    default, pairs = args  # lookup
    return [("j", default), ("u", len(pairs)), *itertools.chain.from_iterable((("i", k), ("j", t))
                                                                              for k, t in pairs)]


def method_code(method) -> bytes | None:
    """The code array of a method (None for abstract and native methods)."""
    attr = method.attribute("Code")
    if attr is None:
        return None
    length = int.from_bytes(attr.data[4:8], "big")
    return attr.data[8:8 + length]


def listing(methods, params: Params | None = None) -> Listing:
    """The paper's disassembly of the code of ``methods`` (pysim.jvm members, in order), jumps in lines."""
    p = params or Params()
    kinds, values, target = [], [], []
    for m in methods:
        code = method_code(m)
        if code is None:
            continue
        opcode_line, jumps = {}, []
        for offset, op, args, _wide in decode(code):
            line = len(kinds)
            opcode_line[offset] = line
            kinds.append("o")
            values.append(op)
            target.append(-1)
            for kind, value in _operand_items(O.FORMAT[op], args):
                if kind == "j":
                    jumps.append((len(kinds), line, value))
                kinds.append(kind)
                values.append(value)
                target.append(-1)
        for at, op_line, offset in jumps:
            to = opcode_line[offset]
            values[at] = to - (at if p.jump_lines_from == "offset line" else op_line)
            target[at] = to
    return Listing(tuple(kinds), tuple(values), tuple(target))


def class_listing(data: bytes, params: Params | None = None) -> Listing:
    """The listing of every method of a class file's bytes."""
    return listing(ClassFile.parse(data).methods, params)


# --- the offset encoding (§3.4) --------------------------------------------------------------------

def encode_offsets(lst: Listing, params: Params | None = None, *, history=()) -> tuple:
    """Items with each pool and local index replaced by minus the lines since its previous use (0 for
    the first), pool and locals apart. ``history`` gives (kind, index, lines back) for indices used
    before line 0: the offset of their first use here. With ``offset_encoding`` off, the items as they are."""
    p = params or Params()
    items = tuple(zip(lst.kinds, lst.values, strict=True))
    if not p.offset_encoding:
        return items
    earlier = {(kind, index): back for kind, index, back in history}
    last = {}
    out = []
    for n, (kind, value) in enumerate(items):
        if kind in ("c", "v"):
            key = (kind, value)
            prev = last.get(key)
            last[key] = n
            out.append((kind, prev - n if prev is not None else -earlier.get(key, 0)))
        else:
            out.append((kind, value))
    return tuple(out)


# --- siff (§2.1) ---------------------------------------------------------------------------------

_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads a polynomial hash over all 64 bits."""
    h = h ^ (h >> np.uint64(30))
    h = h * _MIX1
    h = h ^ (h >> np.uint64(27))
    h = h * _MIX2
    return h ^ (h >> np.uint64(31))


def block_hashes(data: bytes, k: int) -> np.ndarray:
    """A 64-bit hash of every k-byte block of ``data`` (empty if shorter than k)."""
    b = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    n = len(b) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    base = np.uint64(1099511628211)
    with np.errstate(over="ignore"):
        for t in range(k):
            h = h * base + b[t:t + n] + np.uint64(1)
        return _mix(h)


def fingerprints(text: str | bytes, params: Params | None = None) -> np.ndarray:
    """The sorted, distinct fingerprints siff keeps for a file."""
    p = params or Params()
    data = text.encode() if isinstance(text, str) else text
    h = block_hashes(data, p.block_bytes)
    if p.sampling == "siff":
        kept = h[h % np.uint64(p.sample_modulus) == 0]
    else:
        kept = _winnow(h, p.sample_modulus)
    return np.unique(kept)


def _winnow(h: np.ndarray, w: int) -> np.ndarray:
    """The smallest hash of every window of w consecutive block hashes."""
    if len(h) <= w:
        return h[:1] if len(h) == 0 else np.array([h.min()])
    windows = np.lib.stride_tricks.sliding_window_view(h, w)
    return windows.min(axis=1)


def siff_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Percent of A's fingerprints found in B: how much of A is contained in B (§4.2, asymmetric)."""
    if len(a) == 0:
        return 0.0
    return 100.0 * np.isin(a, b, assume_unique=True).sum() / len(a)


# --- diff (§2.3) ---------------------------------------------------------------------------------

@numba.njit(cache=True)
def _myers(a, b):
    """Myers' greedy O(ND) search; returns D and every frontier (k = -d..d step 2, row d at d(d+1)/2)."""
    n, m = a.size, b.size
    off = n + m + 1
    v = np.zeros(2 * (n + m) + 3, np.int64)
    trace = np.empty(1024, np.int64)
    used = 0
    for d in range(n + m + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[off + k] = x
            if x >= n and y >= m:
                return d, trace[:used]
        if used + d + 1 > trace.size:
            bigger = np.empty(2 * (used + d + 1), np.int64)
            bigger[:used] = trace[:used]
            trace = bigger
        for j in range(d + 1):
            trace[used + j] = v[off - d + 2 * j]
        used += d + 1
    return -1, trace[:used]


@numba.njit(cache=True)
def _myers_script(trace, d_end, n, m):
    """The edit script, walked back from (n, m): 0 keeps a line, 1 deletes one of a, 2 adds one of b."""
    ops = np.empty(n + m, np.int8)
    w = n + m
    x, y = n, m
    for d in range(d_end, 0, -1):
        base = (d - 1) * d // 2
        k = x - y
        down = k == -d or (k != d and trace[base + (k - 1 + d - 1) // 2] < trace[base + (k + 1 + d - 1) // 2])
        prev_k = k + 1 if down else k - 1
        prev_x = trace[base + (prev_k + d - 1) // 2]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            w -= 1
            ops[w] = 0
            x -= 1
            y -= 1
        w -= 1
        ops[w] = 2 if down else 1
        x, y = prev_x, prev_y
    while x > 0 and y > 0:
        w -= 1
        ops[w] = 0
        x -= 1
        y -= 1
    return ops[w:]


def diff_script(a, b) -> np.ndarray:
    """A shortest edit script from lines ``a`` to lines ``b`` (Myers 1986), one code per step:
    0 keeps a line, 1 deletes a line of ``a``, 2 adds a line of ``b``."""
    ids = {}
    xa = np.array([ids.setdefault(line, len(ids)) for line in a], dtype=np.int64)
    xb = np.array([ids.setdefault(line, len(ids)) for line in b], dtype=np.int64)
    d, trace = _myers(xa, xb)
    return _myers_script(trace, d, len(xa), len(xb))


@dataclass(frozen=True)
class DiffStats:
    """What diff says about two listings: lines deleted and added, the length of its normal output, and
    the identical blocks between the changes (Table 3's two measures)."""

    deleted: int
    added: int
    output_lines: int
    common_lines: int
    common_blocks: int

    @property
    def changed(self) -> int:
        return self.deleted + self.added

    @property
    def mean_block_lines(self) -> float:
        return self.common_lines / self.common_blocks if self.common_blocks else 0.0


def diff_stats(a, b) -> DiffStats:
    """Diff two sequences of lines. A hunk of GNU diff's normal output is a header, the deleted lines
    ('< '), a '---' when lines are both deleted and added, and the added lines ('> ')."""
    ops = diff_script(a, b)
    deleted, added = int((ops == 1).sum()), int((ops == 2).sum())
    output, blocks = 0, 0
    for is_common, run in itertools.groupby(ops.tolist(), key=lambda op: op == 0):
        if is_common:
            blocks += 1
            continue
        run = list(run)
        dels = run.count(1)
        adds = len(run) - dels
        output += 1 + dels + adds + (1 if dels and adds else 0)
    return DiffStats(deleted, added, output, len(ops) - deleted - added, blocks)


# --- dup (§2.2, §3.3) -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Tokens:
    """A listing as dup's lexer sees it (§3.3): one token a line. ``code`` identifies what must match
    exactly (an opcode, or the type of a parameter); ``prev`` is, for a parameter, the lines back to the
    previous occurrence of the same parameter (0 for the first); ``param`` flags the parameters."""

    code: np.ndarray
    prev: np.ndarray
    param: np.ndarray

    def __len__(self):
        return len(self.code)


_KIND_CODE = {k: n for n, k in enumerate(("o", "c", "v", "i", "u", "j", "L"))}


def dup_tokens(lst: Listing, params: Params | None = None) -> Tokens:
    """dup's input: jumps as labels (a label line inserted before each jump target, and the jump naming
    it), parameters typed apart. With ``dup_jump_labels`` off a jump stays a fixed offset, matched
    exactly; with ``dup_parameters`` off every token is matched exactly."""
    p = params or Params()
    targets = {t for k, t in zip(lst.kinds, lst.target, strict=True) if k == "j"} if p.dup_jump_labels else set()
    items = []
    for n, (kind, value, to) in enumerate(zip(lst.kinds, lst.values, lst.target, strict=True)):
        if n in targets:
            items.append(("L", n))
        items.append(("L", to) if kind == "j" and p.dup_jump_labels else (kind, value))
    parametric = set(PARAMETER_KINDS) if p.dup_parameters else set()
    code = np.empty(len(items), dtype=np.int64)
    prev = np.zeros(len(items), dtype=np.int64)
    param = np.zeros(len(items), dtype=bool)
    last = {}
    for n, (kind, value) in enumerate(items):
        if kind in parametric:
            code[n] = _KIND_CODE[kind]
            param[n] = True
            before = last.get((kind, value))
            prev[n] = 0 if before is None else n - before
            last[(kind, value)] = n
        else:
            code[n] = (_KIND_CODE[kind] + 1) * (1 << 40) + value
    return Tokens(code, prev, param)


def window_hashes(t: Tokens, length: int) -> np.ndarray:
    """A hash of every window of ``length`` tokens, parameters encoded inside the window (a parameter
    whose previous occurrence lies before the window counts as a first occurrence): two windows p-match
    exactly when their encodings are equal, so p-matching windows hash alike."""
    n = len(t) - length + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    base = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for k in range(length):
            prev = t.prev[k:k + n]
            local = np.where(t.param[k:k + n] & (prev <= k), prev, 0)
            h = h * base + _mix((t.code[k:k + n] * 4099 + local).astype(np.uint64))
    return h


@numba.njit(cache=True)
def _emit(out, used, row):
    if used == out.shape[0]:
        bigger = np.empty((2 * out.shape[0], 4), np.int64)
        bigger[:used] = out[:used]
        out = bigger
    out[used] = row
    return out, used + 1


@numba.njit(cache=True)
def _scan(code, prev, param, start, length, cand_a, cand_b, cand_d, threshold):
    """Maximal p-matches of at least ``threshold`` tokens on each candidate diagonal (file a, file b,
    d = j - i); file f is the slice [start[f], start[f] + length[f]) of the concatenated tokens.

    A section starting at s and holding position t p-matches there when the exact parts agree and, for a
    parameter, the previous occurrences agree or both lie before s. So each position bounds the start
    from below, the earliest start of a match ending at t is a running maximum, and a match is maximal
    where the next position cannot extend it."""
    big = np.int64(1) << 40
    out = np.empty((256, 4), np.int64)
    row = np.empty(4, np.int64)
    used = 0
    for c in range(cand_a.size):
        fa, fb, d = cand_a[c], cand_b[c], cand_d[c]
        i0 = max(0, -d)
        n = min(length[fa], length[fb] - d) - i0
        first = 0
        last = 0
        for t in range(n + 1):
            if t < n:
                ia = start[fa] + i0 + t
                ib = ia - start[fa] + start[fb] + d
                if code[ia] != code[ib]:
                    bound = t + 1
                elif param[ia] and prev[ia] != prev[ib]:
                    pa = prev[ia] if prev[ia] > 0 else big
                    pb = prev[ib] if prev[ib] > 0 else big
                    bound = t - min(pa, pb) + 1
                else:
                    bound = 0
                if bound > first:
                    first = bound
                now = t - first + 1
            else:
                now = 0
            if now <= last and last >= threshold:
                row[0], row[1], row[2], row[3] = c, i0 + t - last, i0 + t - last + d, last
                out, used = _emit(out, used, row)
            last = now
    return out[:used]


def _concat(tokens) -> tuple:
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return (np.concatenate([t.code for t in tokens]), np.concatenate([t.prev for t in tokens]),
            np.concatenate([t.param for t in tokens]), start, lengths)


def scan_diagonals(tokens, cand_a, cand_b, cand_d, threshold: int) -> np.ndarray:
    """Rows (candidate, start in a, start in b, lines) of every maximal p-match over the threshold on
    the candidate diagonals (files a and b of ``tokens``, j = i + d)."""
    code, prev, param, start, lengths = _concat(tokens)
    return _scan(code, prev, param, start, lengths, np.asarray(cand_a, np.int64), np.asarray(cand_b, np.int64),
                 np.asarray(cand_d, np.int64), int(threshold))


def _hits(query: np.ndarray, keys: np.ndarray) -> tuple:
    """(query position, key position) of every equal pair; ``keys`` sorted."""
    lo, hi = np.searchsorted(keys, query, "left"), np.searchsorted(keys, query, "right")
    count = hi - lo
    q = np.repeat(np.arange(len(query)), count)
    k = np.repeat(lo, count) + np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    return q, k


def pmatches(a: Tokens, b: Tokens, threshold: int, seed: int) -> list:
    """dup between two files: every maximal p-match of at least ``threshold`` lines, as
    (start in A, start in B, lines). Diagonals are scanned where a seed window of ``seed`` lines
    hashes alike in both (every match that long holds such a window)."""
    ha, hb = window_hashes(a, seed), window_hashes(b, seed)
    order = np.argsort(hb, kind="stable")
    qi, kj = _hits(ha, hb[order])
    diagonals = np.unique(order[kj] - qi)
    rows = scan_diagonals([a, b], np.zeros(len(diagonals)), np.ones(len(diagonals)), diagonals, threshold)
    return [(int(r[1]), int(r[2]), int(r[3])) for r in rows]


def covered(matches, length: int, *, side: int = 0) -> int:
    """Tokens of one file (side 0: A, 1: B) inside at least one match."""
    mask = np.zeros(length, dtype=bool)
    for m in matches:
        mask[m[side]:m[side] + m[2]] = True
    return int(mask.sum())


# --- programs and their compiler --------------------------------------------------------------------

SINK = "lab/Sink"   # the object the generated programs report to (an external class: its methods are pool refs)


@dataclass(frozen=True)
class Method:
    """An int method: parameter names and a body of statements.

    Statements: ("decl", var, expr), ("set", var, expr), ("put", field, expr), ("emit", expr),
    ("say", text), ("if", cond, body), ("while", cond, body), ("return", expr). Expressions:
    ("var", name), ("field", name), ("const", int), ("bin", op, a, b), ("call", method, args).
    Conditions: ("cmp", relation, a, b), ("and", c1, c2)."""

    name: str
    params: tuple
    body: tuple


@dataclass(frozen=True)
class Program:
    """A Java class: int fields, a Sink field ``out`` and int methods."""

    name: str
    fields: tuple
    methods: tuple

    def source(self) -> str:
        """The program as Java source, one statement a line."""
        lines = [f"public class {self.name} {{"]
        lines += [f"    int {f};" for f in self.fields] + ["    Sink out;"]
        for m in self.methods:
            args = ", ".join(f"int {a}" for a in m.params)
            lines.append(f"    int {m.name}({args}) {{")
            lines += _source_block(m.body, 2)
            lines.append("    }")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _source_block(body, depth) -> list:
    pad = "    " * depth
    out = []
    for s in body:
        kind = s[0]
        if kind == "decl":
            out.append(f"{pad}int {s[1]} = {_source_expr(s[2])};")
        elif kind == "set":
            out.append(f"{pad}{s[1]} = {_source_expr(s[2])};")
        elif kind == "put":
            out.append(f"{pad}this.{s[1]} = {_source_expr(s[2])};")
        elif kind == "emit":
            out.append(f"{pad}out.put({_source_expr(s[1])});")
        elif kind == "say":
            out.append(f'{pad}out.say("{s[1]}");')
        elif kind in ("if", "while"):
            out.append(f"{pad}{kind} ({_source_cond(s[1])}) {{")
            out += _source_block(s[2], depth + 1)
            out.append(f"{pad}}}")
        else:
            out.append(f"{pad}return {_source_expr(s[1])};")
    return out


def _source_expr(e) -> str:
    kind = e[0]
    if kind in ("var", "field"):
        return e[1]
    if kind == "const":
        return str(e[1])
    if kind == "bin":
        return f"({_source_expr(e[2])} {e[1]} {_source_expr(e[3])})"
    return f"{e[1]}({', '.join(_source_expr(x) for x in e[2])})"


def _source_cond(c) -> str:
    if c[0] == "and":
        return f"{_source_cond(c[1])} && {_source_cond(c[2])}"
    return f"{_source_expr(c[2])} {c[1]} {_source_expr(c[3])}"


class ProgramWriter:
    """Writes random programs of a given length in source lines, with the statement mix of everyday code."""

    CONSTANTS = (0, 1, 1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16, 20, 32, 64, 100, 128, 255, 1000, 4096, 65536)
    OPS = ("+", "-", "*", "&")
    RELATIONS = ("<", "<=", ">", ">=", "==", "!=")

    def __init__(self, params: Params, rng):
        self.p = params
        self.rng = make_rng(rng)

    def program(self, name: str, lines: int) -> Program:
        p = self.p
        fields = tuple(f"f{k}" for k in range(p.fields_per_class))
        budget = lines - 3 - len(fields)   # the class line, the fields, the sink, the closing brace
        sizes = []
        while budget > 0:
            size = budget if budget < 2 * p.method_lines else p.method_lines
            sizes.append(size)
            budget -= size
        names = tuple(f"m{k}" for k in range(len(sizes)))
        self.fields = fields
        self.arity = {n: int(self.rng.integers(1, 4)) for n in names}
        methods = tuple(self.method(name_, size) for name_, size in zip(names, sizes, strict=True))
        return Program(name, fields, methods)

    def method(self, name: str, size: int) -> Method:
        params = tuple(f"a{k}" for k in range(self.arity[name]))
        scope = list(params) + ["i"]
        body = [("decl", "i", ("const", 0))]
        inner = size - 4   # header, the counter, the return and the closing brace
        body += self.block(scope, inner, 0, top=True)
        body.append(("return", self.expr(scope, 1)))
        return Method(name, params, tuple(body))

    def block(self, scope, lines: int, depth: int, *, top: bool = False) -> list:
        out, left = [], lines
        while left > 0:
            nest = left >= 3 and depth < 2 and self.rng.random() * 100 < self.p.nesting_pct
            if nest:
                inner = int(self.rng.integers(1, min(left - 2, 6) + 1))
                kind = "while" if inner >= 2 and self.rng.random() < 0.4 else "if"
                if kind == "while":   # the body ends by stepping the counter
                    body = self.block(scope, inner - 1, depth + 1) + [self.step()]
                else:
                    body = self.block(scope, inner, depth + 1)
                out.append((kind, self.cond(scope), tuple(body)))
                left -= inner + 2
            else:
                out.append(self.simple(scope, top))
                left -= 1
        return out

    @staticmethod
    def step():
        return ("set", "i", ("bin", "+", ("var", "i"), ("const", 1)))

    def simple(self, scope, top: bool):
        r = self.rng.random()
        if top and r < 0.2:
            var = f"x{len(scope)}"
            stmt = ("decl", var, self.expr(scope, 2))
            scope.append(var)
            return stmt
        if r < 0.45:
            return ("set", scope[int(self.rng.integers(len(scope)))], self.expr(scope, 2))
        if r < 0.65:
            return ("put", self.fields[int(self.rng.integers(len(self.fields)))], self.expr(scope, 2))
        if r < 0.9:
            return ("emit", self.expr(scope, 2))
        return ("say", f"step {int(self.rng.integers(100))}")

    def expr(self, scope, depth: int):
        r = self.rng.random()
        if depth > 0 and r < 0.35:
            op, a, b = self.OPS[int(self.rng.integers(len(self.OPS)))], self.expr(scope, depth - 1), \
                self.expr(scope, depth - 1)
            if _fold(("bin", op, a, b))[0] == "const":   # no constant arithmetic: javac would fold it away
                b = ("var", scope[int(self.rng.integers(len(scope)))])
            return ("bin", op, a, b)
        if depth > 0 and r < 0.45:
            names = tuple(self.arity)
            callee = names[int(self.rng.integers(len(names)))]
            return ("call", callee, tuple(self.expr(scope, 0) for _ in range(self.arity[callee])))
        r = self.rng.random()
        if r < 0.45:
            return ("var", scope[int(self.rng.integers(len(scope)))])
        if r < 0.75:
            return ("field", self.fields[int(self.rng.integers(len(self.fields)))])
        return ("const", self.CONSTANTS[int(self.rng.integers(len(self.CONSTANTS)))])

    def cond(self, scope):
        def cmp():
            rel = self.RELATIONS[int(self.rng.integers(len(self.RELATIONS)))]
            left = self.expr(scope, 1)
            while _fold(left)[0] == "const":   # a constant condition is no condition (javac drops it)
                left = self.expr(scope, 1)
            return ("cmp", rel, left, self.expr(scope, 0))
        return ("and", cmp(), cmp()) if self.rng.random() < 0.3 else cmp()


#: The branch that skips a block when a comparison is false.
_SKIP_IF_FALSE = {"<": "if_icmpge", "<=": "if_icmpgt", ">": "if_icmple", ">=": "if_icmplt", "==": "if_icmpne",
                  "!=": "if_icmpeq"}
_SKIP_IF_FALSE_ZERO = {"<": "ifge", "<=": "ifgt", ">": "ifle", ">=": "iflt", "==": "ifne", "!=": "ifeq"}
_ARITH = {"+": "iadd", "-": "isub", "*": "imul", "&": "iand"}
_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "&": lambda a, b: a & b}


def _fold(e):
    """An expression with its constant parts computed, in Java's 32-bit int arithmetic (as javac does)."""
    if e[0] != "bin":
        return e
    a, b = _fold(e[2]), _fold(e[3])
    if a[0] == "const" and b[0] == "const":
        v = _INT_OPS[e[1]](a[1], b[1]) & 0xFFFFFFFF
        return ("const", v - (1 << 32) if v >= 1 << 31 else v)
    return ("bin", e[1], a, b)


class Compiler:
    """Compiles a :class:`Program` to a class file as javac would (the same instructions, checked against
    javac in the tests): locals numbered in declaration order (``this`` is 0, the parameters follow), the
    shortest constant load, and the pool laid out sorted by key (JDK 1.x) or by first use (today),
    holding every int constant or only the ones the code loads from it."""

    def __init__(self, params: Params):
        self.p = params

    def compile(self, program: Program) -> bytes:
        self.program, self.uses = program, []
        bodies = [self._method(m) for m in program.methods]
        cf = ClassFile.new(program.name)
        index = self._pool(cf.pool)
        for m, (items, n_locals) in zip(program.methods, bodies, strict=True):
            real = [insn(x[0], *(index[a[1]] if isinstance(a, tuple) and a[0] == "ref" else a for a in x[1:]))
                    if isinstance(x, tuple) else x for x in items]
            desc = "(" + "I" * len(m.params) + ")I"
            cf.add_method(m.name, desc, 0x0001, Code(16, n_locals, real, [], cf.pool))
        return cf.to_bytes()

    # the pool
    def _ref(self, key) -> tuple:
        self.uses.append(key)
        return ("ref", key)

    def _pool(self, pool) -> dict:
        keys = list(dict.fromkeys(self.uses))
        if self.p.pool_order == "sorted":
            keys.sort(key=_sort_key)
        index = {}
        for key in keys:
            kind = key[0]
            if kind == "Integer":
                index[key] = pool.add_int(key[1])
            elif kind == "String":
                index[key] = pool.add_string(key[1])
            else:
                index[key] = pool.add_member_ref(*key)
        return index

    # code
    def _method(self, m: Method) -> tuple:
        self.slots = {"this": 0, **{a: k + 1 for k, a in enumerate(m.params)}}
        items = []
        self._block(m.body, items)
        return items, len(self.slots)

    def _slot(self, var: str) -> int:
        if var not in self.slots:
            self.slots[var] = len(self.slots)
        return self.slots[var]

    def _block(self, body, out: list):
        for s in body:
            kind = s[0]
            if kind in ("decl", "set"):
                self._expr(s[2], out)
                out.append(_local("istore", self._slot(s[1])))
            elif kind == "put":
                out.append(("aload_0",))
                self._expr(s[2], out)
                out.append(("putfield", self._ref(("Fieldref", self.program.name, s[1], "I"))))
            elif kind == "emit":
                out += [("aload_0",), ("getfield", self._ref(("Fieldref", self.program.name, "out", f"L{SINK};")))]
                self._expr(s[1], out)
                out.append(("invokevirtual", self._ref(("Methodref", SINK, "put", "(I)V"))))
            elif kind == "say":
                out += [("aload_0",), ("getfield", self._ref(("Fieldref", self.program.name, "out", f"L{SINK};"))),
                        ("ldc", self._ref(("String", s[1]))),
                        ("invokevirtual", self._ref(("Methodref", SINK, "say", "(Ljava/lang/String;)V")))]
            elif kind == "if":
                end = Label()
                self._cond(s[1], end, out)
                self._block(s[2], out)
                out.append(end)
            elif kind == "while":   # javac: the test at the top, a goto back at the bottom
                top, end = Label(), Label()
                out.append(top)
                self._cond(s[1], end, out)
                self._block(s[2], out)
                out += [("goto", top), end]
            else:
                self._expr(s[1], out)
                out.append(("ireturn",))

    def _cond(self, c, skip: Label, out: list):
        if c[0] == "and":
            self._cond(c[1], skip, out)
            self._cond(c[2], skip, out)
            return
        self._expr(c[2], out)
        if _fold(c[3]) == ("const", 0):   # javac tests against zero with the one-operand branches
            self._constant_use(0)
            out.append((_SKIP_IF_FALSE_ZERO[c[1]], skip))
            return
        self._expr(c[3], out)
        out.append((_SKIP_IF_FALSE[c[1]], skip))

    def _constant_use(self, value: int):
        if self.p.pooled_constants or not -32768 <= value <= 32767:
            self._ref(("Integer", value))

    def _expr(self, e, out: list):
        e = _fold(e)
        kind = e[0]
        if kind == "var":
            out.append(_local("iload", self._slot(e[1])))
        elif kind == "field":
            out += [("aload_0",), ("getfield", self._ref(("Fieldref", self.program.name, e[1], "I")))]
        elif kind == "const":
            v = e[1]
            self._constant_use(v)
            if -1 <= v <= 5:
                out.append((f"iconst_{v}" if v >= 0 else "iconst_m1",))
            elif -128 <= v <= 127:
                out.append(("bipush", v))
            elif -32768 <= v <= 32767:
                out.append(("sipush", v))
            else:
                out.append(("ldc", self._ref(("Integer", v))))
        elif kind == "bin":
            self._expr(e[2], out)
            self._expr(e[3], out)
            out.append((_ARITH[e[1]],))
        else:
            out.append(("aload_0",))
            for arg in e[2]:
                self._expr(arg, out)
            desc = "(" + "I" * len(e[2]) + ")I"
            out.append(("invokevirtual", self._ref(("Methodref", self.program.name, e[1], desc))))


def _local(op: str, slot: int) -> tuple:
    """iload/istore of a slot: the one-byte form for slots 0-3, as javac writes them."""
    return (f"{op}_{slot}",) if slot <= 3 else (op, slot)


def _sort_key(key) -> tuple:
    """sun.tools.asm's order: numbers first (by length, then digits), then strings, then members by
    'name type class'."""
    kind = key[0]
    if kind == "Integer":
        text = str(key[1])
        return (0, len(text), text)
    if kind == "String":
        return (1, 0, key[1])
    return (2, 0, f"{key[2]} {key[3]} {key[1]}")


# --- edits of programs ---------------------------------------------------------------------------

def _bodies(body, path=()):
    """(path, body) of a block and of every block nested in it; a path indexes statements down."""
    yield path, body
    for k, s in enumerate(body):
        if s[0] in ("if", "while"):
            yield from _bodies(s[2], path + (k,))


def _replace_body(body, path, new_body) -> tuple:
    if not path:
        return tuple(new_body)
    k = path[0]
    s = body[k]
    return body[:k] + ((s[0], s[1], _replace_body(s[2], path[1:], new_body)),) + body[k + 1:]


def _with_method(program: Program, index: int, method: Method) -> Program:
    methods = program.methods[:index] + (method,) + program.methods[index + 1:]
    return dataclasses.replace(program, methods=methods)


def _places(program: Program, methods=None) -> list:
    """(method index, path, body) of every block of the chosen methods."""
    chosen = range(len(program.methods)) if methods is None else methods
    return [(k, path, body) for k in chosen for path, body in _bodies(program.methods[k].body)]


def insert_statement(program: Program, rng, name: str, methods=None) -> Program:
    """§4.1's addition: ``int <name> = 43;`` at a random place (never before the counter or after the return)."""
    places = _places(program, methods)
    k, path, body = places[int(rng.integers(len(places)))]
    lo, hi = (1, len(body) - 1) if not path else (0, len(body))
    at = int(rng.integers(lo, hi + 1))
    new = body[:at] + (("decl", name, ("const", 43)),) + body[at:]
    m = program.methods[k]
    return _with_method(program, k, dataclasses.replace(m, body=_replace_body(m.body, path, new)))


def simplify_condition(program: Program, rng, methods=None) -> Program | None:
    """§4.1's substitution: a condition of an if or a while changed to ``i < 1``; None if none is left."""
    simple = ("cmp", "<", ("var", "i"), ("const", 1))
    sites = [(k, path, j) for k, path, body in _places(program, methods) for j, s in enumerate(body)
             if s[0] in ("if", "while") and s[1] != simple]
    if not sites:
        return None
    k, path, j = sites[int(rng.integers(len(sites)))]
    m = program.methods[k]
    body = dict(_bodies(m.body))[path]
    s = body[j]
    new = body[:j] + ((s[0], simple, s[2]),) + body[j + 1:]
    return _with_method(program, k, dataclasses.replace(m, body=_replace_body(m.body, path, new)))


def delete_statement(program: Program, rng, methods=None) -> Program | None:
    """§4.1's deletion: a statement that declares nothing and returns nothing removed; None if none is left."""
    sites = [(k, path, j) for k, path, body in _places(program, methods) for j, s in enumerate(body)
             if s[0] in ("set", "put", "emit", "say")]
    if not sites:
        return None
    k, path, j = sites[int(rng.integers(len(sites)))]
    m = program.methods[k]
    body = dict(_bodies(m.body))[path]
    new = body[:j] + body[j + 1:]
    return _with_method(program, k, dataclasses.replace(m, body=_replace_body(m.body, path, new)))


def change_constants(program: Program, old: int, new: int) -> Program:
    """Every use of the constant ``old`` changed to ``new`` (§3.2's edit)."""
    return _map_program(program, expr=lambda e: ("const", new) if e == ("const", old) else e)


def _map_program(program: Program, *, expr=None, stmt=None) -> Program:
    """The program with ``expr`` applied to every expression and ``stmt`` to every simple statement."""
    expr = expr or (lambda e: e)
    stmt = stmt or (lambda st: st)

    def e_(e):
        if e[0] == "bin":
            e = ("bin", e[1], e_(e[2]), e_(e[3]))
        elif e[0] == "call":
            e = ("call", e[1], tuple(e_(x) for x in e[2]))
        return expr(e)

    def c_(c):
        return ("and", c_(c[1]), c_(c[2])) if c[0] == "and" else ("cmp", c[1], e_(c[2]), e_(c[3]))

    def block(body):
        out = []
        for st in body:
            if st[0] in ("if", "while"):
                out.append((st[0], c_(st[1]), block(st[2])))
            elif st[0] in ("decl", "set", "put"):
                out.append(stmt((st[0], st[1], e_(st[2]))))
            elif st[0] in ("emit", "return"):
                out.append(stmt((st[0], e_(st[1]))))
            else:
                out.append(stmt(st))
        return tuple(out)

    return dataclasses.replace(program, methods=tuple(dataclasses.replace(m, body=block(m.body))
                                                      for m in program.methods))


def constants_used(program: Program) -> list:
    """Every constant of the program, with repeats."""
    found = []

    def note(e):
        if e[0] == "const":
            found.append(e[1])
        return e

    _map_program(program, expr=note)
    return found


def random_changes(program: Program, n: int, add_share: float, rng) -> Program:
    """§4.1's random edits: ``n`` changes, each an added statement with probability ``add_share``,
    otherwise a condition simplified to ``i < 1`` or a statement deleted."""
    for c in range(n):
        if rng.random() < add_share:
            program = insert_statement(program, rng, f"newvariable{c}")
            continue
        first, second = (simplify_condition, delete_statement) if rng.random() < 0.5 else \
            (delete_statement, simplify_condition)
        program = first(program, rng) or second(program, rng) or insert_statement(program, rng, f"newvariable{c}")
    return program


def rename_local(program: Program, rng) -> Program:
    """A local variable renamed everywhere in its method: the source changes, the code does not."""
    sites = [(k, st[1]) for k, m in enumerate(program.methods) for st in m.body if st[0] == "decl" and st[1] != "i"]
    k, old = sites[int(rng.integers(len(sites)))]
    new = f"renamed{old}"
    one = Program(program.name, program.fields, (program.methods[k],))
    one = _map_program(one, expr=lambda e: ("var", new) if e == ("var", old) else e,
                       stmt=lambda st: (st[0], new, *st[2:]) if st[0] in ("decl", "set") and st[1] == old else st)
    return _with_method(program, k, one.methods[0])


# --- compiling, encoding and comparing -------------------------------------------------------------

@dataclass(frozen=True)
class Compiled:
    """A program's source and class file, its listing, and what siff and dup keep of each."""

    source: str
    listing: Listing
    text: str           # the listing siff and diff read: offset-encoded unless the encoding is off
    source_prints: np.ndarray
    prints: np.ndarray
    tokens: Tokens


def compile_program(program: Program, params: Params) -> Compiled:
    """Compile, disassemble, encode and fingerprint a program."""
    lst = class_listing(Compiler(params).compile(program), params)
    return analyse(program.source(), lst, params)


def analyse(source: str, lst: Listing, params: Params) -> Compiled:
    """Fingerprints of a source and of its listing, the listing siff and diff read, and dup's tokens."""
    text = lst.text(params)
    return Compiled(source, lst, text, fingerprints(source, params), fingerprints(text, params),
                    dup_tokens(lst, params))


def compare(a: Compiled, b: Compiled, params: Params) -> dict:
    """Every tool's view of how much of A is in B: siff on source and on bytecode (both ways), dup's
    matches over the threshold, diff's common lines."""
    out = {"source_pct": siff_similarity(a.source_prints, b.source_prints),
           "siff_pct": siff_similarity(a.prints, b.prints),
           "siff_reverse_pct": siff_similarity(b.prints, a.prints)}
    matches = pmatches(a.tokens, b.tokens, params.dup_threshold_lines, params.dup_seed_lines)
    out["dup_pct"] = 100.0 * covered(matches, len(a.tokens)) / len(a.tokens)
    out["dup_longest_lines"] = float(max((m[2] for m in matches), default=0))
    st = diff_stats(a.text.splitlines(), b.text.splitlines())
    out["diff_common_pct"] = 100.0 * st.common_lines / len(a.listing)
    return out


# --- Figures 1 and 2 -------------------------------------------------------------------------------

def _excerpt_member(op: str, after: str | None, n: int) -> tuple:
    """What a pool index of the excerpt refers to (the text gives only the indices): the field read
    after each aload, a boolean test before the ifeq, and calls taking the object loaded before them."""
    if op == "getfield":
        return ("Fieldref", "fig/Node", "link", "Lfig/Peer;")
    if after == "ifeq":
        return ("Methodref", "fig/Node", "ready", "()Z")
    return ("Methodref", "fig/Peer", f"call{n}", "(Lfig/Node;)V")


def excerpt_class(params: Params | None = None) -> bytes:
    """A class file whose one method holds Figure 1's excerpt, each pool index where the figure has it."""
    p = params or Params()
    spec = p.figure1_excerpt
    cf = ClassFile.new("fig/Excerpt")
    pool = cf.pool
    wanted = {}
    for n, (op, arg) in enumerate(spec):
        if op in ("getfield", "invokevirtual"):
            after = spec[n + 1][0] if n + 1 < len(spec) else None
            wanted.setdefault(arg, _excerpt_member(op, after, n))
    parts = {index: (pool.add_class(m[1]), pool.add_name_and_type(m[2], m[3])) for index, m in wanted.items()}
    for index in sorted(wanted):
        while len(pool) < index:
            pool.add_utf8(f"filler{len(pool)}")
        if len(pool) != index:
            raise ValueError(f"figure1_excerpt: pool index {index} is too small for the entries before it")
        pool.add((wanted[index][0], *parts[index]))
    labels = {arg: Label() for op, arg in spec if op == "label"}
    items = []
    for op, arg in spec:
        if op == "label":
            items.append(labels[arg])
        elif O.FORMAT[O.OPCODE[op]] in ("j2", "j4"):
            items.append(insn(op, labels[arg]))
        else:
            items.append(insn(op, arg))
    cf.add_method("excerpt", "()V", 0x0001, Code(4, 6, items, [], pool))
    return cf.to_bytes()


def _items_frame(items) -> pd.DataFrame:
    rows = [{"line": str(n + 1), "item": render([(k, v)]).strip(), "kind": k, "value": v}
            for n, (k, v) in enumerate(items)]
    return pd.DataFrame(rows).set_index("line")


def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1: the excerpt disassembled, one item a line. Index: line (1-based). Columns: item (as
    printed), kind, value (the opcode, index, or jump in lines)."""
    p = params or Params()
    lst = class_listing(excerpt_class(p), p)
    return _items_frame(zip(lst.kinds, lst.values, strict=True))


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: Figure 1 after the offset encoding, computed over the whole file (the distances back to
    uses before the excerpt are given). Columns as figure1."""
    p = params or Params()
    lst = class_listing(excerpt_class(p), p)
    return _items_frame(encode_offsets(lst, p, history=p.figure2_previous_use))


# --- §3.2: a 4 changed to a 5 in two places --------------------------------------------------------

def _set_constant_sites(program: Program, values: dict) -> Program:
    """The program with the n-th constant (in traversal order) set to ``values[n]`` where given."""
    counter = itertools.count()

    def change(e):
        if e[0] != "const":
            return e
        n = next(counter)
        return ("const", values.get(n, e[1]))

    return _map_program(program, expr=change)


def constant_edit(program: Program, params: Params, rng) -> tuple:
    """(before, after) for §3.2's edit: ``constant_edits`` places hold the edited constant, the file's
    only uses of it, and the new value is used elsewhere already; the edit changes those places. With
    every constant in the pool, the edit takes the old constant's entry away, and nothing else."""
    p = params
    values = constants_used(program)
    if len(values) < p.constant_edits + 1:
        raise ValueError(f"the program has {len(values)} constants; the edit needs {p.constant_edits + 1}")
    sites = [int(s) for s in rng.choice(len(values), size=p.constant_edits, replace=False)]
    others = [n for n in range(len(values)) if n not in sites]
    setting = {n: p.edited_from for n in sites}
    setting.update({n: p.edited_to for n in others if values[n] == p.edited_from})
    if not any(values[n] == p.edited_to or setting.get(n) == p.edited_to for n in others):
        setting[others[int(rng.integers(len(others)))]] = p.edited_to
    before = _set_constant_sites(program, setting)
    after = _set_constant_sites(program, {**setting, **{n: p.edited_to for n in sites}})
    return before, after


def _replicates(quick: bool, full: int) -> int:
    return max(2, full // 4) if quick else full


def edit_example(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.2: a 4 changed to a 5 in two places of a 182-line program, diffed and siffed on the raw listing
    and on the encoded one (means over programs). Index: listing (raw, encoded). Columns: source_lines,
    listing_lines, changed_lines (lines of the original diff reports changed), diff_output_lines,
    siff_pct (the original's similarity to the edited file), siff_reverse_pct."""
    p = params or Params()
    gen = make_rng(rng)
    rows = {"raw": [], "encoded": []}
    for r in range(_replicates(quick, 12)):
        program = ProgramWriter(p, gen).program(f"Edited{r}", p.source_lines)
        before, after = constant_edit(program, p, gen)
        listings = [class_listing(Compiler(p).compile(x), p) for x in (before, after)]
        for name, q in (("raw", dataclasses.replace(p, offset_encoding=False)), ("encoded", p)):
            a, b = (analyse(x.source(), lst, q) for x, lst in zip((before, after), listings, strict=True))
            st = diff_stats(a.text.splitlines(), b.text.splitlines())
            rows[name].append({"source_lines": len(before.source().splitlines()), "listing_lines": len(a.listing),
                               "changed_lines": st.deleted, "diff_output_lines": st.output_lines,
                               "siff_pct": siff_similarity(a.prints, b.prints),
                               "siff_reverse_pct": siff_similarity(b.prints, a.prints)})
    out = pd.DataFrame({name: pd.DataFrame(v).mean() for name, v in rows.items()}).T
    return out.rename_axis("listing")


# --- §4.1: random changes (the experiment of Table 1) ----------------------------------------------

def _band(pct: float) -> str | None:
    for name, lo, hi in SIFF_BANDS:
        if lo <= pct < hi or (hi == 100.0 and pct == 100.0):
            return name
    return None


def random_change_trials(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Every trial of §4.1: program, changes, share of additions, source and bytecode similarity."""
    p = params or Params()
    gen = make_rng(rng)
    trials = 12 if quick else 60
    rows, variants = [], {}
    for k in range(p.experiment_programs):
        name = f"Program {k + 1}"
        program = ProgramWriter(p, gen).program(f"Program{k + 1}", p.experiment_lines)
        original = compile_program(program, p)
        original_raw = _raw_prints(original.listing, p)
        variants[name] = [original]
        for t in range(trials):
            n, share = int(gen.integers(1, p.max_changes + 1)), float(gen.random())
            v = compile_program(random_changes(program, n, share, gen), p)
            variants[name].append(v)
            rows.append({"program": name, "trial": t, "changes": n, "add_share": share,
                         "source_pct": siff_similarity(original.source_prints, v.source_prints),
                         "bytecode_pct": siff_similarity(original.prints, v.prints),
                         "raw_pct": siff_similarity(original_raw, _raw_prints(v.listing, p))})
    out = pd.DataFrame(rows)
    out.attrs["cross_program_max_pct"] = _cross_max(variants)
    return out


def _raw_prints(lst: Listing, params: Params) -> np.ndarray:
    """siff's fingerprints of the listing without the offset encoding."""
    return fingerprints(lst.raw_text(), params)


def _cross_max(variants: dict) -> float:
    """The highest bytecode similarity between a variant of one program and a variant of another."""
    best = 0.0
    names = list(variants)
    for x, y in itertools.permutations(names, 2):
        for a in variants[x]:
            for b in variants[y]:
                best = max(best, siff_similarity(a.prints, b.prints))
    return best


def random_changes_table(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.1 (Table 1's experiment): trials grouped by source similarity (90-100, 80-89, 70-79%).

    Index: (program, band). Columns: trials, source_pct and bytecode_pct (means), max_diff_pct (the
    largest |source - bytecode| of the group), found_pct (trials whose bytecode similarity reaches the
    siff threshold). A last row ('all', 'other programs') holds max_cross_pct: the highest bytecode
    similarity between variants of different programs (a false positive if over the threshold); the row
    ('all', 'all trials') holds found_low_pct and raw_found_low_pct: the trials siff finds at the low
    threshold (25%, §4.3) on encoded and on raw listings."""
    p = params or Params()
    t = random_change_trials(p, rng=rng, quick=quick)
    t["band"] = [_band(x) for x in t["source_pct"]]
    t["gap"] = (t["source_pct"] - t["bytecode_pct"]).abs()
    rows = []
    for prog, g in t.groupby("program"):
        for band, _, _ in SIFF_BANDS:
            b = g[g["band"] == band]
            rows.append({"program": prog, "band": band, "trials": float(len(b)),
                         "source_pct": b["source_pct"].mean(), "bytecode_pct": b["bytecode_pct"].mean(),
                         "max_diff_pct": b["gap"].max(),
                         "found_pct": 100.0 * (b["bytecode_pct"] >= p.siff_threshold_pct).mean()
                         if len(b) else float("nan")})
    rows.append({"program": "all", "band": "all trials", "trials": float(len(t)),
                 "found_pct": 100.0 * (t["bytecode_pct"] >= p.siff_threshold_pct).mean(),
                 "found_low_pct": 100.0 * (t["bytecode_pct"] >= p.low_siff_threshold_pct).mean(),
                 "raw_found_low_pct": 100.0 * (t["raw_pct"] >= p.low_siff_threshold_pct).mean()})
    rows.append({"program": "all", "band": "other programs", "max_cross_pct": t.attrs["cross_program_max_pct"]})
    cols = ["trials", "source_pct", "bytecode_pct", "max_diff_pct", "found_pct", "found_low_pct",
            "raw_found_low_pct", "max_cross_pct"]
    out = pd.DataFrame(rows).set_index(["program", "band"]).reindex(columns=cols)
    out.attrs["trials"] = t.drop(columns=["band", "gap"])   # every trial, for a plot
    return out


# --- the tools against named edits (§2.4, §3.3, §6) -------------------------------------------------

def _insert_in_loop(program: Program, rng) -> Program:
    """A statement inserted at the top of the while loop nearest the middle of the program, so the
    loop's jumps cross it (§3.3). It stores a field, so no local's slot moves."""
    loops = [(k, path + (j,)) for k, path, body in _places(program) for j, st in enumerate(body)
             if st[0] == "while"]
    if not loops:
        raise ValueError("the program has no while loop")
    middle = len(program.methods) / 2
    k, path = min(loops, key=lambda x: abs(x[0] - middle))
    m = program.methods[k]
    body = dict(_bodies(m.body))[path]
    new = (("put", program.fields[0], ("const", 43)),) + body
    return _with_method(program, k, dataclasses.replace(m, body=_replace_body(m.body, path, new)))


def _add_block(program: Program, params: Params, rng) -> Program:
    """New methods, ``block_share_pct`` of the file's lines, added in the middle of the class (§2.4)."""
    lines = max(10, int(len(program.source().splitlines()) * params.block_share_pct / 100))
    extra = ProgramWriter(params, rng).program("Block", lines + 3 + params.fields_per_class)
    renamed = tuple(dataclasses.replace(m, name=f"added{m.name}") for m in extra.methods)
    renamed = _map_program(Program("Block", extra.fields, renamed),
                           expr=lambda e: ("call", f"added{e[1]}", e[2]) if e[0] == "call" else e).methods
    half = len(program.methods) // 2
    return dataclasses.replace(program, methods=program.methods[:half] + renamed + program.methods[half:])


def _local_edits(program: Program, params: Params, rng) -> Program:
    """§6's local modifications: random changes confined to the first quarter of the methods."""
    first = range(max(1, len(program.methods) // 4))
    for c in range(max(1, params.max_changes // 3)):
        if rng.random() < 0.5:
            program = insert_statement(program, rng, f"newvariable{c}", methods=first)
        else:
            program = simplify_condition(program, rng, first) or delete_statement(program, rng, first) or program
    return program


def scenario_pair(scenario: str, program: Program, params: Params, rng) -> tuple:
    """(original, edited) for one of :data:`SCENARIOS`."""
    if scenario == "identical":
        return program, program
    if scenario == "local renamed":
        return program, rename_local(program, rng)
    if scenario == "local edits":
        return program, _local_edits(program, params, rng)
    if scenario == "block added":
        return program, _add_block(program, params, rng)
    if scenario == "methods reordered":
        return program, dataclasses.replace(program, methods=program.methods[::-1])
    if scenario == "jump over insertion":
        return program, _insert_in_loop(program, rng)
    raise ValueError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")


def tools(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """What each tool makes of named edits (means over programs). Index: scenario. Columns: source_pct
    and siff_pct (the original's similarity to the edited file, source and bytecode), siff_reverse_pct,
    dup_pct (the share of the original inside dup's matches over the threshold), dup_longest_lines,
    diff_common_pct (the share of the original's lines diff keeps)."""
    p = params or Params()
    gen = make_rng(rng)
    rows = {s: [] for s in SCENARIOS}
    for r in range(_replicates(quick, 6)):
        program = ProgramWriter(p, gen).program(f"Tool{r}", p.experiment_lines)
        for scenario in SCENARIOS:
            before, after = scenario_pair(scenario, program, p, gen)
            c = compare(compile_program(before, p), compile_program(after, p), p)
            rows[scenario].append(c)
    out = pd.DataFrame({s: pd.DataFrame(v).mean() for s, v in rows.items()}).T
    cols = ["source_pct", "siff_pct", "siff_reverse_pct", "dup_pct", "dup_longest_lines", "diff_common_pct"]
    return out[cols].rename_axis("scenario")


# --- then vs now: the whole pipeline on real bytecode ------------------------------------------------

#: JDK 17 sources that compile on their own, each in a package of its own (checked with javac 17):
#: a spread of collections, lengths and styles, for the mutation experiment.
MUTATION_SOURCES = (
    "java.desktop/java/awt/geom/FlatteningPathIterator.java",
    "java.base/java/util/concurrent/atomic/AtomicReferenceArray.java",
    "java.base/java/io/BufferedReader.java",
    "java.desktop/javax/swing/text/ElementIterator.java",
    "java.base/java/util/TimSort.java",
    "java.desktop/javax/swing/RowFilter.java",
    "java.desktop/javax/swing/plaf/BorderUIResource.java",
    "java.base/java/io/InputStream.java",
    "java.base/java/util/concurrent/DelayQueue.java",
    "java.desktop/javax/swing/tree/TreePath.java",
    "java.desktop/javax/swing/DefaultCellEditor.java",
    "java.desktop/java/awt/print/PageFormat.java",
    "java.desktop/javax/swing/plaf/nimbus/RadioButtonPainter.java",
    "java.base/java/io/DataInputStream.java",
    "java.desktop/javax/swing/TablePrintable.java",
    "java.desktop/java/awt/geom/ArcIterator.java",
    "java.desktop/javax/swing/BoxLayout.java",
    "java.desktop/javax/swing/DefaultListModel.java",
    "java.desktop/javax/swing/text/AbstractWriter.java",
    "java.desktop/java/awt/image/renderable/ParameterBlock.java",
    "java.base/java/util/concurrent/SynchronousQueue.java",
    "java.desktop/java/awt/image/WritableRaster.java",
    "java.base/java/io/DataOutputStream.java",
    "java.desktop/javax/swing/text/StyleConstants.java",
    "java.base/java/util/AbstractMap.java",
    "java.desktop/javax/swing/text/DefaultHighlighter.java",
    "java.desktop/java/awt/image/BufferedImageFilter.java",
    "java.base/java/util/concurrent/TimeUnit.java",
    "java.desktop/javax/swing/SizeSequence.java",
    "java.desktop/javax/swing/tree/DefaultTreeCellEditor.java",
)
EDIT_LEVELS = (1, 2, 4, 8, 16, 32, 64)   # edits per mutant: from one to far more than §4.1's 30%
KIND_EDITS = 4                           # edits of one kind alone, per source
CorpusUnavailable = jdk.CorpusUnavailable


@dataclass(frozen=True)
class Corpus:
    """Class files as the tools see them: names, collections (modules), sizes, bytes, listings, and what
    siff and dup keep (offset-encoded and raw)."""

    names: tuple
    collections: tuple
    sizes: np.ndarray
    data: tuple
    listings: tuple
    prints: tuple
    raw_prints: tuple
    tokens: tuple


def listings_of(classes, params: Params) -> Corpus:
    """Disassemble, encode and fingerprint ``(name, bytes)`` pairs; a name's first part (the JDK's module)
    is its collection."""
    p = params
    names, groups, sizes, datas, lsts, prints, raw_prints, toks = [], [], [], [], [], [], [], []
    for name, data in classes:
        lst = class_listing(data, p)
        if len(lst) == 0:
            continue
        names.append(name)
        groups.append(name.split("/", 1)[0])
        sizes.append(len(data))
        datas.append(data)
        lsts.append(lst)
        prints.append(fingerprints(lst.text(p), p))
        raw_prints.append(fingerprints(lst.raw_text(), p))
        toks.append(dup_tokens(lst, p))
    return Corpus(tuple(names), tuple(groups), np.array(sizes), tuple(datas), tuple(lsts), tuple(prints),
                  tuple(raw_prints), tuple(toks))


def jdk_corpus(params: Params | None = None, *, modules=None, every: int = 1, limit: int | None = None) -> Corpus:
    """The installed JDK's class files (every ``every``-th, at most ``limit``) as a corpus.

    Raises CorpusUnavailable where there is no JDK."""
    p = params or Params()
    chosen = itertools.islice(jdk.jdk_classes(modules, every=every), limit)
    return listings_of(chosen, p)


@numba.njit(cache=True)
def _shared(file_ptr, file_fp, fp_ptr, fp_file, threshold_pct):
    """For every file a, count the fingerprints it shares with every other file b (through the inverted
    index fp -> files) and keep the pairs at or over the threshold."""
    n = file_ptr.size - 1
    counts = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    cap = 1024
    out_a, out_b = np.empty(cap, np.int64), np.empty(cap, np.int64)
    out_s = np.empty(cap, np.float64)
    used = 0
    for a in range(n):
        size = file_ptr[a + 1] - file_ptr[a]
        if size == 0:
            continue
        nt = 0
        for k in range(file_ptr[a], file_ptr[a + 1]):
            f = file_fp[k]
            for j in range(fp_ptr[f], fp_ptr[f + 1]):
                b = fp_file[j]
                if b != a:
                    if counts[b] == 0:
                        touched[nt] = b
                        nt += 1
                    counts[b] += 1
        for t in range(nt):
            b = touched[t]
            sim = 100.0 * counts[b] / size
            if sim >= threshold_pct:
                if used == cap:
                    cap *= 2
                    na, nb, ns = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.float64)
                    na[:used], nb[:used], ns[:used] = out_a[:used], out_b[:used], out_s[:used]
                    out_a, out_b, out_s = na, nb, ns
                out_a[used], out_b[used], out_s[used] = a, b, sim
                used += 1
            counts[b] = 0
    return out_a[:used], out_b[:used], out_s[:used]


def siff_pairs(prints, threshold_pct: float) -> pd.DataFrame:
    """All-against-all siff: every ordered pair (a, b), a != b, with a's similarity to b at least the
    threshold. Fingerprints go into one inverted index, and each file's shared fingerprints are counted
    against every other file in one pass over it (a sparse product, as siff's sort of fingerprints does)."""
    counts = np.array([len(f) for f in prints], dtype=np.int64)
    if len(prints) < 2 or counts.sum() == 0:
        return pd.DataFrame({"a": np.zeros(0, np.int64), "b": np.zeros(0, np.int64),
                             "similarity_pct": np.zeros(0)})
    allp = np.concatenate(prints)
    _, fp = np.unique(allp, return_inverse=True)
    owner = np.repeat(np.arange(len(prints)), counts)
    file_ptr = np.concatenate([[0], np.cumsum(counts)])
    order = np.argsort(fp, kind="stable")
    fp_ptr = np.concatenate([[0], np.cumsum(np.bincount(fp, minlength=fp.max() + 1))])
    a, b, sim = _shared(file_ptr, fp.astype(np.int64), fp_ptr, owner[order].astype(np.int64), float(threshold_pct))
    out = pd.DataFrame({"a": a, "b": b, "similarity_pct": sim})
    return out.sort_values(["a", "b"]).reset_index(drop=True)


def dup_pairs(tokens, threshold: int, seed: int, *, common_cap: int = 32) -> pd.DataFrame:
    """All-against-all dup: every ordered pair of files sharing a p-match of at least ``threshold``
    lines, with the longest and the share of each file inside such matches.

    Seeds are windows of ``seed`` lines sampled every (threshold - seed + 1) // 2 lines of each file:
    a match that long holds at least two sampled windows of either file, and every window of every
    file is looked up among them; a diagonal is scanned where two seeds agree on it. Sampled windows
    that occur in more than ``common_cap`` places (compiler idioms) seed nothing, so a match with fewer
    than two rarer windows is missed."""
    empty = pd.DataFrame(columns=["a", "b", "longest_lines", "a_pct", "b_pct"])
    step = max(1, (threshold - seed + 1) // 2)
    hashes = [window_hashes(t, seed) for t in tokens]
    sizes = np.array([len(h) for h in hashes])
    if sizes.sum() == 0:
        return empty
    qh = np.concatenate(hashes)
    qf = np.repeat(np.arange(len(hashes)), sizes)
    qpos = np.arange(len(qh)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    sampled = qpos % step == 0
    sh, sf, sp = qh[sampled], qf[sampled], qpos[sampled]
    _, inverse, freq = np.unique(sh, return_inverse=True, return_counts=True)
    useful = freq[inverse] <= common_cap
    sh, sf, sp = sh[useful], sf[useful], sp[useful]
    order = np.argsort(sh, kind="stable")
    sh, sf, sp = sh[order], sf[order], sp[order]
    q, k = _hits(qh, sh)
    ga, fb, d = qf[q], sf[k], sp[k] - qpos[q]
    other = ga != fb
    span = 2 * int(sizes.max()) + 1
    key = (ga[other] * len(tokens) + fb[other]) * span + d[other] + span // 2
    key, hits = np.unique(key, return_counts=True)
    key = key[hits >= 2]   # a match that long holds two sampled windows: one alone is a coincidence
    if len(key) == 0:
        return empty
    pair, d = np.divmod(key, span)
    cand = np.stack([pair // len(tokens), pair % len(tokens), d - span // 2], axis=1)
    rows = scan_diagonals(tokens, cand[:, 0], cand[:, 1], cand[:, 2], threshold)
    found = {}
    for c, sa, sb, n in rows:
        found.setdefault((int(cand[c, 0]), int(cand[c, 1])), []).append((int(sa), int(sb), int(n)))
    out = [{"a": g, "b": f, "longest_lines": max(m[2] for m in ms),
            "a_pct": 100.0 * covered(ms, len(tokens[g])) / len(tokens[g]),
            "b_pct": 100.0 * covered(ms, len(tokens[f]), side=1) / len(tokens[f])}
           for (g, f), ms in found.items()]
    return pd.DataFrame(out, columns=empty.columns).sort_values(["a", "b"]).reset_index(drop=True)


def near_duplicates(c: Corpus, params: Params | None = None, *, clock=None) -> dict:
    """The paper's search over a corpus (§4.2): siff at the threshold and at the low threshold, on
    encoded and on raw listings; dup over its threshold; each timed by ``clock`` (seconds, e.g.
    time.perf_counter) when given. Returns the pair tables and the seconds."""
    p = params or Params()
    tick = clock or (lambda: 0.0)
    t0 = tick()
    siff = siff_pairs(c.prints, p.siff_threshold_pct)
    t1 = tick()
    dup = dup_pairs(c.tokens, p.dup_threshold_lines, p.dup_seed_lines)
    t2 = tick()
    return {"siff": siff, "siff_low": siff_pairs(c.prints, p.low_siff_threshold_pct),
            "siff_raw": siff_pairs(c.raw_prints, p.siff_threshold_pct), "dup": dup,
            "siff_s": t1 - t0, "dup_s": t2 - t1}


def pairs_table(c: Corpus, found: dict) -> pd.DataFrame:
    """Table 2's layout on a corpus of today: ordered pairs reported by siff only, by both, by dup only,
    for all pairs, pairs across collections, and unordered pairs across collections."""
    siff = set(zip(found["siff"]["a"], found["siff"]["b"], strict=True))
    dup = set(zip(found["dup"]["a"], found["dup"]["b"], strict=True))
    cross = lambda pair: c.collections[pair[0]] != c.collections[pair[1]]  # noqa: E731
    unordered = lambda pairs: {tuple(sorted(x)) for x in pairs}  # noqa: E731
    rows = []
    for label, s_, d_ in (("ordered pairs", siff, dup),
                          ("ordered pairs, different collections", {x for x in siff if cross(x)},
                           {x for x in dup if cross(x)}),
                          ("unordered pairs, different collections", unordered(x for x in siff if cross(x)),
                           unordered(x for x in dup if cross(x)))):
        rows.append({"pairs": label, "siff_only": len(s_ - d_), "siff_and_dup": len(s_ & d_),
                     "dup_only": len(d_ - s_), "siff_total": len(s_), "dup_total": len(d_)})
    return pd.DataFrame(rows).set_index("pairs")


def top_pairs(c: Corpus, found: dict, n: int = 10) -> pd.DataFrame:
    """The closest pairs across collections that both siff and dup report: names, similarities, dup's
    longest common section."""
    s = found["siff"].set_index(["a", "b"])["similarity_pct"]
    d = found["dup"].set_index(["a", "b"])
    rows = []
    for (a, b), sim in s.items():
        if c.collections[a] != c.collections[b] and (a, b) in d.index and a < b:
            back = s.get((b, a), float("nan"))
            rows.append({"file": c.names[a], "other": c.names[b], "siff_pct": sim, "siff_back_pct": back,
                         "dup_longest_lines": d.loc[(a, b), "longest_lines"]})
    out = pd.DataFrame(rows, columns=["file", "other", "siff_pct", "siff_back_pct", "dup_longest_lines"])
    return out.sort_values("dup_longest_lines", ascending=False).head(n).reset_index(drop=True)


def query_one(c: Corpus, params: Params | None = None, *, clock=None) -> dict:
    """§4.4's one-against-all: the corpus's class file nearest 50 KB, encoded again and compared with
    every file of the corpus. Returns its size, the seconds to encode it and to compare it (with
    ``clock``), and the files over the threshold (itself among them)."""
    p = params or Params()
    tick = clock or (lambda: 0.0)
    data = c.data[int(np.argmin(np.abs(c.sizes - p.paper_query_bytes)))]
    t0 = tick()
    prints = fingerprints(class_listing(data, p).text(p), p)
    t1 = tick()
    sims = np.array([siff_similarity(prints, f) for f in c.prints])
    t2 = tick()
    return {"query_bytes": len(data), "query_encode_s": t1 - t0, "query_s": t2 - t1,
            "matches": int((sims >= p.siff_threshold_pct).sum())}


def index_bytes(c: Corpus, *, bytes_per_print: int = 8) -> int:
    """The size of the index: every kept fingerprint (64 bits), one entry per file holding it."""
    return bytes_per_print * int(sum(len(f) for f in c.prints))


def corpus_then_and_now(c: Corpus, found: dict, timings: dict, params: Params | None = None) -> pd.DataFrame:
    """§4.2's and §4.4's numbers beside the same measures on this machine's corpus.

    ``timings``: encode_s (disassembling, encoding and fingerprinting the corpus) and what
    :func:`query_one` returns. Rates per ordered pair make corpora of different sizes comparable.
    Index: measure. Columns: section, then, now, unit."""
    p = params or Params()
    n = len(c.names)
    pairs_then, pairs_now = p.paper_files * (p.paper_files - 1), max(n * (n - 1), 1)
    siff, dup = found["siff"], found["dup"]
    cross = int(sum(c.collections[a] != c.collections[b] for a, b in zip(siff["a"], siff["b"], strict=True)))
    rows = [
        ("class files", p.paper_files, n, "count"),
        ("collections", p.paper_collections, len(set(c.collections)), "count"),
        ("siff pairs >= 50%, per million ordered pairs", 1e6 * p.paper_siff_pairs / pairs_then,
         1e6 * len(siff) / pairs_now, "rate"),
        ("share of those across collections (%)", 100.0 * p.paper_siff_cross_pairs / p.paper_siff_pairs,
         100.0 * cross / max(len(siff), 1), "%"),
        ("siff pairs >= 25%, per million ordered pairs", 1e6 * p.paper_siff_low_pairs / pairs_then,
         1e6 * len(found["siff_low"]) / pairs_now, "rate"),
        ("siff pairs >= 50% on raw listings, per million", float("nan"), 1e6 * len(found["siff_raw"]) / pairs_now,
         "rate"),
        ("dup pairs >= 200 lines, per million ordered pairs", 1e6 * p.paper_dup_pairs / pairs_then,
         1e6 * len(dup) / pairs_now, "rate"),
        ("encoding for siff (s)", p.paper_encode_siff_s, timings["encode_s"], "s"),
        ("siff all against all (s)", p.paper_siff_elapsed_s, found["siff_s"], "s"),
        ("dup all against all (s)", p.paper_dup_elapsed_s, found["dup_s"], "s"),
        ("one file against the index (s)", p.paper_query_user_s, timings["query_s"], "s"),
        ("encoding that file (s)", float("nan"), timings["query_encode_s"], "s"),
        ("that file's size (KB)", p.paper_query_bytes / 1024, timings["query_bytes"] / 1024, "KB"),
        ("index size, % of the class files", p.paper_index_pct, 100.0 * index_bytes(c) / c.sizes.sum(), "%"),
    ]
    out = pd.DataFrame(rows, columns=["measure", "then", "now", "unit"]).set_index("measure")
    out.insert(0, "section", ["§4.2"] * 7 + ["§4.4"] * 7)
    return out


# --- then vs now: javac-compiled mutations of real sources -------------------------------------------

def _package_span(toks) -> tuple | None:
    """(start, end) of the package declaration's text, or None."""
    for k, (kind, text, start) in enumerate(toks):
        if text == "package":
            for _, text2, end in toks[k:]:
                if text2 == ";":
                    return start, end + 1
            return None
        if kind == "word" and text in ("import", "class", "interface", "enum", "public", "final", "abstract"):
            return None
    return None


def in_package(source: str, package: str) -> str:
    """The compilation unit moved to ``package``, importing its old package so its public neighbours
    still resolve."""
    toks = java_source.tokens(source)
    span = _package_span(toks)
    if span is None:
        return f"package {package};\n{source}"
    old = source[span[0]:span[1]].removeprefix("package").strip().rstrip(";").strip()
    return f"{source[:span[0]]}package {package};\nimport {old}.*;{source[span[1]:]}"


def _first_difference(a: str, b: str) -> int:
    """The first index where two strings differ (bisection on equal prefixes)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _blocks_constructor_call(old: str, new: str) -> bool:
    """True if an insertion landed before a constructor's super(...) or this(...) call (javac refuses it)."""
    at = _first_difference(old, new)
    words = [t[1] for t in java_source.tokens(new[at:at + len(new) - len(old) + 400])]
    if ";" not in words:
        return False
    after = words[words.index(";") + 1:words.index(";") + 3]
    return len(after) == 2 and after[0] in ("super", "this") and after[1] == "("


def mutate_source(source: str, kinds, rng, *, attempts: int = 5, other_kinds: bool = False) -> tuple:
    """``source`` with one edit of each kind in ``kinds`` (pysim.workloads.java_source.mutate), skipping
    edits that would not compile (an insertion before a constructor's super() or this() call); where a
    kind has no place, another kind when ``other_kinds``, else nothing. Returns (text, edits made)."""
    text, done = source, 0
    for kind in kinds:
        tries = [kind] + ([k for k in java_source.KINDS if k != kind] if other_kinds else [])
        new = None
        for k in tries:
            for _ in range(attempts if k == "insert" else 1):   # only an insertion can land badly
                new = java_source.mutate(text, k, rng=int(rng.integers(2 ** 31)))
                if new is None or not (k == "insert" and _blocks_constructor_call(text, new)):
                    break
                new = None
            if new is not None:
                text, done = new, done + 1
                break
    return text, done


def mutation_plan(sources: dict, rng=0, *, quick: bool = False) -> pd.DataFrame:
    """The mutants of the experiment: for every source, one mutant per level of EDIT_LEVELS (kinds drawn
    at random; a kind with no place gives way to another), one of KIND_EDITS edits of each kind alone
    (where the source has a place for it), and the original. Columns: path, class_name, package, mix
    ('original', 'mixed' or the kind), edits (asked), made, text."""
    gen = make_rng(rng)
    rows = []
    for s, (path, text) in enumerate(sorted(sources.items())):
        cls = path.rsplit("/", 1)[-1].removesuffix(".java")
        plan = [("original", 0, ())]
        plan += [("mixed", n, tuple(java_source.KINDS[int(k)] for k in gen.integers(4, size=n)))
                 for n in EDIT_LEVELS[:4 if quick else None]]
        plan += [(kind, KIND_EDITS, (kind,) * KIND_EDITS) for kind in java_source.KINDS]
        for v, (mix, n, kinds) in enumerate(plan):
            new, made = mutate_source(text, kinds, gen, other_kinds=mix == "mixed") if kinds else (text, 0)
            if mix == "original" or made:   # a kind the source has no place for gives no mutant
                rows.append({"path": path, "class_name": cls, "package": f"baker{s}v{v}", "mix": mix,
                             "edits": n, "made": made, "text": new})
    return pd.DataFrame(rows)


def units_of(plan: pd.DataFrame) -> dict:
    """What to compile: {package: (class name, source moved into that package)}."""
    return {r.package: (r.class_name, in_package(r.text, r.package)) for r in plan.itertuples()}


def code_text(source: str) -> str:
    """A compilation unit's code without comments or layout: its tokens, a line ending at each ';', '{'
    and '}'. (The JDK's sources are half comments, which no edit touches.)"""
    out = []
    for _, text, _ in java_source.tokens(source):
        out.append(text)
        out.append("\n" if text in (";", "{", "}") else " ")
    return "".join(out)


def mutation_results(plan: pd.DataFrame, classes: dict, params: Params | None = None) -> pd.DataFrame:
    """Every mutant against its original: siff on the sources as they are and on their code alone
    (code_pct), siff on the encoded and on the raw listings, dup's share of the original in matches over
    the low threshold, diff's common lines.

    ``classes``: {package: {class file name: bytes}} as javac wrote them (a package javac refused is
    missing, and so is its row)."""
    p = params or Params()
    low = dataclasses.replace(p, dup_threshold_lines=p.low_dup_threshold_lines,
                              dup_seed_lines=min(p.dup_seed_lines, p.low_dup_threshold_lines))
    built = {}
    for r in plan.itertuples():
        if r.package in classes and classes[r.package]:
            datas = [classes[r.package][k] for k in sorted(classes[r.package])]
            lst = _joined([class_listing(d, p) for d in datas])
            built[r.package] = (analyse(r.text, lst, low), fingerprints(lst.raw_text(), p))
    rows = []
    for path, group in plan.groupby("path", sort=False):
        first = group[group["mix"] == "original"].iloc[0]
        if first.package not in built:
            continue
        orig, orig_raw = built[first.package]
        orig_code = fingerprints(code_text(first.text), p)
        for r in group.itertuples():
            if r.mix == "original" or r.package not in built:
                continue
            mut, mut_raw = built[r.package]
            c = compare(orig, mut, low)
            rows.append({"path": path, "mix": r.mix, "edits": r.edits, "made": r.made,
                         "source_pct": c["source_pct"],
                         "code_pct": siff_similarity(orig_code, fingerprints(code_text(r.text), p)),
                         "bytecode_pct": c["siff_pct"],
                         "raw_pct": siff_similarity(orig_raw, mut_raw), "dup_pct": c["dup_pct"],
                         "diff_common_pct": c["diff_common_pct"], "listing_lines": len(orig.listing)})
    out = pd.DataFrame(rows)
    out.attrs["cross_max_pct"] = _cross_source_max(plan, built)
    return out


def _joined(listings) -> Listing:
    """Listings of a compilation unit's class files, one after the other (jump targets shifted)."""
    kinds, values, target = [], [], []
    for lst in listings:
        base = len(kinds)
        kinds += lst.kinds
        values += lst.values
        target += [t + base if t >= 0 else -1 for t in lst.target]
    return Listing(tuple(kinds), tuple(values), tuple(target))


def _cross_source_max(plan: pd.DataFrame, built: dict) -> float:
    """The highest bytecode similarity between a variant of one source and a variant of another."""
    packages = [r.package for r in plan.itertuples() if r.package in built]
    paths = dict(zip(plan["package"], plan["path"], strict=True))
    pairs = siff_pairs([built[k][0].prints for k in packages], 0.0)
    if pairs.empty:
        return 0.0
    other = [paths[packages[a]] != paths[packages[b]] for a, b in zip(pairs["a"], pairs["b"], strict=True)]
    return float(pairs["similarity_pct"][other].max()) if any(other) else 0.0


def mutation_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean similarities by the number of edits (mixed kinds) and by the kind of edit (alone).
    Index: (mix, edits). Columns: mutants, source_pct, code_pct, bytecode_pct, raw_pct, dup_pct,
    diff_common_pct."""
    cols = ["source_pct", "code_pct", "bytecode_pct", "raw_pct", "dup_pct", "diff_common_pct"]
    g = results.groupby(["mix", "edits"])
    out = g[cols].mean()
    out.insert(0, "mutants", g.size().astype(float))
    return out


def mutation_bands(results: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Table 1's layout on today's mixed mutants: grouped by the similarity of their code (comments
    stripped), the mean code and bytecode similarities, the largest gap, and the share siff still finds
    at its threshold."""
    p = params or Params()
    mixed = results[results["mix"] == "mixed"]
    t = mixed.assign(band=[_band(x) or ("below 70" if x < SIFF_BANDS[-1][1] else None) for x in mixed["code_pct"]],
                     gap=(mixed["code_pct"] - mixed["bytecode_pct"]).abs())
    rows = []
    for band in [b for b, _, _ in SIFF_BANDS] + ["below 70"]:
        b = t[t["band"] == band]
        rows.append({"band": band, "mutants": float(len(b)), "code_pct": b["code_pct"].mean(),
                     "bytecode_pct": b["bytecode_pct"].mean(), "max_diff_pct": b["gap"].max(),
                     "found_pct": 100.0 * (b["bytecode_pct"] >= p.siff_threshold_pct).mean() if len(b)
                     else float("nan")})
    return pd.DataFrame(rows).set_index("band")


def mutation_statements(results: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The paper's statements about edits, checked on today's javac output with the bands of
    papers/atc98_baker/claims.yaml. Each row: what the paper says, the measure, its value now, and
    whether the statement holds now (None where no mutant measures it)."""
    p = params or Params()
    mixed = results[results["mix"] == "mixed"]
    swaps = results[results["mix"] == "swap"]
    renames = results[results["mix"] == "rename"]
    gap = (mixed["code_pct"] - mixed["bytecode_pct"]).abs().mean()
    thirty = mutation_bands(results, p).loc["70-79", "found_pct"]
    raw, encoded = mixed["raw_pct"].mean(), mixed["bytecode_pct"].mean()
    kept = min(swaps["bytecode_pct"].mean(), swaps["dup_pct"].mean())
    cross = results.attrs.get("cross_max_pct", float("nan"))
    rows = [
        ("§4.1", "the bytecode similarities are close to the source code similarities",
         "mean |code - bytecode| similarity, mixed edits (points)", gap, bool(gap <= 10)),
        ("Abstract", "even changes of 30% to the source file will usually result in bytecode that can be "
                     "associated with the original",
         "mutants with 70-79% of their code left that siff finds at 50% (%)", thirty,
         None if thirty != thirty else bool(thirty > 50)),
        ("§3.2", "running siff ... on the disassembled file without further preprocessing does not produce "
                 "useful information", "siff similarity of raw listings less that of encoded ones (points)",
         raw - encoded, bool(raw < encoded)),
        ("§6", "name changes of variables would not be a problem", "siff similarity after renames only (%)",
         renames["bytecode_pct"].mean(), bool(len(renames) and renames["bytecode_pct"].min() >= 100)),
        ("§6", "reordering ... the order of methods will have little effect on siff and dup",
         "lower of siff's and dup's similarity after method swaps only (%)", kept, bool(kept >= 90)),
        ("§6", "... though it will greatly affect diff", "diff's common lines after method swaps only (%)",
         swaps["diff_common_pct"].mean(), bool(swaps["diff_common_pct"].mean() < 50)),
        ("§4.1", "we also ran siff on all the variants ... together, and found no false positives",
         "highest bytecode similarity between variants of different sources (%)", cross,
         bool(cross < p.siff_threshold_pct)),
    ]
    return pd.DataFrame(rows, columns=["section", "paper says", "measure", "now", "holds now"])


def then_and_now(corpus_table: pd.DataFrame | None, statements: pd.DataFrame | None) -> pd.DataFrame:
    """The then-vs-now table: §4.2's and §4.4's numbers beside the JDK corpus of this machine
    (:func:`corpus_then_and_now`), and the paper's statements about edits checked on javac's output
    (:func:`mutation_statements`); either part may be missing (None) where a tool is.
    Columns: section, measure, then (the paper's number, where it gives one), now, unit, holds_now,
    paper_says."""
    parts = []
    if corpus_table is not None:
        t = corpus_table.reset_index()
        parts.append(t.assign(holds_now=None, paper_says=""))
    if statements is not None:
        parts.append(pd.DataFrame({"section": statements["section"], "measure": statements["measure"],
                                   "then": float("nan"), "now": statements["now"], "unit": "",
                                   "holds_now": statements["holds now"], "paper_says": statements["paper says"]}))
    cols = ["section", "measure", "then", "now", "unit", "holds_now", "paper_says"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)
