"""Dynamic C++ classes (Hjalmtysson & Gray, USENIX ATC 1998).

Regenerates §5.1's two measurements, the only numbers the paper prints: the
overhead of constructing and destroying a dynamic class (empty constructor or
one that zeroes a 128-byte static block; single-threaded, or multi-threaded
with the version lists' lock) and of invoking one of its methods (empty, or
three locals incremented and compared; medium- and low-functionality
templates), each against a stack-allocated class without virtual methods and
a heap-allocated class with them. Figures 1-4 are diagrams; §5.2's space
statement is the design restated (see papers/atc98_hjalmtysson/paper.yaml).

First principles: every case is a :class:`pysim.sw.Recipe`, the operations
its code performs per iteration of the timing loop, counted: a call through
the proxy (``proxy``), a call through the vtable (``virtual_call``), the
validity check, the lock, the factory call into the version's shared
library, the allocation. Each operation is an instruction sequence of the
IRIX code of the time (position-independent calls through the global offset
table, cfront's vtable entries with their offset, prologues that set up the
global pointer) priced on the in-order pipeline of the SGI Indy's R4400 by
:func:`pipeline_cycles`: one cycle an instruction, two more for a load
whose result the next instruction uses, two more for a taken branch or
jump (:data:`SEQUENCES` lists the code). §4's rules fix what is inlined:
a method that may throw is not (footnote 8), and every method of the medium
template may throw (the appendix), so its constructor, destructor and
``operator->`` are calls, each with a frame and an exception context; the
low template's ``operator->`` cannot throw and is inlined.

Calibrated, each on one published cell (see CALIBRATION): the exception
context a throwing method registers (the medium template's empty-method
overhead against the heap class), malloc and free's own work (the empty
constructor's overhead against the heap class) and the lock (the same in the
multi-threaded environment). The zeroing constructor is a byte loop, priced
from its instructions. Everything else is a prediction.

Not reproduced: the invocation overheads against the stack class and those of
the low template (the paper's virtual call costs more, against a direct call,
than the R4400's instructions give it), and the zeroing constructor's
single-threaded overhead against the stack class (the paper's own pairs
disagree there); deviations.yaml gives the arithmetic. §6's applications give
no numbers.

Then vs now (not an artifact): :func:`measure_now` builds and times a real
``dynamic<T>`` over ``dlopen`` on this machine with g++ -O2 (two versions of
one implementation, each in its own shared object built with -fPIC, swapped
while the program runs), through :func:`pysim.harness.measure`;
:func:`then_and_now`, :func:`unit_costs` and :func:`statements_now` set the
measurements beside the model of the Indy and the paper's statements.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.harness import measure
from pysim.harness.runners import cache_dir
from pysim.hw import CpuCostModel, catalog
from pysim.models import Counterfactual, Fit
from pysim.params import ModelParams, assumed, calibrated, from_catalog, stated
from pysim.sw import Recipe, fit_residual
from pysim.harness.exclusive import exclusive, one_core

INDY = catalog.SGI_INDY_R4400

PERCENT = 100
TEMPLATES = ("medium", "low")
METHODS = ("empty", "nonempty")
CONSTRUCTORS = ("empty", "zeroing")
THREADING = ("single", "multi")


@dataclass(frozen=True)
class Seq:
    """An instruction sequence as an in-order pipeline sees it."""

    instructions: int   # issued, delay slots included
    load_uses: int      # loads whose result the very next instruction uses
    taken: int          # taken branches and jumps
    code: str           # what the instructions are


#: What each operation executes on the R4400: IRIX's o32 position-independent code, as its compilers emitted it
#: (every call to a global function goes through the global offset table and restores $gp after; a function
#: that calls another sets $gp up from $t9 and saves $ra), with cfront's vtable entries (an offset and a pointer).
SEQUENCES = {
    "loop": Seq(3, 0, 1, "addiu i; bne i, n; (delay slot)"),
    "call": Seq(6, 0, 2, "lw t9 <- GOT; jalr t9; (delay slot: move a0, this) ... jr ra; (delay slot); lw gp"),
    "frame": Seq(8, 1, 0, "lui gp; addiu gp; addu gp, t9; addiu sp; sw ra; sw gp ... lw ra; addiu sp"),
    "virtual_call": Seq(9, 2, 2, "lw vptr; lw t9 <- entry; lh delta; addu this, delta; jalr t9; (delay slot) "
                                 "... jr ra; (delay slot); lw gp"),
    "proxy": Seq(1, 1, 0, "lw object <- proxy (used at once by the vptr load)"),
    "validity_check": Seq(4, 2, 0, "lw version <- proxy; lw valid <- version; beq valid, zero, throw; (delay slot)"),
    "load": Seq(1, 1, 0, "lw a pointer the next instruction uses (the active version, the factory)"),
    "update": Seq(3, 1, 0, "lw count; addiu count, +-1; sw count"),
    "store": Seq(1, 0, 0, "sw (the vtable pointer, the proxy's object or version pointer)"),
    "test": Seq(2, 0, 0, "a branch not taken, with its delay slot"),
    "body": Seq(21, 6, 0, "three locals in the frame: 3 x sw; 3 x (lw, addiu, sw); 3 x (lw, bne, delay slot)"),
}
#: One iteration of the constructor's zeroing loop, which stores ``zero_store_bytes`` bytes. The assembler cannot
#: fill the delay slot: the store's address register changes in the increment, and the branch tests the increment.
ZERO_STEP = Seq(4, 0, 1, "sb zero, 0(p); addiu p, 1; bne p, end; (delay slot)")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Costs in cycles of the Indy's R4400."""

    clock_hz: float = from_catalog(INDY, "clock_hz", gt=0)
    load_use_stall_cycles: int = assumed(2, "MIPS R4000/R4400 User's Manual §3.2: a load delay of two cycles", ge=0)
    taken_branch_stall_cycles: int = assumed(2, "R4000/R4400 User's Manual §3.2: a branch delay of three cycles, "
                                                "one of them the delay slot", ge=0)
    zero_bytes: int = stated(128, "§5.1: the constructor zeroes out a 128-byte block of static memory", ge=1)
    zero_store_bytes: int = assumed(1, "the block zeroed a byte at a time (a char array in a for loop); 4 would be "
                                       "word stores (sw), 8 doubleword stores", choices=(1, 4, 8))
    locks_per_object: int = assumed(2, "the constructor counts the object into its version and the destructor "
                                       "counts it out, each under the version lists' lock", ge=1)
    eh_context_cycles: float = calibrated(21.8, "registering and removing the exception context of a method that "
                                                "may throw", ge=0, le=1e4)
    malloc_free_cycles: float = calibrated(57.75, "malloc and free's own work for a small object", ge=0, le=1e5)
    lock_cycles: float = calibrated(458.1375, "acquiring and releasing the version lists' lock", ge=0, le=1e6)
    throw_blocks_inlining: bool = stated(True, "§5.1 footnote 8: most C++ compilers will not inline a method that "
                                               "can throw; appendix: the template methods all throw on error")
    version_lock: bool = stated(True, "§5.1: in a multi-threaded environment a lock prevents corruption of the "
                                      "version lists")
    loop_counted: bool = assumed(True, "§5.1 times ten million iterations per run; nothing says the empty loop "
                                       "was subtracted")


