/* memory.c -- Cache and TLB: the set-associative simulators over address arrays.
 *
 *     class Cache:
 *         def __init__(self, size_bytes, line_bytes, ways, policy=0, capsule=None, callback_address=0, callback=None)
 *         def run(self, addrs, hits_out=None) -> dict; def counts(self) -> dict; def reset(self)
 *     class TLB:
 *         def __init__(self, entries, ways, policy=0, capsule=None, callback_address=0, callback=None)
 *         def run(self, addrs, hits_out=None, page_shift=None, default_shift=12) -> dict
 *         def misses_for_shift(self, shift) -> int
 */
#include "binding.h"
#include "pysim/assoc.h"
#include "pysim/cache.h"
#include "pysim/status.h"
#include "pysim/tlb.h"

typedef struct AssocObject {
    PyObject_HEAD
    cache *c;
    tlb *t;
    PyObject *capsule; /* keeps the bit generator alive */
    PyObject *callback; /* keeps a compiled policy alive */
} AssocObject;

static int parse_policy_args(int policy, PyObject *capsule, unsigned long long address, ps_rng **rng)
{
    *rng = NULL;
    if (policy == ASSOC_RANDOM) {
        if (capsule == Py_None) {
            PyErr_SetString(PyExc_ValueError, "policy 'random' needs a bit generator capsule");
            return -1;
        }
        if ((*rng = rng_from_capsule(capsule)) == NULL) return -1;
    }
    if (policy == ASSOC_CUSTOM && address == 0) {
        PyErr_SetString(PyExc_ValueError, "policy 'custom' needs a callback address");
        return -1;
    }
    return 0;
}

static PyObject *Cache_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size_bytes", "line_bytes", "ways", "policy", "capsule", "callback_address", "callback", NULL};
    unsigned long long size, address = 0;
    unsigned int line, ways;
    int policy = 0;
    PyObject *capsule = Py_None, *callback = Py_None;
    ps_rng *rng;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KII|iOKO:Cache", kwlist, &size, &line, &ways, &policy, &capsule, &address, &callback))
        return NULL;
    cache_geom g = {size, line, ways};
    if (cache_geom_check(&g) != PS_OK)
        return PyErr_Format(PyExc_ValueError, "Cache: size_bytes=%llu must equal sets x ways=%u x line_bytes=%u with line_bytes a power of two", size, ways, line);
    if (parse_policy_args(policy, capsule, address, &rng) < 0) return NULL;
    AssocObject *self = (AssocObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->capsule = Py_NewRef(capsule);
    self->callback = Py_NewRef(callback);
    self->c = cache_new(&g, (assoc_policy)policy, rng, (assoc_policy_fn)(uintptr_t)address);
    if (self->c == NULL) {
        Py_DECREF(self);
        return PyErr_Format(PyExc_ValueError, "Cache: invalid policy %d or out of memory", policy);
    }
    return (PyObject *)self;
}

static PyObject *Tlb_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"entries", "ways", "policy", "capsule", "callback_address", "callback", NULL};
    unsigned int entries, ways;
    unsigned long long address = 0;
    int policy = 0;
    PyObject *capsule = Py_None, *callback = Py_None;
    ps_rng *rng;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "II|iOKO:TLB", kwlist, &entries, &ways, &policy, &capsule, &address, &callback))
        return NULL;
    if (parse_policy_args(policy, capsule, address, &rng) < 0) return NULL;
    AssocObject *self = (AssocObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->capsule = Py_NewRef(capsule);
    self->callback = Py_NewRef(callback);
    self->t = tlb_new(entries, ways, (assoc_policy)policy, rng, (assoc_policy_fn)(uintptr_t)address);
    if (self->t == NULL) {
        Py_DECREF(self);
        return PyErr_Format(PyExc_ValueError, "TLB: entries=%u must be a positive multiple of ways=%u (policy %d)", entries, ways, policy);
    }
    return (PyObject *)self;
}

