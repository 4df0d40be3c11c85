/* module.c -- the pysim._native module: its state, shared helpers, and the
 * list of concepts that register types and functions (binding.h). */
#include "binding.h"
#include "kernel.h"

#include <string.h>

#include "numpy/random/bitgen.h"
#include "pysim/status.h"

static int (*const PARTS[])(PyObject *, modstate *) = {
    kernel_init, station_init, link_init, memory_init, pcache_init, pnet_init, disk_init, qnet_init, measure_init,
};

modstate *state_of_module(PyObject *module) { return (modstate *)PyModule_GetState(module); }

modstate *state_of_type(PyTypeObject *type)
{
    PyObject *m = PyType_GetModuleByDef(type, &pysim_native_module);
    return m ? state_of_module(m) : NULL;
}

int add_type(PyObject *m, modstate *st, enum binding_type slot, PyType_Spec *spec, PyTypeObject *base)
{
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, (PyObject *)base);
    if (t == NULL) return -1;
    if (PyModule_AddType(m, t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    st->types[slot] = t;
    return 0;
}

PyObject *raise_status(modstate *st, int status, const char *what)
{
    if (PyErr_Occurred()) return NULL; /* a Python callback already raised */
    switch (status) {
    case PS_ENOMEM: return PyErr_NoMemory();
    case PS_EINVAL: PyErr_Format(PyExc_ValueError, "%s: invalid argument", what); return NULL;
    case PS_EEMPTY: PyErr_Format(PyExc_IndexError, "%s: empty", what); return NULL;
    default:
        PyErr_Format(st->NativeError, "%s: %s (status %d)", what, ps_strerror(status), status);
        return NULL;
    }
}

int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *codes, int writable,
               const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (view->itemsize != itemsize || strlen(f) != 1 || strchr(codes, *f) == NULL || view->ndim > 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a 1-d array of %zd-byte items of type code in '%s', got format '%s' itemsize %zd",
                     name, itemsize, codes, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

ps_rng *rng_from_capsule(PyObject *capsule)
{
    bitgen_t *bg = PyCapsule_GetPointer(capsule, "BitGenerator");
    /* ps_rng mirrors bitgen_t field by field (pysim/rng.h) */
    return (ps_rng *)bg;
}

static int module_exec(PyObject *m)
{
    modstate *st = state_of_module(m);
    PyObject *errors = PyImport_ImportModule("pysim.errors");
    if (errors == NULL) return -1;
    PyObject *base = PyObject_GetAttrString(errors, "PysimError");
    st->Interrupt = PyObject_GetAttrString(errors, "Interrupt"); /* in Python: it carries a cause */
    Py_DECREF(errors);
    if (base == NULL || st->Interrupt == NULL) {
        Py_XDECREF(base);
        return -1;
    }
    st->NativeError = PyErr_NewExceptionWithDoc("pysim._native.NativeError", "A C core call failed.", base, NULL);
    Py_DECREF(base);
    if (st->NativeError == NULL || PyModule_AddObjectRef(m, "NativeError", st->NativeError) < 0) return -1;
    if ((st->str_throw = PyUnicode_InternFromString("throw")) == NULL) return -1;
    if ((st->str_name = PyUnicode_InternFromString("__name__")) == NULL) return -1;
    for (size_t i = 0; i < sizeof PARTS / sizeof PARTS[0]; i++)
        if (PARTS[i](m, st) < 0) return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    modstate *st = state_of_module(m);
    Py_VISIT(st->NativeError);
    Py_VISIT(st->Interrupt);
    Py_VISIT(st->EmptySchedule);
    Py_VISIT(st->pending);
    Py_VISIT(st->all_events);
    Py_VISIT(st->any_events);
    for (int i = 0; i < N_TYPES; i++) Py_VISIT(st->types[i]);
    return 0;
}

static int module_clear(PyObject *m)
{
    modstate *st = state_of_module(m);
    Py_CLEAR(st->NativeError);
    Py_CLEAR(st->Interrupt);
    Py_CLEAR(st->EmptySchedule);
    Py_CLEAR(st->pending);
    Py_CLEAR(st->all_events);
    Py_CLEAR(st->any_events);
    Py_CLEAR(st->str_throw);
    Py_CLEAR(st->str_name);
    for (int i = 0; i < N_TYPES; i++) Py_CLEAR(st->types[i]);
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
    event_freelists_clear(state_of_module((PyObject *)m));
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

struct PyModuleDef pysim_native_module = {
    PyModuleDef_HEAD_INIT, "_native",
    "CPython binding for the pysim C core: the simulation kernel (SimPy's semantics, run by a C loop),\n"
    "queueing stations, links, caches and TLBs, disks, open networks and the then-vs-now measurements.",
    sizeof(modstate), NULL, module_slots, module_traverse, module_clear, module_free};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&pysim_native_module); }