CALIBRATION = (
    Fit("eh_context_cycles", "invocation", "medium / empty", "vs_heap_pct", (0.0, 1000.0)),
    Fit("malloc_free_cycles", "construction", "empty / single", "vs_heap_pct", (0.0, 5000.0)),
    Fit("lock_cycles", "construction", "empty / multi", "vs_heap_pct", (0.0, 50000.0)),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("no-lock", {"version_lock": False},
                   "the multi-threaded environment takes no lock around the version lists"),
    Counterfactual("inlined-medium", {"throw_blocks_inlining": False},
                   "a compiler that inlines methods that may throw: the medium template's operator->, constructor "
                   "and destructor inlined, with no exception context of their own"),
)


# --- pricing ------------------------------------------------------------------------------

def pipeline_cycles(seq: Seq, p: Params) -> float:
    """Cycles ``seq`` takes on an in-order pipeline: one an instruction, plus the load-use and taken-branch stalls."""
    return seq.instructions + seq.load_uses * p.load_use_stall_cycles + seq.taken * p.taken_branch_stall_cycles


def sequences_table(params: Params | None = None) -> pd.DataFrame:
    """The instruction sequences and what each costs on the pipeline. Index: operation."""
    p = params or Params()
    rows = [{"operation": op, "instructions": s.instructions, "load_uses": s.load_uses, "taken": s.taken,
             "cycles": pipeline_cycles(s, p), "code": s.code}
            for op, s in {**SEQUENCES, "zero (per step)": ZERO_STEP}.items()]
    return pd.DataFrame(rows).set_index("operation")


def cost_model(params: Params | None = None) -> CpuCostModel:
    """Every operation's cost on the Indy: the sequences priced on its pipeline, the three calibrated residuals,
    and the zeroing loop per byte."""
    p = params or Params()
    cycle = 1.0 / p.clock_hz
    fixed = {op: pipeline_cycles(seq, p) * cycle for op, seq in SEQUENCES.items()}
    fixed.update(eh_context=p.eh_context_cycles * cycle, malloc_free=p.malloc_free_cycles * cycle,
                 lock=p.lock_cycles * cycle)
    per_byte = {"zero": pipeline_cycles(ZERO_STEP, p) / p.zero_store_bytes * cycle}
    return CpuCostModel(p.clock_hz, fixed, per_byte)


def _ops(**counts) -> Recipe:
    return Recipe(ops={op: n for op, n in counts.items() if n})


def _loop(p: Params) -> Recipe:
    return _ops(loop=1) if p.loop_counted else Recipe()


def throwing_method(p: Params) -> Recipe:
    """What a method that may throw costs around its body: a call with a frame and an exception context when
    the compiler will not inline it (§5.1 footnote 8), nothing otherwise."""
    return _ops(call=1, frame=1, eh_context=1) if p.throw_blocks_inlining else Recipe()


