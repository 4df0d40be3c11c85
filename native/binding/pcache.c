/* pcache.c -- PageCache: the C page cache (pysim/pcache.h).
 *
 *     class PageCache:
 *         def __init__(self, capacity, policy=0, readahead=0, dirty_high=0, dirty_low=0)
 *         def run(self, keys, writes=None, hits_out=None) -> dict
 *         def access(self, key, write=False) -> (hit, victim or None, victim_dirty)
 *         def flush(self, max) -> list of keys; def flags(self, key) -> int (-1: absent)
 *         def mark(self, key, flag, on); def drop(self, lo, hi) -> int
 *         def counts(self) -> dict; def reset_counts(self); size, dirty (properties)
 */
#include "binding.h"
#include "pysim/pcache.h"
#include "pysim/status.h"

typedef struct PageCacheObject {
    PyObject_HEAD
    pcache *pc;
} PageCacheObject;

static PyObject *PageCache_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"capacity", "policy", "readahead", "dirty_high", "dirty_low", NULL};
    unsigned long long capacity, high = 0, low = 0;
    int policy = 0;
    unsigned int ra = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "K|iIKK:PageCache", kwlist, &capacity, &policy, &ra, &high, &low))
        return NULL;
    pcache_config cfg = {capacity, (pcache_policy)policy, ra, high, low};
    PageCacheObject *self = (PageCacheObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->pc = pcache_new(&cfg);
    if (self->pc == NULL) {
        Py_DECREF(self);
        return PyErr_Format(PyExc_ValueError,
                            "PageCache: capacity=%llu must be in [1, 2**32 - 1), policy=%d one of 0 (LRU) or 1 "
                            "(CLOCK), dirty_low=%llu <= dirty_high=%llu (or out of memory)",
                            capacity, policy, low, high);
    }
    return (PyObject *)self;
}

static void PageCache_dealloc(PageCacheObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pcache_free(self->pc);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *PageCache_counts(PageCacheObject *self, PyObject *unused)
{
    (void)unused;
    const pcache_counts *c = pcache_get_counts(self->pc);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "accesses", (unsigned long long)c->accesses,
                         "hits", (unsigned long long)c->hits, "misses", (unsigned long long)c->misses, "writes",
                         (unsigned long long)c->writes, "evictions", (unsigned long long)c->evictions, "writebacks",
                         (unsigned long long)c->writebacks, "flushed", (unsigned long long)c->flushed, "readahead",
                         (unsigned long long)c->readahead, "readahead_hits", (unsigned long long)c->readahead_hits,
                         "io_waits", (unsigned long long)c->io_waits);
}

static PyObject *stuck(void)
{
    return PyErr_Format(PyExc_RuntimeError, "PageCache: every cached page is pinned or under I/O; nothing to evict");
}

static PyObject *PageCache_run(PageCacheObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"keys", "writes", "hits_out", NULL};
    PyObject *keys_o, *writes_o = Py_None, *hits_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:run", kwlist, &keys_o, &writes_o, &hits_o)) return NULL;
    Py_buffer k, w = {0}, h = {0};
    if (get_buffer(keys_o, &k, 8, "QL", 0, "keys") < 0) return NULL;
    Py_ssize_t n = k.len / 8;
    int ok = 1, status = PS_OK;
    if (writes_o != Py_None && (ok = get_buffer(writes_o, &w, 1, "B?", 0, "writes") == 0) && w.len != n) {
        PyErr_Format(PyExc_ValueError, "writes: length %zd, expected %zd", w.len, n);
        ok = 0;
    }
    if (ok && hits_o != Py_None && (ok = get_buffer(hits_o, &h, 1, "B?", 1, "hits_out") == 0) && h.len != n) {
        PyErr_Format(PyExc_ValueError, "hits_out: length %zd, expected %zd", h.len, n);
        ok = 0;
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        status = pcache_run(self->pc, k.buf, w.buf, n, h.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&k);
    if (w.obj) PyBuffer_Release(&w);
    if (h.obj) PyBuffer_Release(&h);
    if (!ok) return NULL;
    if (status == PS_ESTATE) return stuck();
    return PageCache_counts(self, NULL);
}

static PyObject *PageCache_access(PageCacheObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"key", "write", NULL};
    unsigned long long key;
    int write = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "K|p:access", kwlist, &key, &write)) return NULL;
    uint64_t victim = 0;
    int dirty = -1;
    int r = pcache_access(self->pc, key, write, &victim, &dirty);
    if (r < 0) return stuck();
    if (dirty < 0) return Py_BuildValue("(OOO)", r ? Py_True : Py_False, Py_None, Py_False);
    return Py_BuildValue("(OKO)", r ? Py_True : Py_False, (unsigned long long)victim, dirty ? Py_True : Py_False);
}

