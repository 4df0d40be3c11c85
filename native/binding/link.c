/* link.c -- Link (a FIFO Ethernet medium on the simulation's loop) and eth_timing().
 *
 *     class Link:
 *         def __init__(self, env, eth)      # eth: (bits_per_s, header, fcs, min_frame, max_payload,
 *                                           #       preamble, gap, propagation_s)
 *         def send(self, nbytes) -> Event   # succeeds on arrival with the arrival time
 *         def stats(self) -> dict
 *     def eth_timing(eth, nbytes) -> dict
 */
#include "kernel.h"
#include "pysim/net.h"
#include "pysim/status.h"

static int parse_eth(PyObject *t, eth_params *p)
{
    if (!PyArg_ParseTuple(t, "dIIIIIId;eth parameters: (bits_per_s, header, fcs, min_frame, max_payload, preamble, gap, propagation_s)",
                          &p->bits_per_s, &p->header_bytes, &p->fcs_bytes, &p->min_frame_bytes,
                          &p->max_payload, &p->preamble_bytes, &p->gap_bytes, &p->propagation_s))
        return -1;
    if (eth_check(p) != PS_OK) {
        PyErr_SetString(PyExc_ValueError, "eth parameters: bits_per_s and max_payload must be > 0, propagation_s >= 0");
        return -1;
    }
    return 0;
}

typedef struct LinkObject {
    PyObject_HEAD
    EnvObject *env;
    ps_link *l;
} LinkObject;

static PyObject *Link_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "eth", NULL};
    PyObject *engine, *eth;
    eth_params p;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!:Link", kwlist, &engine, &PyTuple_Type, &eth)) return NULL;
    modstate *st = state_of_type(type);
    EnvObject *env = st ? as_env(st, engine, "Link") : NULL;
    if (env == NULL || parse_eth(eth, &p) < 0) return NULL;
    LinkObject *self = (LinkObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->env = (EnvObject *)Py_NewRef((PyObject *)env);
    self->l = link_new(self->env->e, &p);
    if (self->l == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static int Link_traverse(LinkObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->env);
    return 0;
}

static void Link_dealloc(LinkObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    link_free(self->l);
    Py_CLEAR(self->env);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Link_send(LinkObject *self, PyObject *arg)
{
    unsigned long long nbytes = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    EventObject *ev = event_alloc(self->env->st->types[T_EVENT], self->env, EV_PLAIN);
    if (ev == NULL) return NULL;
    double arrive;
    ev->ok = 1;
    ev->value = Py_NewRef(Py_None); /* triggered now, like a Timeout; the arrival time replaces it */
    Py_INCREF(ev); /* the engine's reference, released by dispatch_event */
    int s = link_send(self->l, nbytes, dispatch_event, self->env, (int64_t)(intptr_t)ev, &arrive);
    if (s != PS_OK) {
        Py_DECREF(ev);
        Py_DECREF(ev);
        return raise_status(self->env->st, s, "send");
    }
    PyObject *t = PyFloat_FromDouble(arrive);
    if (t == NULL) {
        Py_DECREF(ev);
        return NULL;
    }
    Py_SETREF(ev->value, t);
    return (PyObject *)ev;
}

static PyObject *Link_stats(LinkObject *self, PyObject *unused)
{
    (void)unused;
    const link_stats *s = link_get_stats(self->l);
    return Py_BuildValue("{s:K,s:K,s:K,s:d}", "messages", (unsigned long long)s->messages, "frames",
                         (unsigned long long)s->frames, "bytes", (unsigned long long)s->bytes, "busy_s", s->busy_s);
}

static PyMethodDef Link_methods[] = {
    {"send", (PyCFunction)Link_send, METH_O, "Send nbytes; the Event fires on arrival with the arrival time."},
    {"stats", (PyCFunction)Link_stats, METH_NOARGS, "Messages, frames, bytes and busy seconds so far."},
    {NULL, NULL, 0, NULL}};

static PyObject *py_eth_timing(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *eth;
    unsigned long long nbytes;
    eth_params p;
    if (!PyArg_ParseTuple(args, "O!K:eth_timing", &PyTuple_Type, &eth, &nbytes)) return NULL;
    if (parse_eth(eth, &p) < 0) return NULL;
    uint32_t first = nbytes < p.max_payload ? (uint32_t)nbytes : p.max_payload;
    return Py_BuildValue("{s:K,s:I,s:d,s:d,s:d}", "frames", (unsigned long long)eth_frames(&p, nbytes),
                         "first_frame_bytes", eth_frame_bytes(&p, first), "first_frame_s", eth_frame_time(&p, first),
                         "first_frame_occupancy_s", eth_frame_occupancy(&p, first),
                         "message_occupancy_s", eth_message_occupancy(&p, nbytes));
}

static PyMethodDef link_functions[] = {
    {"eth_timing", py_eth_timing, METH_VARARGS, "eth_timing(eth, nbytes, /)\n--\n\nFrame counts and times of a message."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Link_slots[] = {{Py_tp_new, Link_new}, {Py_tp_dealloc, Link_dealloc}, {Py_tp_traverse, Link_traverse},
                                   {Py_tp_methods, Link_methods},
                                   {Py_tp_doc, "Link(env, eth)\n--\n\nA FIFO Ethernet medium on the simulation's loop."},
                                   {0, NULL}};
static PyType_Spec Link_spec = {"pysim._native.Link", sizeof(LinkObject), 0, BINDING_GC_FLAGS, Link_slots};

int link_init(PyObject *m, modstate *st)
{
    if (add_type(m, st, T_LINK, &Link_spec, NULL) < 0) return -1;
    return PyModule_AddFunctions(m, link_functions);
}