def invocation_recipe(case: str, method: str, params: Params | None = None) -> Recipe:
    """One iteration of the invocation test: ``case`` in stack, heap, medium, low; ``method`` empty or nonempty."""
    p = params or Params()
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    body = _ops(body=1) if method == "nonempty" else Recipe()
    if case == "stack":                       # a direct call
        call = _ops(call=1)
    elif case == "heap":                      # through the vtable
        call = _ops(virtual_call=1)
    elif case == "low":                       # operator-> inlined: the object pointer out of the proxy
        call = _ops(proxy=1, virtual_call=1)
    elif case == "medium":                    # operator-> checks the version; it may throw
        call = throwing_method(p) + _ops(proxy=1, validity_check=1, virtual_call=1)
    else:
        raise ValueError(f"case must be stack, heap, medium or low, got {case!r}")
    return _loop(p) + call + body


def _allocate_and_free() -> Recipe:
    """operator new calling malloc, operator delete calling free (each a function with a frame)."""
    return _ops(call=4, frame=2, malloc_free=1)


def construction_recipe(case: str, ctor: str, threading: str, params: Params | None = None) -> Recipe:
    """One construct-and-destroy: ``case`` in stack, heap, dynamic; ``ctor`` empty or zeroing; ``threading``
    single or multi (the dynamic class then takes the version lists' lock)."""
    p = params or Params()
    if ctor not in CONSTRUCTORS:
        raise ValueError(f"ctor must be one of {CONSTRUCTORS}, got {ctor!r}")
    if threading not in THREADING:
        raise ValueError(f"threading must be one of {THREADING}, got {threading!r}")
    zeroing = Recipe(nbytes={"zero": p.zero_bytes}) if ctor == "zeroing" else Recipe()
    # every class's constructor is compiled out of line (else an empty one leaves an empty loop to time)
    ctor_call = _ops(call=1) + zeroing
    if case == "stack":                        # the constructor and the destructor, out of line
        work = ctor_call + _ops(call=1)
    elif case == "heap":                       # new, the constructor setting the vptr; delete through the vtable
        work = _allocate_and_free() + ctor_call + _ops(store=1, virtual_call=1, frame=1)
    elif case == "dynamic":
        proxy_ctor = throwing_method(p) + _ops(load=2, test=1, update=1, call=1, frame=1, store=2)
        proxy_dtor = throwing_method(p) + _ops(update=1, load=1, test=1)
        obj = _allocate_and_free() + ctor_call + _ops(store=1, virtual_call=1, frame=1)  # made by the factory
        lock = _ops(lock=p.locks_per_object) if threading == "multi" and p.version_lock else Recipe()
        work = proxy_ctor + proxy_dtor + obj + lock
    else:
        raise ValueError(f"case must be stack, heap or dynamic, got {case!r}")
    return _loop(p) + work


def cycles(recipe: Recipe, params: Params | None = None) -> float:
    """Cycles a recipe takes on the Indy."""
    p = params or Params()
    return recipe.seconds(cost_model(p)) * p.clock_hz


def _overhead_pct(dynamic: float, baseline: float) -> float:
    return PERCENT * (dynamic / baseline - 1.0)


# --- the artifacts --------------------------------------------------------------------------

