/* pnet.c -- PacketNet: the C packet network (pysim/pnet.h) with its own engine.
 *
 *     class PacketNet:
 *         def __init__(self, capsule): a NumPy bit generator capsule for the random draws
 *         def add_node(self, cpu_packet_s=0.0, cpu_byte_s=0.0) -> int
 *         def add_link(self, spec: dict) -> int; def route(self, node, dst, link)
 *         def set_classifier(self, link, address, keepalive)
 *         def add_tcp(self, spec: dict) -> int; def add_udp(self, spec: dict) -> int
 *         def trace_queues(self, interval_s, capacity); def run(self, until)
 *         def flow_stats(self, flow) -> dict; def queue_stats(self, link) -> dict
 *         def link_stats(self, link) -> dict; def queue_trace(self, link) -> bytes
 *         now, unroutable, packets_moved, events (properties)
 * The dictionaries' keys are the C structures' field names (pysim/pnet.h). */
#include "binding.h"

#include <string.h>

#include "pysim/engine.h"
#include "pysim/pnet.h"
#include "pysim/status.h"

typedef struct PacketNetObject {
    PyObject_HEAD
    ps_engine *e;
    pn_net *n;
    PyObject *capsule;
    PyObject *keepalive; /* compiled classifiers */
} PacketNetObject;

static int get_double(PyObject *d, const char *key, double *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (v == NULL) return 0;
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

static int get_long(PyObject *d, const char *key, long long *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (v == NULL) return 0;
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

#define GET_D(d, field, target) do { double _v = (target); if (get_double(d, field, &_v) < 0) return -1; (target) = _v; } while (0)
#define GET_I(d, field, target, type) do { long long _v = (long long)(target); if (get_long(d, field, &_v) < 0) return -1; (target) = (type)_v; } while (0)

static int parse_queue(PyObject *d, pn_queue_spec *q)
{
    if (d == NULL) return 0;
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "queue: a dict of pn_queue_spec fields");
        return -1;
    }
    GET_I(d, "kind", q->kind, enum pn_sched_kind);
    GET_I(d, "limit_packets", q->limit_packets, uint32_t);
    GET_I(d, "limit_bytes", q->limit_bytes, uint64_t);
    GET_D(d, "red_min", q->red_min);
    GET_D(d, "red_max", q->red_max);
    GET_D(d, "red_max_p", q->red_max_p);
    GET_D(d, "red_wq", q->red_wq);
    GET_I(d, "red_gentle", q->red_gentle, int32_t);
    GET_I(d, "red_ecn", q->red_ecn, int32_t);
    GET_I(d, "red_bytes", q->red_bytes, int32_t);
    GET_D(d, "mean_pkt_bytes", q->mean_pkt_bytes);
    GET_I(d, "sfq_buckets", q->sfq_buckets, uint32_t);
    GET_D(d, "tbf_rate_bps", q->tbf_rate_bps);
    GET_D(d, "tbf_bucket_bytes", q->tbf_bucket_bytes);
    GET_D(d, "cbq_timer_s", q->cbq_timer_s);
    GET_I(d, "cbq_gain_shift", q->cbq_gain_shift, int32_t);
    GET_I(d, "default_class", q->default_class, int32_t);
    PyObject *classes = PyDict_GetItemString(d, "classes");
    if (classes != NULL) {
        Py_ssize_t n = PySequence_Size(classes);
        if (n < 0) return -1;
        if (n > PN_MAX_CLASSES) {
            PyErr_Format(PyExc_ValueError, "queue: at most %d classes, got %zd", PN_MAX_CLASSES, n);
            return -1;
        }
        q->nclasses = (int32_t)n;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *c = PySequence_GetItem(classes, i);
            if (c == NULL) return -1;
            pn_class_spec *k = &q->classes[i];
            k->parent = -1;
            k->maxburst = 1;
            int ok = PyDict_Check(c);
            if (ok) {
                long long parent = -1, prio = 0, borrow = 0, burst = 1, limit = 0;
                double share = 0;
                ok = get_long(c, "parent", &parent) == 0 && get_double(c, "rate_share", &share) == 0 &&
                     get_long(c, "priority", &prio) == 0 && get_long(c, "borrow", &borrow) == 0 &&
                     get_long(c, "maxburst", &burst) == 0 && get_long(c, "limit", &limit) == 0;
                k->parent = (int32_t)parent, k->rate_share = share, k->priority = (int32_t)prio;
                k->borrow = (int32_t)borrow, k->maxburst = (int32_t)burst, k->limit = (uint32_t)limit;
            } else {
                PyErr_SetString(PyExc_TypeError, "queue: each class is a dict of pn_class_spec fields");
            }
            Py_DECREF(c);
            if (!ok) return -1;
        }
    }
    return 0;
}