static void Assoc_dealloc(AssocObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    cache_free(self->c);
    tlb_free(self->t);
    Py_XDECREF(self->capsule);
    Py_XDECREF(self->callback);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static const assoc_counts *assoc_counts_of(AssocObject *self)
{
    return self->c ? cache_counts(self->c) : tlb_counts(self->t);
}

static PyObject *Assoc_counts(AssocObject *self, PyObject *unused)
{
    (void)unused;
    const assoc_counts *n = assoc_counts_of(self);
    return Py_BuildValue("{s:K,s:K,s:K,s:K}", "accesses", (unsigned long long)n->accesses, "hits",
                         (unsigned long long)n->hits, "misses", (unsigned long long)n->misses, "evictions",
                         (unsigned long long)n->evictions);
}

static PyObject *Assoc_reset(AssocObject *self, PyObject *unused)
{
    (void)unused;
    if (self->c) cache_reset(self->c);
    else tlb_reset(self->t);
    Py_RETURN_NONE;
}

/* run(addrs, hits_out=None[, page_shift=None, default_shift=12]) */
static PyObject *Assoc_run(AssocObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"addrs", "hits_out", "page_shift", "default_shift", NULL};
    PyObject *addrs_o, *hits_o = Py_None, *shift_o = Py_None;
    unsigned int default_shift = 12;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOI:run", kwlist, &addrs_o, &hits_o, &shift_o, &default_shift)) return NULL;
    Py_buffer a, h = {0}, sh = {0};
    if (get_buffer(addrs_o, &a, 8, "QL", 0, "addrs") < 0) return NULL;
    Py_ssize_t n = a.len / 8;
    int status = PS_OK, ok = 1;
    if (hits_o != Py_None && (ok = get_buffer(hits_o, &h, 1, "B?", 1, "hits_out") == 0) && h.len != n) {
        PyErr_Format(PyExc_ValueError, "hits_out: length %zd, expected %zd", h.len, n);
        ok = 0;
    }
    if (ok && shift_o != Py_None) {
        if (self->c) {
            PyErr_SetString(PyExc_TypeError, "page_shift applies to a TLB, not a cache");
            ok = 0;
        } else if ((ok = get_buffer(shift_o, &sh, 1, "B", 0, "page_shift") == 0) && sh.len != n) {
            PyErr_Format(PyExc_ValueError, "page_shift: length %zd, expected %zd", sh.len, n);
            ok = 0;
        }
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        if (self->c) status = cache_run(self->c, a.buf, n, h.buf);
        else status = tlb_run(self->t, a.buf, sh.buf, default_shift, n, h.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&a);
    if (h.obj) PyBuffer_Release(&h);
    if (sh.obj) PyBuffer_Release(&sh);
    if (!ok) return NULL;
    if (status == PS_ECALLBACK) return PyErr_Format(PyExc_ValueError, "run: the custom policy chose a way outside [0, ways)");
    if (status == PS_EINVAL) return PyErr_Format(PyExc_ValueError, "run: page shift outside [0, %d]", TLB_MAX_SHIFT);
    if (status != PS_OK) return PyErr_Format(PyExc_RuntimeError, "run: %s", ps_strerror(status));
    return Assoc_counts(self, NULL);
}

static PyObject *Tlb_misses_for_shift(AssocObject *self, PyObject *arg)
{
    unsigned long shift = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLongLong(tlb_misses_for_shift(self->t, (unsigned)shift));
}

static PyMethodDef Cache_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Assoc_run, METH_VARARGS | METH_KEYWORDS, "Run a uint64 address array; returns the counts."},
    {"counts", (PyCFunction)Assoc_counts, METH_NOARGS, "accesses, hits, misses, evictions"},
    {"reset", (PyCFunction)Assoc_reset, METH_NOARGS, "Invalidate everything, zero the counts."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef Tlb_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Assoc_run, METH_VARARGS | METH_KEYWORDS, "Run addresses with per-access page shifts."},
    {"counts", (PyCFunction)Assoc_counts, METH_NOARGS, "accesses, hits, misses, evictions"},
    {"reset", (PyCFunction)Assoc_reset, METH_NOARGS, "Invalidate everything, zero the counts."},
    {"misses_for_shift", (PyCFunction)Tlb_misses_for_shift, METH_O, "Misses of pages of 2**shift bytes."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Cache_slots[] = {{Py_tp_new, Cache_new}, {Py_tp_dealloc, Assoc_dealloc}, {Py_tp_methods, Cache_methods},
                                    {Py_tp_doc, "Set-associative cache simulator."}, {0, NULL}};
static PyType_Slot Tlb_slots[] = {{Py_tp_new, Tlb_new}, {Py_tp_dealloc, Assoc_dealloc}, {Py_tp_methods, Tlb_methods},
                                  {Py_tp_doc, "Multi-page-size TLB simulator."}, {0, NULL}};
static PyType_Spec Cache_spec = {"pysim._native.Cache", sizeof(AssocObject), 0, Py_TPFLAGS_DEFAULT, Cache_slots};
static PyType_Spec Tlb_spec = {"pysim._native.TLB", sizeof(AssocObject), 0, Py_TPFLAGS_DEFAULT, Tlb_slots};

int memory_init(PyObject *m, modstate *st)
{
    if (add_type(m, st, T_CACHE, &Cache_spec, NULL) < 0 || add_type(m, st, T_TLB, &Tlb_spec, NULL) < 0) return -1;
    return PyModule_AddIntConstant(m, "TLB_MAX_SHIFT", TLB_MAX_SHIFT);
}
