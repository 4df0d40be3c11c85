/* bound.c -- __enter__ and __exit__ of Request and Release, bound without a new object each time.
 *
 * `with res.request() as req:` looks both methods up on the request. A method
 * written in C binds by allocating a builtin-method object, tracked by the
 * collector, at every lookup, and the two of them cost more than the
 * request's own bookkeeping. Here the two methods are descriptors whose
 * bound form comes from a freelist. They behave as methods do:
 * req.__exit__(None, None, None) and Request.__exit__(req, None, None, None)
 * both work, and the descriptors carry a name, a docstring and a signature. */
#include "kernel.h"
#include "structmember.h"

enum { CM_ENTER, CM_EXIT };

static const char *const CM_NAMES[] = {"__enter__", "__exit__"};
static const char *const CM_SIGNATURES[] = {"($self, /)", "($self, exc_type, exc, tb, /)"};
static const char *const CM_DOCS[] = {
    "Return the request itself.",
    "Withdraw the request if it is not granted yet; release it (unless the generator is being closed)."};

typedef struct CMDescrObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    modstate *st;
    int which;
} CMDescrObject;

typedef struct CMBoundObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    modstate *st;
    PyObject *self; /* the Request or Release */
    int which;
} CMBoundObject;

static int is_request(modstate *st, PyObject *o)
{
    return is_event(st, o) && (((EventObject *)o)->kind == EV_REQUEST || ((EventObject *)o)->kind == EV_RELEASE);
}

static PyObject *cm_call(int which, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)
        return PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", CM_NAMES[which]);
    if (which == CM_EXIT) return request_exit(self, args, nargs);
    if (nargs != 0) return PyErr_Format(PyExc_TypeError, "__enter__() takes no arguments (%zd given)", nargs);
    return Py_NewRef(self);
}

/* --- the bound form ------------------------------------------------------------------------ */

static PyObject *CMBound_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CMBoundObject *b = (CMBoundObject *)callable;
    return cm_call(b->which, b->self, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static int CMBound_traverse(CMBoundObject *b, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(b));
    Py_VISIT(b->self);
    return 0;
}

static int CMBound_clear(CMBoundObject *b)
{
    Py_CLEAR(b->self);
    return 0;
}

static void CMBound_dealloc(CMBoundObject *b)
{
    PyTypeObject *tp = Py_TYPE(b);
    modstate *st = b->st;
    PyObject_GC_UnTrack(b);
    Py_CLEAR(b->self);
    if (!freelist_push(&st->bound, (PyObject *)b)) PyObject_GC_Del(b);
    Py_DECREF(tp);
}

static PyObject *CMBound_repr(CMBoundObject *b)
{
    return PyUnicode_FromFormat("<bound method %s.%s of %R>", Py_TYPE(b->self)->tp_name, CM_NAMES[b->which],
                                b->self);
}

static PyObject *CMBound_get_self(CMBoundObject *b, void *c)
{
    (void)c;
    return Py_NewRef(b->self);
}

static PyObject *CMBound_get_name(CMBoundObject *b, void *c)
{
    (void)c;
    return PyUnicode_FromString(CM_NAMES[b->which]);
}