static int parse_link(PyObject *d, pn_link_spec *s)
{
    memset(s, 0, sizeof *s);
    GET_I(d, "from", s->from, int32_t);
    GET_I(d, "to", s->to, int32_t);
    GET_I(d, "kind", s->kind, enum pn_link_kind);
    GET_D(d, "bits_per_s", s->bits_per_s);
    GET_D(d, "delay_s", s->delay_s);
    GET_I(d, "mtu", s->mtu, uint32_t);
    GET_I(d, "medium", s->medium, enum pn_medium);
    GET_I(d, "segment", s->segment, int32_t);
    GET_D(d, "slot_s", s->slot_s);
    GET_I(d, "extra_bytes", s->extra_bytes, uint32_t);
    return parse_queue(PyDict_GetItemString(d, "queue"), &s->queue);
}

static int parse_tcp(PyObject *d, pn_tcp_spec *t)
{
    memset(t, 0, sizeof *t);
    t->bytes = -1, t->mss = 1460, t->header_bytes = 40, t->initial_cwnd = 1, t->max_window = 64;
    t->min_rto_s = 0.2, t->initial_rto_s = 1.0, t->ack_delay_s = 0.1;
    GET_I(d, "src", t->src, int32_t);
    GET_I(d, "dst", t->dst, int32_t);
    GET_D(d, "start_s", t->start_s);
    GET_I(d, "bytes", t->bytes, int64_t);
    GET_I(d, "mss", t->mss, uint32_t);
    GET_I(d, "header_bytes", t->header_bytes, uint32_t);
    GET_D(d, "initial_cwnd", t->initial_cwnd);
    GET_D(d, "max_window", t->max_window);
    GET_D(d, "min_rto_s", t->min_rto_s);
    GET_D(d, "initial_rto_s", t->initial_rto_s);
    GET_I(d, "delayed_ack", t->delayed_ack, int32_t);
    GET_D(d, "ack_delay_s", t->ack_delay_s);
    GET_I(d, "ecn", t->ecn, int32_t);
    GET_I(d, "cls", t->cls, int32_t);
    return 0;
}

static int parse_udp(PyObject *d, pn_udp_spec *u)
{
    memset(u, 0, sizeof *u);
    GET_I(d, "src", u->src, int32_t);
    GET_I(d, "dst", u->dst, int32_t);
    GET_I(d, "pattern", u->pattern, enum pn_udp_pattern);
    GET_D(d, "start_s", u->start_s);
    GET_D(d, "stop_s", u->stop_s);
    GET_D(d, "rate_pps", u->rate_pps);
    GET_I(d, "size", u->size, uint32_t);
    GET_D(d, "on_s", u->on_s);
    GET_D(d, "off_s", u->off_s);
    GET_I(d, "reply_size", u->reply_size, uint32_t);
    GET_D(d, "service_s", u->service_s);
    GET_I(d, "outstanding", u->outstanding, int32_t);
    GET_I(d, "cls", u->cls, int32_t);
    return 0;
}