static PyObject *PageCache_flush(PageCacheObject *self, PyObject *arg)
{
    long long max = PyLong_AsLongLong(arg);
    if (max == -1 && PyErr_Occurred()) return NULL;
    if (max < 0) return PyErr_Format(PyExc_ValueError, "flush: max must be >= 0, got %lld", max);
    uint64_t dirty = pcache_dirty(self->pc);
    int64_t room = (int64_t)((uint64_t)max < dirty ? (uint64_t)max : dirty);
    uint64_t *out = PyMem_Malloc((size_t)(room ? room : 1) * sizeof *out);
    if (out == NULL) return PyErr_NoMemory();
    int64_t n = pcache_flush(self->pc, room, out);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(out[i]);
        if (v == NULL) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    PyMem_Free(out);
    return list;
}

static PyObject *PageCache_flags(PageCacheObject *self, PyObject *arg)
{
    unsigned long long key = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromLong(pcache_flags(self->pc, key));
}

static PyObject *PageCache_mark(PageCacheObject *self, PyObject *args)
{
    unsigned long long key;
    int flag, on;
    if (!PyArg_ParseTuple(args, "Kip:mark", &key, &flag, &on)) return NULL;
    if (pcache_mark(self->pc, key, flag, on) != PS_OK)
        return PyErr_Format(PyExc_KeyError, "mark: page %llu is not cached, or flag %d is not PINNED (%d) or IO (%d)",
                            key, flag, PCACHE_PINNED, PCACHE_IO);
    Py_RETURN_NONE;
}

static PyObject *PageCache_drop(PageCacheObject *self, PyObject *args)
{
    unsigned long long lo, hi;
    if (!PyArg_ParseTuple(args, "KK:drop", &lo, &hi)) return NULL;
    return PyLong_FromLongLong(pcache_drop(self->pc, lo, hi));
}

static PyObject *PageCache_reset_counts(PageCacheObject *self, PyObject *unused)
{
    (void)unused;
    pcache_reset_counts(self->pc);
    Py_RETURN_NONE;
}

static PyObject *PageCache_size(PageCacheObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(pcache_size(self->pc));
}

static PyObject *PageCache_dirty(PageCacheObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(pcache_dirty(self->pc));
}

static PyMethodDef PageCache_methods[] = {
    {"run", (PyCFunction)(void (*)(void))PageCache_run, METH_VARARGS | METH_KEYWORDS,
     "run(keys, writes=None, hits_out=None): access uint64 keys (writes: uint8 flags); returns the counts."},
    {"access", (PyCFunction)(void (*)(void))PageCache_access, METH_VARARGS | METH_KEYWORDS,
     "access(key, write=False) -> (hit, evicted key or None, evicted page was dirty)"},
    {"flush", (PyCFunction)PageCache_flush, METH_O, "flush(max) -> keys of up to max oldest dirty pages, cleaned"},
    {"flags", (PyCFunction)PageCache_flags, METH_O, "flags(key) -> DIRTY|PINNED|IO|PREFETCHED bits, -1 if absent"},
    {"mark", (PyCFunction)PageCache_mark, METH_VARARGS, "mark(key, flag, on): set or clear PINNED or IO"},
    {"drop", (PyCFunction)PageCache_drop, METH_VARARGS, "drop(lo, hi) -> pages dropped with keys in [lo, hi)"},
    {"counts", (PyCFunction)PageCache_counts, METH_NOARGS, "the counts since creation or reset_counts()"},
    {"reset_counts", (PyCFunction)PageCache_reset_counts, METH_NOARGS, "zero the counts; the pages stay"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef PageCache_getset[] = {
    {"size", (getter)PageCache_size, NULL, "pages cached", NULL},
    {"dirty", (getter)PageCache_dirty, NULL, "dirty pages cached", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot PageCache_slots[] = {
    {Py_tp_new, PageCache_new}, {Py_tp_dealloc, PageCache_dealloc}, {Py_tp_methods, PageCache_methods},
    {Py_tp_getset, PageCache_getset}, {Py_tp_doc, "An operating system's page cache (LRU or CLOCK)."}, {0, NULL}};
static PyType_Spec PageCache_spec = {"pysim._native.PageCache", sizeof(PageCacheObject), 0, Py_TPFLAGS_DEFAULT,
                                     PageCache_slots};

int pcache_init(PyObject *m, modstate *st)
{
    if (add_type(m, st, T_PAGECACHE, &PageCache_spec, NULL) < 0) return -1;
    if (PyModule_AddIntConstant(m, "PAGE_DIRTY", PCACHE_DIRTY) < 0 ||
        PyModule_AddIntConstant(m, "PAGE_PINNED", PCACHE_PINNED) < 0 ||
        PyModule_AddIntConstant(m, "PAGE_IO", PCACHE_IO) < 0)
        return -1;
    return PyModule_AddIntConstant(m, "PAGE_PREFETCHED", PCACHE_PREFETCHED);
}