def invocation(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.1, method invocation: overhead (%) of the medium and low templates against the stack and heap classes.

    Index: (template, method). Columns: stack_cycles, heap_cycles, dynamic_cycles, vs_heap_pct, vs_stack_pct,
    check_share_pct (the validity check's share of the overhead against the heap class).
    """
    p = params or Params()
    cpu = cost_model(p)
    rows = []
    for template in TEMPLATES:
        for method in METHODS:
            stack = cycles(invocation_recipe("stack", method, p), p)
            heap = cycles(invocation_recipe("heap", method, p), p)
            dyn_recipe = invocation_recipe(template, method, p)
            dyn = cycles(dyn_recipe, p)
            check = dyn_recipe.ops.get("validity_check", 0) * cpu.fixed_s["validity_check"] * p.clock_hz
            rows.append({"template": template, "method": method, "stack_cycles": stack, "heap_cycles": heap,
                         "dynamic_cycles": dyn, "vs_heap_pct": _overhead_pct(dyn, heap),
                         "vs_stack_pct": _overhead_pct(dyn, stack),
                         "check_share_pct": PERCENT * check / (dyn - heap) if dyn > heap else 0.0})
    return pd.DataFrame(rows).set_index(["template", "method"])


def construction(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.1, construction and destruction: overhead (%) of the medium template against the stack and heap classes.

    Index: (constructor, threading). Columns: stack_cycles, heap_cycles, dynamic_cycles, vs_heap_pct,
    vs_stack_pct, lock_pct (the lock's share of the dynamic class's time).
    """
    p = params or Params()
    rows = []
    for ctor in CONSTRUCTORS:
        for threading in THREADING:
            stack = cycles(construction_recipe("stack", ctor, threading, p), p)
            heap = cycles(construction_recipe("heap", ctor, threading, p), p)
            dyn_recipe = construction_recipe("dynamic", ctor, threading, p)
            dyn = cycles(dyn_recipe, p)
            lock = dyn_recipe.ops.get("lock", 0) * p.lock_cycles
            rows.append({"constructor": ctor, "threading": threading, "stack_cycles": stack, "heap_cycles": heap,
                         "dynamic_cycles": dyn, "vs_heap_pct": _overhead_pct(dyn, heap),
                         "vs_stack_pct": _overhead_pct(dyn, stack), "lock_pct": PERCENT * lock / dyn})
    return pd.DataFrame(rows).set_index(["constructor", "threading"])


def breakdown(params: Params | None = None) -> pd.DataFrame:
    """Cycles per operation of every case on the Indy: one row per (test, case, variant), one column per operation."""
    p = params or Params()
    cpu = cost_model(p)
    rows = {}
    for case in ("stack", "heap", "low", "medium"):
        for method in METHODS:
            rows[("invocation", case, method)] = invocation_recipe(case, method, p).breakdown(cpu)
    for case in ("stack", "heap", "dynamic"):
        for ctor in CONSTRUCTORS:
            for threading in THREADING if case == "dynamic" else ("single",):
                variant = f"{ctor}, {threading}" if case == "dynamic" else ctor
                rows[("construction", case, variant)] = construction_recipe(case, ctor, threading, p).breakdown(cpu)
    df = pd.DataFrame(rows).T.fillna(0.0) * p.clock_hz
    df.index.names = ["test", "case", "variant"]
    return df


# --- then vs now: a real dynamic<T> over dlopen, built with g++ and timed by the lmbench harness ----------------

#: The interface the program knows at compile time (§4): one pure virtual method per test.
CPP_INTERFACE = r"""
struct Worker {                          // the dynamic class's interface, known to the program
    virtual ~Worker() {}
    virtual void empty() = 0;            // no arguments, no result, no work
    virtual void work() = 0;             // three locals, each incremented, three comparisons that are false
    virtual int version() const = 0;
};
"""

#: One implementation of Worker, compiled twice (PLUGIN_VERSION 1 and 2) into two shared objects.
CPP_PLUGIN = r"""
#define NOINLINE __attribute__((noinline, noipa))
static char block[128];
namespace {
struct Impl : Worker {                   // every constructor and destructor out of line, as the baselines'
    NOINLINE Impl();
    NOINLINE ~Impl() override;
    void empty() override {}
    void work() override {
        volatile int a = 0, b = 0, c = 0;  // volatile: the work survives -O2, as it survived in the paper's runs
        ++a; ++b; ++c;
        if (a == 7) block[0] = 1;
        if (b == 7) block[1] = 1;
        if (c == 7) block[2] = 1;
    }
    int version() const override { return PLUGIN_VERSION; }
};
Impl::Impl() {}
Impl::~Impl() {}
struct Zeroing : Impl {                  // the constructor zeroes a 128-byte block of static memory
    NOINLINE Zeroing();
};
Zeroing::Zeroing() { for (int i = 0; i < 128; i++) block[i] = 0; __asm__ volatile("" ::: "memory"); }
}
extern "C" Worker* create_empty() { return new Impl; }      // the versions' factories (createInstance)
extern "C" Worker* create_zeroing() { return new Zeroing; }
"""

#: The proxy: the version registry, the medium template (validity check, may throw) and the low template.
CPP_DYNAMIC = r"""
#ifndef DYN_LOCK
#define DYN_LOCK 0          // 0: no lock (one thread), 1: a mutex around the version lists, 2: atomic counts
#endif
#ifndef DYN_FACTORY
#define DYN_FACTORY "create_empty"
#endif
#ifndef DYN_OUTLINE
#define DYN_OUTLINE 0       // 1: operator-> never inlined, as the 1998 compilers treated a method that may throw
#endif

struct invalid_version : std::runtime_error { using std::runtime_error::runtime_error; };

template <class T>
struct DynamicVersion {                 // one implementation of T, in its own shared object
    std::string library;
    void* handle = nullptr;
    T* (*create)() = nullptr;           // the version's factory
    std::atomic<long> objects{0};       // live objects of this version
    bool active = false;                // new objects get this version
    bool valid = true;                  // false once invalidated: its objects throw on use
};

template <class T>
struct Registry {                       // per interface: the versions, the active one, the lock
    static DynamicVersion<T> versions[8];
    static std::atomic<DynamicVersion<T>*> current;
    static std::mutex lock;

    static DynamicVersion<T>* acquire() {       // construction: the active version, one object more
#if DYN_LOCK == 1
        std::lock_guard<std::mutex> g(lock);
#endif
        DynamicVersion<T>* v = current.load(std::memory_order_acquire);
        if (v == nullptr) throw invalid_version("no active version");
#if DYN_LOCK == 2
        v->objects.fetch_add(1, std::memory_order_relaxed);
#else
        v->objects.store(v->objects.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#endif
        return v;
    }
    static void release(DynamicVersion<T>* v) { // destruction: one fewer; an old version's last unloads it
        long left;
        {
#if DYN_LOCK == 1
            std::lock_guard<std::mutex> g(lock);
#endif
#if DYN_LOCK == 2
            left = v->objects.fetch_sub(1, std::memory_order_acq_rel) - 1;
#else
            left = v->objects.load(std::memory_order_relaxed) - 1;
            v->objects.store(left, std::memory_order_relaxed);
#endif
        }
        if (left == 0 && !v->active) unload(v);
    }
    static void unload(DynamicVersion<T>* v) {
        if (v->handle != nullptr) dlclose(v->handle);
        v->handle = nullptr;
        v->create = nullptr;
    }
    static DynamicVersion<T>* find(const char* library) {
        for (auto& v : versions)
            if (v.library == library || v.library.empty()) { v.library = library; return &v; }
        throw invalid_version("too many versions");
    }
    static void activate(const char* library) { // load a version: new objects get it, old ones keep theirs
        DynamicVersion<T>* v = find(library);
        if (v->handle == nullptr) {
            v->handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
            if (v->handle == nullptr) throw invalid_version(dlerror());
            v->create = reinterpret_cast<T* (*)()>(dlsym(v->handle, DYN_FACTORY));
            if (v->create == nullptr) throw invalid_version("no factory in " + v->library);
        }
        std::lock_guard<std::mutex> g(lock);
        v->active = true;
        v->valid = true;
        DynamicVersion<T>* old = current.exchange(v);
        if (old != nullptr && old != v) {
            old->active = false;
            if (old->objects.load() == 0) unload(old);
        }
    }
    static void invalidate(const char* library) { // its objects throw on their next use
        DynamicVersion<T>* v = find(library);
        if (v == current.load()) throw invalid_version("invalidating the active version");
        v->valid = false;
    }
    static bool loaded(const char* library) {   // is the library still mapped?
        void* h = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
        if (h != nullptr) dlclose(h);
        return h != nullptr;
    }
};
template <class T> DynamicVersion<T> Registry<T>::versions[8];
template <class T> std::atomic<DynamicVersion<T>*> Registry<T>::current{nullptr};
template <class T> std::mutex Registry<T>::lock;

template <class T>
class dynamic {                          // the medium-functionality template
    T* object;                           // the object, of the version active when it was made
    DynamicVersion<T>* dv;               // that version
public:
    dynamic() : dv(Registry<T>::acquire()) { object = dv->create(); }
    ~dynamic() { delete object; Registry<T>::release(dv); }
    dynamic(const dynamic&) = delete;
    dynamic& operator=(const dynamic&) = delete;
#if DYN_OUTLINE
    __attribute__((noinline))
#endif
    T* operator->() {                    // the validity check: an invalidated version throws
        if (!dv->valid) throw invalid_version(dv->library);
        return object;
    }
};

template <class T>
class dynamic_low {                      // the low-functionality template: no invalidation, no check
    T* object;
    DynamicVersion<T>* dv;
public:
    dynamic_low() : dv(Registry<T>::acquire()) { object = dv->create(); }
    ~dynamic_low() { delete object; Registry<T>::release(dv); }
    dynamic_low(const dynamic_low&) = delete;
    dynamic_low& operator=(const dynamic_low&) = delete;
    T* operator->() { return object; }
};
static_assert(sizeof(dynamic<Worker>) == 2 * sizeof(void*), "the proxy holds two pointers (§5.2)");
"""

#: The program around the harness's loop: the paper's two baselines, the versions built and loaded, the swap.
CPP_MAIN = r"""
#define NOINLINE __attribute__((noinline, noipa))
static char block[128];
static void zero_block() { for (int i = 0; i < 128; i++) block[i] = 0; __asm__ volatile("" ::: "memory"); }
struct Plain {                           // (1) a stack-allocated class without virtual methods
    NOINLINE Plain();
    NOINLINE ~Plain();
    NOINLINE void empty();
    NOINLINE void work();
};
Plain::Plain() { if (HJ_ZERO) zero_block(); }
Plain::~Plain() {}
void Plain::empty() {}
void Plain::work() { volatile int a = 0, b = 0, c = 0; ++a; ++b; ++c; if (a == 7) sink = 1; if (b == 7) sink = 2;
                     if (c == 7) sink = 3; }
struct Virt {                            // (2) a heap-allocated class with virtual methods
    NOINLINE Virt();
    NOINLINE virtual ~Virt();
    NOINLINE virtual void empty();
    NOINLINE virtual void work();
};
Virt::Virt() { if (HJ_ZERO) zero_block(); }
Virt::~Virt() {}
void Virt::empty() {}
void Virt::work() { volatile int a = 0, b = 0, c = 0; ++a; ++b; ++c; if (a == 7) sink = 1; if (b == 7) sink = 2;
                    if (c == 7) sink = 3; }

static Plain hj_plain;
static Virt* hj_heap;
static dynamic<Worker>* hj_medium;
static dynamic_low<Worker>* hj_low;
static std::string hj_libraries[2];

static const char* hj_plugin_source = R"HJPLUGIN(%PLUGIN%)HJPLUGIN";

static void hj_fail(const std::string& why) { fprintf(stderr, "%s\n", why.c_str()); exit(3); }

static std::string hj_build(int version) {      // a version's shared object, built once with g++ -O2 -fPIC
    std::string base = std::string(HJ_CACHE) + "/hjalmtysson-" +
                       std::to_string(std::hash<std::string>{}(hj_plugin_source));
    std::string so = base + "-v" + std::to_string(version) + ".so";
    if (access(so.c_str(), R_OK) == 0) return so;
    std::string src = base + ".cpp", tmp = so + "." + std::to_string(getpid());
    FILE* f = fopen(src.c_str(), "w");
    if (f == nullptr || fputs(hj_plugin_source, f) < 0 || fclose(f) != 0) hj_fail("cannot write " + src);
    std::string cmd = "g++ -O2 -fPIC -shared -DPLUGIN_VERSION=" + std::to_string(version) + " -o '" + tmp +
                      "' '" + src + "' && mv -f '" + tmp + "' '" + so + "'";
    if (system(cmd.c_str()) != 0) hj_fail("building version " + std::to_string(version) + " failed: " + cmd);
    return so;
}

static void hj_check_updates() {                // §3.1's semantics, checked before anything is timed
    const char* v1 = hj_libraries[0].c_str();
    const char* v2 = hj_libraries[1].c_str();
    Registry<Worker>::activate(v1);
    auto* a = new dynamic<Worker>;
    Registry<Worker>::activate(v2);             // new objects get version 2, a keeps version 1
    auto* b = new dynamic<Worker>;
    if ((*a)->version() != 1 || (*b)->version() != 2) hj_fail("an object changed version in an update");
    delete a;                                   // version 1's last object: its code leaves the program
    if (Registry<Worker>::loaded(v1)) hj_fail("an old version stayed loaded after its last object");
    Registry<Worker>::activate(v1);             // back to version 1, then invalidate version 2
    Registry<Worker>::invalidate(v2);
    bool threw = false;
    try { (*b)->empty(); } catch (const invalid_version&) { threw = true; }
    if (!threw) hj_fail("an invalidated version did not throw");
    delete b;
    if (Registry<Worker>::loaded(v2)) hj_fail("an invalidated version stayed loaded after its last object");
}

static dynamic<Worker>* hj_older;
static long hj_swaps;
static void hj_swap() {                         // an update while running: activate the other version
    int k = (int)(++hj_swaps & 1);
    Registry<Worker>::activate(hj_libraries[k].c_str());
    auto* fresh = new dynamic<Worker>;
    if ((*fresh)->version() != k + 1 || (hj_older != nullptr && (*hj_older)->version() != 2 - k))
        hj_fail("a swap mixed up versions");
    delete hj_older;                            // the old version's last object: dlclose
    hj_older = fresh;
}

static void hj_compete(int threads) {           // the other threads do the same, for ever
    for (int i = 1; i < threads; i++) std::thread([] { for (;;) { HJ_BODY } }).detach();
}

static void hj_setup() {
    hj_libraries[0] = hj_build(1);
    hj_libraries[1] = hj_build(2);
    hj_check_updates();
    Registry<Worker>::activate(hj_libraries[0].c_str());
    if (HJ_OBJECTS) {                           // the objects the invocation tests call
        hj_heap = new Virt;
        hj_medium = new dynamic<Worker>;
        hj_low = new dynamic_low<Worker>;
    }
    hj_compete(HJ_THREADS);
}
"""

_INCLUDES = ("dlfcn.h", "unistd.h", "atomic", "cstdio", "functional", "mutex", "stdexcept", "string", "thread")
_INVOKE = {"stack": "hj_plain.{m}();", "heap": "hj_heap->{m}();", "medium": "(*hj_medium)->{m}();",
           "low": "(*hj_low)->{m}();", "medium, never inlined": "(*hj_medium)->{m}();"}
_SWAP = ("update", "swap", "activate, construct, unload")
_CONSTRUCT = {"stack": "{ Plain p; }", "heap": "{ Virt* p = new Virt; delete p; }",
              "dynamic": "{ dynamic<Worker> d; }"}
_OUTLINE = "medium, never inlined"


@dataclass(frozen=True)
class Case:
    """One measured case: its C++ loop body and how the program around it is built."""

    test: str                 # invocation, construction or update
    case: str
    variant: str
    body: str
    zero: bool = False
    lock: int = 0             # DYN_LOCK: 0 none, 1 mutex, 2 atomic counts
    threads: int = 1
    outline: bool = False

    @property
    def key(self) -> tuple:
        return (self.test, self.case, self.variant)


def cases(*, quick: bool = False) -> list:
    """The cases measured now: the paper's, the lock contended by a second thread, the lock-free counts, and an
    update (quick: the empty method and constructor only)."""
    out = []
    for method in METHODS[:1] if quick else METHODS:
        name = "empty" if method == "empty" else "work"
        for case, body in _INVOKE.items():
            if not (quick and case == _OUTLINE):
                out.append(Case("invocation", case, method, body.format(m=name), outline=case == _OUTLINE))
    for ctor in CONSTRUCTORS[:1] if quick else CONSTRUCTORS:
        zero = ctor == "zeroing"
        for case, body in _CONSTRUCT.items():
            out.append(Case("construction", case, f"{ctor}, single", body, zero))
        out.append(Case("construction", "dynamic", f"{ctor}, lock", _CONSTRUCT["dynamic"], zero, lock=1))
    if not quick:
        out += [Case("construction", "heap", "empty, 2 threads", _CONSTRUCT["heap"], threads=2),
                Case("construction", "dynamic", "empty, 2 threads, lock", _CONSTRUCT["dynamic"], lock=1, threads=2),
                Case("construction", "dynamic", "empty, 2 threads, atomic", _CONSTRUCT["dynamic"], lock=2, threads=2)]
    out.append(Case(*_SWAP, "hj_swap();"))
    return out


def program(case: Case) -> dict:
    """The keyword arguments of :func:`pysim.harness.measure` that build and time ``case``."""
    factory = "create_zeroing" if case.zero else "create_empty"
    defines = (f"#define HJ_ZERO {int(case.zero)}\n#define DYN_LOCK {case.lock}\n#define DYN_FACTORY \"{factory}\"\n"
               f"#define DYN_OUTLINE {int(case.outline)}\n#define HJ_THREADS {case.threads}\n"
               f"#define HJ_OBJECTS {int(case.test == 'invocation')}\n"
               f"#define HJ_CACHE \"{cache_dir()}\"\n#define HJ_BODY {case.body}\n")
    main = CPP_MAIN.replace("%PLUGIN%", CPP_INTERFACE + CPP_PLUGIN)
    return {"decls": defines + CPP_INTERFACE + CPP_DYNAMIC + main, "setup": "hj_setup();", "includes": _INCLUDES}


def measure_now(*, quick: bool = False) -> pd.DataFrame:
    """Build and time every case on this machine (g++ -O2; the versions -O2 -fPIC -shared), through the lmbench
    harness, the loop's own cost reported apart. Tries are short (2 ms) and many: on a shared machine the
    minimum of them is the code's own cost. The two-thread cases take the median instead, since the minimum
    would pick a window in which the other thread happened not to run, and contention is what they measure.

    Index: (test, case, variant). Columns: available, ns (per iteration, loop included), loop_ns, reason.
    A missing compiler or a failed build gives available False and the reason, never an exception.
    """
    rows = []
    for c in cases(quick=quick):
        with exclusive(pause=True) if c.threads > 1 else one_core():  # two threads need both cores
            m = measure("c++", "HJ_BODY", name=" / ".join(c.key), enough_s=0.002, tries=7 if quick else 31,
                        statistic="median" if c.threads > 1 else "min", **program(c))
        ns = (m.per_op_s + m.loop_overhead_s) * 1e9 if m.available else math.nan
        rows.append({"test": c.test, "case": c.case, "variant": c.variant, "available": m.available, "ns": ns,
                     "loop_ns": m.loop_overhead_s * 1e9 if m.available else math.nan, "reason": m.reason})
    return pd.DataFrame(rows).set_index(["test", "case", "variant"])


def _now(now: pd.DataFrame, test: str, case: str, variant: str) -> float:
    key = (test, case, variant)
    return float(now.loc[key, "ns"]) if key in now.index else math.nan


def _now_overheads(now: pd.DataFrame) -> dict:
    """The paper's cells measured now: {(artifact, row, column): %}. The multi-threaded rows take the lock on
    one thread, as §5.1's; the stack and heap classes take none."""
    out = {}
    for template in TEMPLATES:
        for method in METHODS:
            dyn = _now(now, "invocation", template, method)
            for base in ("heap", "stack"):
                out[("invocation", f"{template} / {method}", f"vs_{base}_pct")] = _overhead_pct(
                    dyn, _now(now, "invocation", base, method))
    for ctor in CONSTRUCTORS:
        for threading, variant in (("single", f"{ctor}, single"), ("multi", f"{ctor}, lock")):
            dyn = _now(now, "construction", "dynamic", variant)
            for base in ("heap", "stack"):
                out[("construction", f"{ctor} / {threading}", f"vs_{base}_pct")] = _overhead_pct(
                    dyn, _now(now, "construction", base, f"{ctor}, single"))
    return out


def then_and_now(now: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Every overhead §5.1 prints: the model of the Indy beside the same measured on this machine.

    Index: (artifact, row, column), the ledger's cells. Columns: indy_model_pct, now_pct.
    """
    p = params or Params()
    model = {"invocation": invocation(p), "construction": construction(p)}
    rows = []
    for (artifact, row, column), pct in _now_overheads(now).items():
        key = tuple(row.split(" / "))
        rows.append({"artifact": artifact, "row": row, "column": column,
                     "indy_model_pct": float(model[artifact].loc[key, column]), "now_pct": pct})
    return pd.DataFrame(rows).set_index(["artifact", "row", "column"])


def unit_costs(now: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """What each operation costs: on the Indy (the model) and here (measured, or named as the residual of a
    measured case through :func:`pysim.sw.fit_residual`).

    Index: operation. Columns: indy_ns, now_ns (a negative difference, lost in the noise, as 0), faster (how
    many times).
    """
    p = params or Params()
    indy = cost_model(p)
    inv = {c: _now(now, "invocation", c, "empty") for c in ("stack", "heap", "medium", "low")}
    loop = float(now["loop_ns"].dropna().min()) if now["loop_ns"].notna().any() else math.nan
    here = {"loop": loop, "call": inv["stack"] - loop, "virtual_call": inv["heap"] - loop,
            "proxy": inv["low"] - inv["heap"], "validity_check": inv["medium"] - inv["low"],
            "lock": (_now(now, "construction", "dynamic", "empty, lock")
                     - _now(now, "construction", "dynamic", "empty, single")) / p.locks_per_object,
            "malloc_free": _malloc_free_now(now, here_call=inv["stack"] - loop, here_vcall=inv["heap"] - loop)}
    # a difference lost in the noise (the check g++ folds into the inlined operator->) shows as 0
    rows = [{"operation": op, "indy_ns": indy.fixed_s[op] * 1e9, "now_ns": max(here[op], 0.0)} for op in here]
    df = pd.DataFrame(rows).set_index("operation")
    df["faster"] = df["indy_ns"] / df["now_ns"].where(df["now_ns"] > 0)
    return df


def _malloc_free_now(now: pd.DataFrame, *, here_call: float, here_vcall: float) -> float:
    """malloc and free's own work today: what the heap construction costs beyond its calls (operator new and
    delete, malloc and free, the constructor) and its virtual destructor, named with fit_residual."""
    heap = _now(now, "construction", "heap", "empty, single")
    if not all(np.isfinite([heap, here_call, here_vcall])) or min(here_call, here_vcall) < 0:
        return math.nan
    here = CpuCostModel(1.0, {"call": here_call * 1e-9, "virtual_call": here_vcall * 1e-9})
    try:
        _, cpu = fit_residual(_ops(call=5, virtual_call=1), here, heap * 1e-9, "malloc_free")
    except ValueError:   # the calls alone already cost more than the whole construction
        return 0.0
    return cpu.fixed_s["malloc_free"] * 1e9


#: The paper's statements, tested on today's measurements with the bands its claims use (claims.yaml).
STATEMENTS = (
    ("§5.1", "the low-functionality template has much better performance",
     "low template's empty-method overhead over the heap class, as a fraction of the medium's: under 1/4"),
    ("§5.1", "in a multi-threaded environment the lock dominates the construction process",
     "the lock's share of constructing and destroying a dynamic object, one thread: over 1/2"),
    ("§5.1", "in a multi-threaded environment the lock dominates the construction process",
     "the same with a second thread constructing at once, against atomic counts: over 1/2"),
    ("§4.2", "the performance penalties without vtable re-mapping are small",
     "the validity check's share of the medium template's overhead over the heap class: under 1/2"),
    ("§5.1", "the proxy constructor takes much longer than the simple Point constructor",
     "constructing and destroying a dynamic object, in stack objects: over 2"),
    ("§3.1", "existing objects keep their version, new ones get the new version, old code leaves once unused",
     "the program's checks of an update pass; the figure is one update's microseconds"),
)


def statements_now(now: pd.DataFrame) -> pd.DataFrame:
    """Each statement of :data:`STATEMENTS` on this machine: the figure it rests on, and whether it holds
    (None where a case could not be measured)."""
    inv = {c: _now(now, "invocation", c, "empty") for c in ("heap", "medium", "low")}
    locked, unlocked, contended, atomic = (_now(now, "construction", "dynamic", f"empty, {v}")
                                           for v in ("lock", "single", "2 threads, lock", "2 threads, atomic"))
    swapped = bool(_SWAP in now.index and now.loc[_SWAP, "available"])
    figures = (
        ((inv["low"] / inv["heap"] - 1) / (inv["medium"] / inv["heap"] - 1), lambda x: x < 1 / 4),
        ((locked - unlocked) / locked, lambda x: x > 1 / 2),
        ((contended - atomic) / contended, lambda x: x > 1 / 2),
        ((inv["medium"] - inv["low"]) / (inv["medium"] - inv["heap"]), lambda x: x < 1 / 2),
        (unlocked / _now(now, "construction", "stack", "empty, single"), lambda x: x > 2),
        (_now(now, *_SWAP) / 1e3, lambda x: swapped),
    )
    rows = [{"section": s, "the paper says": said, "test": test, "figure": figure,
             "holds now": bool(holds(figure)) if np.isfinite(figure) else None}
            for (s, said, test), (figure, holds) in zip(STATEMENTS, figures, strict=True)]
    return pd.DataFrame(rows)