static PyObject *PacketNet_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"capsule", NULL};
    PyObject *capsule;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:PacketNet", kwlist, &capsule)) return NULL;
    ps_rng *rng = rng_from_capsule(capsule);
    if (rng == NULL) return NULL;
    PacketNetObject *self = (PacketNetObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->capsule = Py_NewRef(capsule);
    self->keepalive = PyList_New(0);
    self->e = engine_new(0.0);
    self->n = self->e ? pn_new(self->e, rng) : NULL;
    if (self->n == NULL || self->keepalive == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void PacketNet_dealloc(PacketNetObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pn_free(self->n);
    engine_free(self->e);
    Py_XDECREF(self->capsule);
    Py_XDECREF(self->keepalive);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *index_or_error(int32_t r, const char *what)
{
    if (r == PS_ENOMEM) return PyErr_NoMemory();
    if (r < 0) return PyErr_Format(PyExc_ValueError, "%s: invalid specification (%s)", what, ps_strerror(r));
    return PyLong_FromLong(r);
}

static PyObject *PacketNet_add_node(PacketNetObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cpu_packet_s", "cpu_byte_s", NULL};
    double p = 0, b = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|dd:add_node", kwlist, &p, &b)) return NULL;
    return index_or_error(pn_add_node(self->n, p, b), "add_node");
}

static PyObject *PacketNet_add_link(PacketNetObject *self, PyObject *spec)
{
    pn_link_spec s;
    if (!PyDict_Check(spec)) return PyErr_Format(PyExc_TypeError, "add_link: a dict of pn_link_spec fields");
    if (parse_link(spec, &s) < 0) return NULL;
    return index_or_error(pn_add_link(self->n, &s), "add_link");
}

static PyObject *PacketNet_route(PacketNetObject *self, PyObject *args)
{
    int node, dst, link;
    if (!PyArg_ParseTuple(args, "iii:route", &node, &dst, &link)) return NULL;
    if (pn_route(self->n, node, dst, link) != PS_OK)
        return PyErr_Format(PyExc_ValueError, "route: node %d, destination %d, link %d (which must leave node %d)",
                            node, dst, link, node);
    Py_RETURN_NONE;
}

static PyObject *PacketNet_set_classifier(PacketNetObject *self, PyObject *args)
{
    int link;
    unsigned long long address;
    PyObject *keep;
    if (!PyArg_ParseTuple(args, "iKO:set_classifier", &link, &address, &keep)) return NULL;
    if (pn_set_classifier(self->n, link, (pn_classifier)(uintptr_t)address) != PS_OK)
        return PyErr_Format(PyExc_ValueError, "set_classifier: no link %d", link);
    if (PyList_Append(self->keepalive, keep) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *PacketNet_add_tcp(PacketNetObject *self, PyObject *spec)
{
    pn_tcp_spec t;
    if (!PyDict_Check(spec)) return PyErr_Format(PyExc_TypeError, "add_tcp: a dict of pn_tcp_spec fields");
    if (parse_tcp(spec, &t) < 0) return NULL;
    return index_or_error(pn_add_tcp(self->n, &t), "add_tcp");
}

static PyObject *PacketNet_add_udp(PacketNetObject *self, PyObject *spec)
{
    pn_udp_spec u;
    if (!PyDict_Check(spec)) return PyErr_Format(PyExc_TypeError, "add_udp: a dict of pn_udp_spec fields");
    if (parse_udp(spec, &u) < 0) return NULL;
    return index_or_error(pn_add_udp(self->n, &u), "add_udp");
}

static PyObject *PacketNet_trace_queues(PacketNetObject *self, PyObject *args)
{
    double interval;
    long long capacity;
    if (!PyArg_ParseTuple(args, "dL:trace_queues", &interval, &capacity)) return NULL;
    int r = pn_trace_queues(self->n, interval, capacity);
    if (r != PS_OK) return PyErr_Format(PyExc_ValueError, "trace_queues: interval_s > 0 and capacity >= 1 (%s)",
                                        ps_strerror(r));
    Py_RETURN_NONE;
}

static PyObject *PacketNet_run(PacketNetObject *self, PyObject *arg)
{
    double until = PyFloat_AsDouble(arg);
    if (until == -1.0 && PyErr_Occurred()) return NULL;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = engine_run(self->e, until, -1);
    Py_END_ALLOW_THREADS
    if (r == PS_EINVAL) return PyErr_Format(PyExc_ValueError, "run: until=%g is before now=%g", until,
                                           engine_now(self->e));
    if (r == PS_ENOMEM) return PyErr_NoMemory();
    if (r != PS_OK) return PyErr_Format(PyExc_RuntimeError, "run: %s", ps_strerror(r));
    Py_RETURN_NONE;
}

static PyObject *PacketNet_flow_stats(PacketNetObject *self, PyObject *arg)
{
    long flow = PyLong_AsLong(arg);
    if (flow == -1 && PyErr_Occurred()) return NULL;
    const pn_flow_stats *s = pn_get_flow(self->n, (int32_t)flow);
    if (s == NULL) return PyErr_Format(PyExc_IndexError, "no flow %ld", flow);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:d,s:d,s:d,s:d}", "sent_packets",
                         (unsigned long long)s->sent_packets, "sent_bytes", (unsigned long long)s->sent_bytes,
                         "delivered_packets", (unsigned long long)s->delivered_packets, "delivered_bytes",
                         (unsigned long long)s->delivered_bytes, "retransmits", (unsigned long long)s->retransmits,
                         "timeouts", (unsigned long long)s->timeouts, "fast_retransmits",
                         (unsigned long long)s->fast_retransmits, "ecn_reductions",
                         (unsigned long long)s->ecn_reductions, "completed", (unsigned long long)s->completed,
                         "first_s", s->first_s, "last_s", s->last_s, "delay_sum_s", s->delay_sum_s, "done_s",
                         s->done_s, "cwnd", s->cwnd, "srtt_s", s->srtt_s);
}

static PyObject *counts_list(const uint64_t *v, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (x == NULL) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *PacketNet_queue_stats(PacketNetObject *self, PyObject *arg)
{
    long link = PyLong_AsLong(arg);
    if (link == -1 && PyErr_Occurred()) return NULL;
    const pn_queue_stats *s = pn_get_queue(self->n, (int32_t)link);
    if (s == NULL) return PyErr_Format(PyExc_IndexError, "no link %ld", link);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:N,s:N,s:N}", "arrivals", (unsigned long long)s->arrivals,
                         "drops", (unsigned long long)s->drops, "marks", (unsigned long long)s->marks, "departures",
                         (unsigned long long)s->departures, "bytes_out", (unsigned long long)s->bytes_out,
                         "area_packets", s->area_packets, "area_bytes", s->area_bytes, "class_departures",
                         counts_list(s->class_departures, PN_MAX_CLASSES), "class_bytes",
                         counts_list(s->class_bytes, PN_MAX_CLASSES), "class_drops",
                         counts_list(s->class_drops, PN_MAX_CLASSES));
}

static PyObject *PacketNet_link_stats(PacketNetObject *self, PyObject *arg)
{
    long link = PyLong_AsLong(arg);
    if (link == -1 && PyErr_Occurred()) return NULL;
    if (link < 0 || link >= pn_links(self->n)) return PyErr_Format(PyExc_IndexError, "no link %ld", link);
    return Py_BuildValue("{s:d,s:K}", "busy_s", pn_link_busy_s(self->n, (int32_t)link), "collisions",
                         (unsigned long long)pn_link_collisions(self->n, (int32_t)link));
}

static PyObject *PacketNet_queue_trace(PacketNetObject *self, PyObject *arg)
{
    long link = PyLong_AsLong(arg);
    if (link == -1 && PyErr_Occurred()) return NULL;
    int64_t n = 0;
    const uint32_t *t = pn_queue_trace(self->n, (int32_t)link, &n);
    return PyBytes_FromStringAndSize((const char *)t, (Py_ssize_t)(t ? n * 4 : 0));
}

static PyObject *PacketNet_now(PacketNetObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(engine_now(self->e));
}

static PyObject *PacketNet_unroutable(PacketNetObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(pn_unroutable(self->n));
}

static PyObject *PacketNet_moved(PacketNetObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(pn_packets_moved(self->n));
}

static PyObject *PacketNet_events(PacketNetObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(engine_processed(self->e));
}

static PyMethodDef PacketNet_methods[] = {
    {"add_node", (PyCFunction)(void (*)(void))PacketNet_add_node, METH_VARARGS | METH_KEYWORDS, "add_node(cpu_packet_s=0, cpu_byte_s=0) -> node"},
    {"add_link", (PyCFunction)PacketNet_add_link, METH_O, "add_link(spec) -> link"},
    {"route", (PyCFunction)PacketNet_route, METH_VARARGS, "route(node, dst, link)"},
    {"set_classifier", (PyCFunction)PacketNet_set_classifier, METH_VARARGS, "set_classifier(link, address, keepalive)"},
    {"add_tcp", (PyCFunction)PacketNet_add_tcp, METH_O, "add_tcp(spec) -> flow"},
    {"add_udp", (PyCFunction)PacketNet_add_udp, METH_O, "add_udp(spec) -> flow"},
    {"trace_queues", (PyCFunction)PacketNet_trace_queues, METH_VARARGS, "trace_queues(interval_s, capacity)"},
    {"run", (PyCFunction)PacketNet_run, METH_O, "run(until)"},
    {"flow_stats", (PyCFunction)PacketNet_flow_stats, METH_O, "flow_stats(flow) -> dict"},
    {"queue_stats", (PyCFunction)PacketNet_queue_stats, METH_O, "queue_stats(link) -> dict"},
    {"link_stats", (PyCFunction)PacketNet_link_stats, METH_O, "link_stats(link) -> dict"},
    {"queue_trace", (PyCFunction)PacketNet_queue_trace, METH_O, "queue_trace(link) -> uint32 bytes"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef PacketNet_getset[] = {
    {"now", (getter)PacketNet_now, NULL, "simulated seconds", NULL},
    {"unroutable", (getter)PacketNet_unroutable, NULL, "packets dropped for want of a route", NULL},
    {"packets_moved", (getter)PacketNet_moved, NULL, "link transmissions", NULL},
    {"events", (getter)PacketNet_events, NULL, "events processed", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot PacketNet_slots[] = {
    {Py_tp_new, PacketNet_new}, {Py_tp_dealloc, PacketNet_dealloc}, {Py_tp_methods, PacketNet_methods},
    {Py_tp_getset, PacketNet_getset}, {Py_tp_doc, "A packet network in C (pysim.network wraps it)."}, {0, NULL}};
static PyType_Spec PacketNet_spec = {"pysim._native.PacketNet", sizeof(PacketNetObject), 0, Py_TPFLAGS_DEFAULT,
                                     PacketNet_slots};

int pnet_init(PyObject *m, modstate *st)
{
    return add_type(m, st, T_PACKETNET, &PacketNet_spec, NULL);
}