static PyGetSetDef CMBound_getset[] = {{"__self__", (getter)CMBound_get_self, NULL, "the request", NULL},
                                       {"__name__", (getter)CMBound_get_name, NULL, NULL, NULL},
                                       {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef CMBound_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(CMBoundObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot CMBound_slots[] = {
    {Py_tp_dealloc, CMBound_dealloc}, {Py_tp_traverse, CMBound_traverse}, {Py_tp_clear, CMBound_clear},
    {Py_tp_call, PyVectorcall_Call}, {Py_tp_repr, CMBound_repr}, {Py_tp_getset, CMBound_getset},
    {Py_tp_members, CMBound_members}, {0, NULL}};

static PyType_Spec CMBound_spec = {"pysim._native.BoundContextMethod", sizeof(CMBoundObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
                                   CMBound_slots};

/* --- the descriptor -------------------------------------------------------------------------- */

static PyObject *CMDescr_get(CMDescrObject *d, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) return Py_NewRef((PyObject *)d);
    modstate *st = d->st;
    if (!is_request(st, obj))
        return PyErr_Format(PyExc_TypeError, "%s needs a Request or a Release, not %R", CM_NAMES[d->which], obj);
    PyTypeObject *t = st->types[T_BOUND_CONTEXT_METHOD];
    CMBoundObject *b = (CMBoundObject *)freelist_pop(&st->bound);
    if (b != NULL) {
        PyObject_Init((PyObject *)b, t); /* a reference to it, and one to its heap type */
    } else if ((b = PyObject_GC_New(CMBoundObject, t)) == NULL) {
        return NULL;
    }
    b->vectorcall = CMBound_vectorcall;
    b->st = st;
    b->self = Py_NewRef(obj);
    b->which = d->which;
    PyObject_GC_Track(b);
    return (PyObject *)b;
}

/* Called on the class: Request.__exit__(req, None, None, None). */
static PyObject *CMDescr_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CMDescrObject *d = (CMDescrObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || !is_request(d->st, args[0]))
        return PyErr_Format(PyExc_TypeError, "%s needs a Request or a Release as its first argument",
                            CM_NAMES[d->which]);
    return cm_call(d->which, args[0], args + 1, nargs - 1, kwnames);
}

static PyObject *CMDescr_repr(CMDescrObject *d)
{
    return PyUnicode_FromFormat("<method '%s' of Request and Release objects>", CM_NAMES[d->which]);
}

static PyObject *CMDescr_get_name(CMDescrObject *d, void *c)
{
    (void)c;
    return PyUnicode_FromString(CM_NAMES[d->which]);
}

static PyObject *CMDescr_get_doc(CMDescrObject *d, void *c)
{
    (void)c;
    return PyUnicode_FromString(CM_DOCS[d->which]);
}

static PyObject *CMDescr_get_signature(CMDescrObject *d, void *c)
{
    (void)c;
    return PyUnicode_FromString(CM_SIGNATURES[d->which]);
}

static PyGetSetDef CMDescr_getset[] = {{"__name__", (getter)CMDescr_get_name, NULL, NULL, NULL},
                                       {"__doc__", (getter)CMDescr_get_doc, NULL, NULL, NULL},
                                       {"__text_signature__", (getter)CMDescr_get_signature, NULL, NULL, NULL},
                                       {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef CMDescr_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(CMDescrObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot CMDescr_slots[] = {
    {Py_tp_descr_get, CMDescr_get}, {Py_tp_call, PyVectorcall_Call}, {Py_tp_repr, CMDescr_repr},
    {Py_tp_getset, CMDescr_getset}, {Py_tp_members, CMDescr_members}, {0, NULL}};

static PyType_Spec CMDescr_spec = {"pysim._native.ContextMethod", sizeof(CMDescrObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
                                   CMDescr_slots};

/* --- registration ---------------------------------------------------------------------------- */

int context_methods_register(PyObject *m, modstate *st)
{
    PyTypeObject *descr_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &CMDescr_spec, NULL);
    if (descr_type == NULL) return -1;
    st->types[T_CONTEXT_METHOD] = descr_type;
    st->types[T_BOUND_CONTEXT_METHOD] = (PyTypeObject *)PyType_FromModuleAndSpec(m, &CMBound_spec, NULL);
    if (st->types[T_BOUND_CONTEXT_METHOD] == NULL) return -1;
    for (int which = CM_ENTER; which <= CM_EXIT; which++) {
        CMDescrObject *d = PyObject_New(CMDescrObject, descr_type);
        if (d == NULL) return -1;
        d->vectorcall = CMDescr_vectorcall;
        d->st = st;
        d->which = which;
        int rc = 0;
        for (int i = 0; rc == 0 && i < 2; i++)
            rc = PyObject_SetAttrString((PyObject *)st->types[i ? T_RELEASE : T_REQUEST], CM_NAMES[which],
                                        (PyObject *)d);
        Py_DECREF(d);
        if (rc < 0) return -1;
    }
    return 0;
}
