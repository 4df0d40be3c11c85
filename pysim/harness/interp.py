"""A small threaded-code interpreter in C, three ways, for studies of what interpretation costs.

The same bytecode loop (five bytecodes a trip: MUL3, ADD, SHX, DEC, JNZ; operands implicit, so every
variant does the same work) is run by a ``switch`` in a loop, by computed goto (GCC's labels as values,
"threaded code"), and by one function per bytecode ending in a tail call, against the loop written
directly in C. The harness builds and times them (:func:`pysim.harness.measure`): :func:`measure_dispatch`
gives ns per trip and the slowdown over native C; :func:`check_variants` runs 10^7 trips of each and
reports whether they compute the same value (a tail-call interpreter built without sibling calls would
overflow its stack instead).

    >>> sorted(VARIANTS)
    ['computed goto', 'native C', 'switch', 'tail calls']
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pysim.harness.commands import run_command
from pysim.harness.runners import Snippet, build, measure
from pysim.harness.exclusive import one_core

#: The bytecode: r0 counts down from N; each trip does r1 = r1 * 3 + r0; r2 ^= r1 >> 7; the loop
#: is 5 bytecodes (MUL3, ADD, SHX, DEC, JNZ). Operands are implicit, so every variant does the same work.
PROGRAM_DECLS = r"""
enum { MUL3, ADD, SHX, DEC, JNZ, HALT };
static const unsigned char prog[] = { MUL3, ADD, SHX, DEC, JNZ, HALT };
typedef struct { uint64_t r0, r1, r2; const unsigned char *pc; } vm_t;
static uint64_t native_loop(uint64_t n) {
    uint64_t r1 = 1, r2 = 0;
    for (uint64_t r0 = n; r0 != 0; r0--) { r1 = r1 * 3 + r0; r2 ^= r1 >> 7; __asm__ volatile("" : "+r"(r2)); }
    return r1 ^ r2;
}
static uint64_t run_switch(uint64_t n) {
    vm_t v = { n, 1, 0, prog };
    for (;;) {
        switch (*v.pc) {
        case MUL3: v.r1 *= 3; v.pc++; break;
        case ADD: v.r1 += v.r0; v.pc++; break;
        case SHX: v.r2 ^= v.r1 >> 7; v.pc++; break;
        case DEC: v.r0--; v.pc++; break;
        case JNZ: v.pc = v.r0 ? prog : v.pc + 1; break;
        default: return v.r1 ^ v.r2;
        }
    }
}
static uint64_t run_goto(uint64_t n) {
    static void *labels[] = { &&mul3, &&add, &&shx, &&dec, &&jnz, &&halt };
    uint64_t r0 = n, r1 = 1, r2 = 0; const unsigned char *pc = prog;
#define NEXT goto *labels[*pc]
    NEXT;
mul3: r1 *= 3; pc++; NEXT;
add: r1 += r0; pc++; NEXT;
shx: r2 ^= r1 >> 7; pc++; NEXT;
dec: r0--; pc++; NEXT;
jnz: pc = r0 ? prog : pc + 1; NEXT;
halt: return r1 ^ r2;
#undef NEXT
}
typedef uint64_t (*op_t)(uint64_t, uint64_t, uint64_t, const unsigned char *);
static const op_t ops[6];
#define TAIL(r0, r1, r2, pc) return ops[*(pc)](r0, r1, r2, pc)
static uint64_t t_mul3(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { TAIL(r0, r1 * 3, r2, pc + 1); }
static uint64_t t_add(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { TAIL(r0, r1 + r0, r2, pc + 1); }
static uint64_t t_shx(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { TAIL(r0, r1, r2 ^ (r1 >> 7), pc + 1); }
static uint64_t t_dec(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { TAIL(r0 - 1, r1, r2, pc + 1); }
static uint64_t t_jnz(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { TAIL(r0, r1, r2, r0 ? prog : pc + 1); }
static uint64_t t_halt(uint64_t r0, uint64_t r1, uint64_t r2, const unsigned char *pc) { (void)r0; (void)pc; return r1 ^ r2; }
static const op_t ops[6] = { t_mul3, t_add, t_shx, t_dec, t_jnz, t_halt };
static uint64_t run_tail(uint64_t n) { return ops[prog[0]](n, 1, 0, prog); }
"""

#: Bytecodes the interpreters dispatch per trip of the loop.
BYTECODES_PER_TRIP = 5
#: One timed iteration runs the loop for this many trips (so a try lasts long enough to time well).
TRIPS = 1000
VARIANTS = {"native C": "native_loop", "switch": "run_switch", "computed goto": "run_goto",
            "tail calls": "run_tail"}


def body(func: str) -> str:
    """The timed snippet: one call of ``func`` for TRIPS trips (the result feeds the sink)."""
    return f"sink += {func}((uint64_t){TRIPS} + (sink & 1));"


def check_variants() -> dict:
    """Every variant's result for a long loop (10^7 trips: a tail-call interpreter without sibling calls
    would overflow the stack), as printed by a small program built with the harness's flags."""
    decls = PROGRAM_DECLS + "\n#include <string.h>\n"
    setup = ("uint64_t nn = 10000000; printf(\"%llu %llu %llu %llu\\n\", (unsigned long long)native_loop(nn), "
             "(unsigned long long)run_switch(nn), (unsigned long long)run_goto(nn), "
             "(unsigned long long)run_tail(nn)); return 0;")
    cmd, why = build(Snippet("c", "sink += 1;", setup=setup, decls=decls))
    if cmd is None:
        return {"available": False, "reason": why}
    r = run_command(cmd, timeout_s=60.0)
    if not r.available or r.returncode != 0:
        return {"available": False, "reason": r.reason or r.stderr[-300:]}
    vals = [int(x) for x in r.stdout.split()]
    return {"available": True, "values": vals, "agree": len(set(vals)) == 1}




@one_core()
def measure_dispatch(*, tries: int = 7, enough_s: float | None = None) -> pd.DataFrame:
    """ns per loop trip of native C and each interpreter on this machine (median of ``tries``). Index:
    variant. Columns: available, ns_per_trip, ns_per_bytecode, slowdown (over native C), note."""
    rows = {}
    for name, func in VARIANTS.items():
        m = measure("c", body(func), name=name, decls=PROGRAM_DECLS, tries=tries, enough_s=enough_s)
        rows[name] = {"available": m.available, "ns_per_trip": 1e9 * m.per_op_s / TRIPS if m.available else np.nan,
                      "note": m.reason}
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("variant")
    df["ns_per_bytecode"] = df["ns_per_trip"] / BYTECODES_PER_TRIP
    df["slowdown"] = df["ns_per_trip"] / df.loc["native C", "ns_per_trip"]
    return df
