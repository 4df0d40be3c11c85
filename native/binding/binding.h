/* binding.h -- internals shared by the files of the CPython binding (pysim._native).
 *
 * The binding is split by concept, one file each: module.c (the module and
 * its state), env.c / event.c / process.c / condition.c / resource.c (the
 * simulation kernel, whose types are tightly coupled; see kernel.h),
 * bound.c (a request's __enter__ and __exit__), station.c, link.c, memory.c (cache and TLB), pcache.c (page cache), pnet.c (packet network), disk.c, qnet.c and measure.c.
 * Each file registers its types and functions from its own *_init function,
 * listed once in module.c. No simulation logic lives here: the files convert
 * arguments, call the C core, and map its status codes to exceptions. */
#ifndef PYSIM_BINDING_H
#define PYSIM_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pysim/rng.h"

/* The module's heap types, one slot each in the module state. */
enum binding_type {
    T_ENVIRONMENT, T_EVENT, T_TIMEOUT, T_PROCESS, T_INTERRUPTION, T_CONDITION, T_ALLOF, T_ANYOF,
    T_CONDITION_VALUE, T_RESOURCE, T_PRIORITY_RESOURCE, T_PREEMPTIVE_RESOURCE, T_REQUEST,
    T_PRIORITY_REQUEST, T_RELEASE, T_PREEMPTED, T_CONTEXT_METHOD, T_BOUND_CONTEXT_METHOD, T_STATION, T_LINK, T_CACHE, T_TLB, T_DISK, T_PAGECACHE, T_PACKETNET,
    N_TYPES
};

/* Recycled kernel objects of one size: allocating and freeing Python objects
 * is a large share of a process-heavy model's time (see `make bench`). */
#define FREELIST_CAPACITY 1024
typedef struct freelist {
    Py_ssize_t size; /* tp_basicsize of the objects kept */
    int n;
    PyObject *items[FREELIST_CAPACITY];
} freelist;
#define N_FREELISTS 5

/* An object kept for reuse, or NULL: the caller initialises it (PyObject_Init, its fields, tracking). */
static inline PyObject *freelist_pop(freelist *f) { return f->n > 0 ? f->items[--f->n] : NULL; }

/* Keep `op` (untracked by the collector, its references dropped) for reuse; 0 when the list is full. */
static inline int freelist_push(freelist *f, PyObject *op)
{
    if (f->n >= FREELIST_CAPACITY) return 0;
    f->items[f->n++] = op;
    return 1;
}

/* Free every object kept (module teardown). */
static inline void freelist_clear(freelist *f)
{
    while (f->n > 0) PyObject_GC_Del(f->items[--f->n]);
}

typedef struct modstate {
    freelist freelists[N_FREELISTS];
    freelist values; /* ConditionValues, each kept with its (empty) list of events */
    freelist bound;  /* bound __enter__ and __exit__ of requests (bound.c) */
    PyObject *NativeError;   /* a C core call failed */
    PyObject *Interrupt;     /* pysim.errors.Interrupt */
    PyObject *EmptySchedule; /* step() with nothing scheduled */
    PyObject *pending;       /* the PENDING sentinel */
    PyObject *str_throw, *str_name;
    PyObject *all_events, *any_events; /* Condition's two evaluate functions */
    PyTypeObject *types[N_TYPES];
} modstate;

extern struct PyModuleDef pysim_native_module;

/* The module state of the module defining `type` (or one of its bases). */
modstate *state_of_type(PyTypeObject *type);
modstate *state_of_module(PyObject *module);

/* Create a heap type from spec (with an optional base), add it to the
 * module and keep it in st->types[slot]. 0 or -1. */
int add_type(PyObject *m, modstate *st, enum binding_type slot, PyType_Spec *spec, PyTypeObject *base);

/* Raise the Python exception matching a C status; returns NULL. */
PyObject *raise_status(modstate *st, int status, const char *what);

/* A C-contiguous 1-d buffer of `itemsize` bytes per item with a format code in `codes`. 0 or -1. */
int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *codes, int writable,
               const char *name);

/* The bitgen_t inside a NumPy BitGenerator capsule, as a ps_rng; NULL (with an exception) if not one. */
ps_rng *rng_from_capsule(PyObject *capsule);

/* Each concept's registration, called once from module.c. 0 or -1. */
int kernel_init(PyObject *m, modstate *st);
int station_init(PyObject *m, modstate *st);
int link_init(PyObject *m, modstate *st);
int memory_init(PyObject *m, modstate *st);
int pcache_init(PyObject *m, modstate *st);
int pnet_init(PyObject *m, modstate *st);
int disk_init(PyObject *m, modstate *st);
int qnet_init(PyObject *m, modstate *st);
int measure_init(PyObject *m, modstate *st);

/* Instance dicts. Objects whose methods a model calls in its inner loop (the Environment's timeout()
 * and process(), a Resource's request()) have a __dict__, as SimPy's do, and make it when they are made,
 * empty: CPython 3.11 specialises `obj.method(...)` only for an object whose dict exists, and the
 * generic lookup costs several times the specialised one on every call. */

/* Heap types share these flags: GC-tracked and subclassable from Python. */
#define BINDING_GC_FLAGS (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC)

#endif
