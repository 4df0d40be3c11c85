/* resource.c -- Resource, PriorityResource and PreemptiveResource, with their
 * Request, PriorityRequest, Release and Preempted.
 *
 *     class Resource:
 *         def __init__(self, env, capacity=1)
 *         capacity; count; users: list; queue (= put_queue): list; get_queue: list
 *         def request(self) -> Request          # PriorityResource: request(priority=0, preempt=True)
 *         def release(self, request) -> Release
 *     class Request(Event):  resource; proc; usage_since; cancel(); with-statement support
 *     class PriorityRequest(Request): priority; preempt; time; key = (priority, time, not preempt)
 *     class Release(Event):  resource; request; proc; cancel()
 *     class Preempted:       by; usage_since; resource   (the cause of a preemption's Interrupt)
 *
 * SimPy's BaseResource protocol, event for event: a request joins the put
 * queue and the resource tries the head of it; a release joins the get
 * queue, is granted at once, and when it is processed the resource tries
 * its put queue again, so a waiting request is granted one event later.
 * A Request's first callback is its resource (which then serves the get
 * queue), a Release's too (which then serves the put queue). */
#include "kernel.h"
#include "structmember.h"

enum { RES_PLAIN, RES_PRIORITY, RES_PREEMPTIVE };

typedef struct ResourceObject {
    PyObject_HEAD
    EnvObject *env;
    PyObject *capacity_obj;
    double capacity;
    PyObject *users, *put_queue, *get_queue, *dict;
    char kind;
} ResourceObject;

/* Request, PriorityRequest and Release share one layout. */
typedef struct RequestObject {
    EventObject ev;
    ResourceObject *resource;
    PyObject *proc;        /* the process that made it, or None */
    double since;          /* Request: when it was granted (if granted) */
    char granted;
    PyObject *priority;    /* PriorityRequest */
    PyObject *key;         /* PriorityRequest: (priority, time, not preempt) */
    PyObject *request;     /* Release: the request it gives back */
    double time;
    char preempt;
} RequestObject;

typedef struct PreemptedObject {
    PyObject_HEAD
    PyObject *by, *usage_since, *resource;
} PreemptedObject;

static PyObject *key_of(RequestObject *r) { return r->key ? r->key : Py_None; }

/* The index of `item` in `list` by identity (requests and releases compare so), or -1. */
static Py_ssize_t index_of(PyObject *list, PyObject *item)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (PyList_GET_ITEM(list, i) == item) return i;
    return -1;
}

/* The index of the first queued request whose key is greater than `key` (a stable sorted insert). */
static Py_ssize_t insertion_point(PyObject *queue, PyObject *key)
{
    Py_ssize_t i = PyList_GET_SIZE(queue);
    while (i > 0) {
        int gt = PyObject_RichCompareBool(key_of((RequestObject *)PyList_GET_ITEM(queue, i - 1)), key, Py_GT);
        if (gt < 0) return -1;
        if (!gt) break;
        i--;
    }
    return i;
}

static PyObject *usage_since(RequestObject *r)
{
    return r->granted ? PyFloat_FromDouble(r->since) : Py_NewRef(Py_None);
}

static PyObject *make_preempted(modstate *st, PyObject *by, PyObject *since, PyObject *resource)
{
    PyTypeObject *t = st->types[T_PREEMPTED];
    PreemptedObject *p = (PreemptedObject *)t->tp_alloc(t, 0);
    if (p == NULL) return NULL;
    p->by = Py_NewRef(by);
    p->usage_since = Py_NewRef(since);
    p->resource = Py_NewRef(resource);
    return (PyObject *)p;
}

/* PreemptiveResource: interrupt the user with the largest key if it is larger than req's. */
static int preempt_for(ResourceObject *r, RequestObject *req)
{
    Py_ssize_t n = PyList_GET_SIZE(r->users);
    if (n == 0) return 0;
    RequestObject *victim = (RequestObject *)PyList_GET_ITEM(r->users, 0);
    for (Py_ssize_t i = 1; i < n; i++) {
        RequestObject *u = (RequestObject *)PyList_GET_ITEM(r->users, i);
        int gt = PyObject_RichCompareBool(key_of(u), key_of(victim), Py_GT);
        if (gt < 0) return -1;
        if (gt) victim = u;
    }
    int gt = PyObject_RichCompareBool(key_of(victim), key_of(req), Py_GT);
    if (gt <= 0) return gt;
    modstate *st = r->env->st;
    if (!PyObject_TypeCheck(victim->proc, st->types[T_PROCESS])) {
        PyErr_Format(PyExc_AttributeError, "%R has no process to preempt (it was not made by a process)", victim);
        return -1;
    }
    Py_INCREF(victim);
    PyObject *cause = NULL;
    int rc = -1;
    Py_ssize_t at = index_of(r->users, (PyObject *)victim);
    PyObject *since = usage_since(victim);
    if (since != NULL && at >= 0 && PySequence_DelItem(r->users, at) == 0 &&
        (cause = make_preempted(st, req->proc, since, (PyObject *)r)) != NULL)
        rc = process_interrupt((ProcessObject *)victim->proc, cause);
    Py_XDECREF(since);
    Py_XDECREF(cause);
    Py_DECREF(victim);
    return rc;
}

static int do_put(ResourceObject *r, RequestObject *req)
{
    if (r->kind == RES_PREEMPTIVE && (double)PyList_GET_SIZE(r->users) >= r->capacity && req->preempt &&
        preempt_for(r, req) < 0)
        return -1;
    if ((double)PyList_GET_SIZE(r->users) < r->capacity) {
        if (PyList_Append(r->users, (PyObject *)req) < 0) return -1;
        req->since = engine_now(r->env->e);
        req->granted = 1;
        return event_trigger(&req->ev, 1, Py_NewRef(Py_None));
    }
    return 0;
}

static int do_get(ResourceObject *r, RequestObject *rel)
{
    Py_ssize_t at = rel->request ? index_of(r->users, rel->request) : -1;
    if (at >= 0 && PySequence_DelItem(r->users, at) < 0) return -1; /* not (or no longer) a user: nothing */
    return event_trigger(&rel->ev, 1, Py_NewRef(Py_None));
}

/* SimPy's _trigger_put / _trigger_get: the resource's do_put and do_get never ask to go on,
 * so each call serves at most the first queued event it can. */
static int serve(ResourceObject *r, PyObject *queue, int put)
{
    Py_ssize_t idx = 0;
    while (idx < PyList_GET_SIZE(queue)) {
        RequestObject *ev = (RequestObject *)Py_NewRef(PyList_GET_ITEM(queue, idx));
        int rc = put ? do_put(r, ev) : do_get(r, ev);
        if (rc == 0) {
            if (ev->ev.value == NULL) idx++;
            else if (PyList_GET_SIZE(queue) > idx && PyList_GET_ITEM(queue, idx) == (PyObject *)ev)
                rc = PySequence_DelItem(queue, idx);
            else {
                PyErr_SetString(PyExc_RuntimeError, put ? "Put queue invariant violated" : "Get queue invariant violated");
                rc = -1;
            }
        }
        Py_DECREF(ev);
        if (rc < 0) return -1;
        break;
    }
    return 0;
}

int resource_on_processed(PyObject *res, EventObject *ev)
{
    ResourceObject *r = (ResourceObject *)res;
    return ev->kind == EV_RELEASE ? serve(r, r->put_queue, 1) : serve(r, r->get_queue, 0);
}

/* --- creating requests and releases ------------------------------------------------ */

static ResourceObject *as_resource(modstate *st, PyObject *o)
{
    if (!PyObject_TypeCheck(o, st->types[T_RESOURCE])) {
        PyErr_Format(PyExc_TypeError, "expected a Resource, got %R", o);
        return NULL;
    }
    return (ResourceObject *)o;
}

static RequestObject *new_request(ResourceObject *r, PyTypeObject *type, int kind)
{
    RequestObject *q = (RequestObject *)event_alloc(type, r->env, kind);
    if (q == NULL) return NULL;
    q->resource = (ResourceObject *)Py_NewRef((PyObject *)r);
    q->proc = Py_NewRef(r->env->active ? r->env->active : Py_None);
    return q;
}

static PyObject *request_for(ResourceObject *r, PyObject *priority, int preempt)
{
    modstate *st = r->env->st;
    int prio = r->kind != RES_PLAIN;
    RequestObject *q = new_request(r, st->types[prio ? T_PRIORITY_REQUEST : T_REQUEST], EV_REQUEST);
    if (q == NULL) return NULL;
    Py_ssize_t at = PyList_GET_SIZE(r->put_queue);
    if (prio) {
        q->priority = Py_NewRef(priority);
        q->preempt = (char)preempt;
        q->time = engine_now(r->env->e);
        q->key = Py_BuildValue("(OdO)", priority, q->time, preempt ? Py_False : Py_True);
        if (q->key == NULL || (at = insertion_point(r->put_queue, q->key)) < 0) goto fail;
    }
    if (PyList_Insert(r->put_queue, at, (PyObject *)q) < 0) goto fail;
    if (event_add_callback(&q->ev, (PyObject *)r) < 0 || serve(r, r->put_queue, 1) < 0) goto fail;
    return (PyObject *)q;
fail:
    Py_DECREF(q);
    return NULL;
}

static PyObject *release_of(ResourceObject *r, PyObject *request)
{
    RequestObject *rel = new_request(r, r->env->st->types[T_RELEASE], EV_RELEASE);
    if (rel == NULL) return NULL;
    rel->request = Py_NewRef(request);
    if (PyList_Append(r->get_queue, (PyObject *)rel) < 0 || event_add_callback(&rel->ev, (PyObject *)r) < 0 ||
        serve(r, r->get_queue, 0) < 0) {
        Py_DECREF(rel);
        return NULL;
    }
    return (PyObject *)rel;
}

static PyObject *Resource_request(ResourceObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static char *kwlist[] = {"priority", "preempt", NULL};
    PyObject *priority = NULL;
    int preempt = 1;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (self->kind == RES_PLAIN) {
        if (nargs + nkw) return PyErr_Format(PyExc_TypeError, "a Resource's request() takes no arguments");
        return request_for(self, NULL, 0);
    }
    PyObject *tuple = PyTuple_New(nargs), *kw = nkw ? PyDict_New() : NULL;
    if (tuple == NULL || (nkw && kw == NULL)) goto parse_fail;
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0; i < nkw; i++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) goto parse_fail;
    int ok = PyArg_ParseTupleAndKeywords(tuple, kw, "|Op:request", kwlist, &priority, &preempt);
    Py_DECREF(tuple);
    Py_XDECREF(kw);
    if (!ok) return NULL;
    PyObject *zero = priority ? NULL : PyLong_FromLong(0);
    PyObject *r = request_for(self, priority ? priority : zero, preempt);
    Py_XDECREF(zero);
    return r;
parse_fail:
    Py_XDECREF(tuple);
    Py_XDECREF(kw);
    return NULL;
}

static PyObject *Resource_release(ResourceObject *self, PyObject *request) { return release_of(self, request); }

/* --- the Resource types ---------------------------------------------------------------- */

static PyObject *Resource_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "capacity", NULL};
    PyObject *env_o, *cap = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:Resource", kwlist, &env_o, &cap)) return NULL;
    modstate *st = state_of_type(type);
    EnvObject *env = st ? as_env(st, env_o, type->tp_name) : NULL;
    if (env == NULL) return NULL;
    double capacity = cap ? PyFloat_AsDouble(cap) : 1.0;
    if (capacity == -1.0 && PyErr_Occurred()) return NULL;
    if (!(capacity > 0)) return PyErr_Format(PyExc_ValueError, "\"capacity\" must be > 0.");
    ResourceObject *r = (ResourceObject *)type->tp_alloc(type, 0);
    if (r == NULL) return NULL;
    r->env = (EnvObject *)Py_NewRef((PyObject *)env);
    r->capacity = capacity;
    r->capacity_obj = cap ? Py_NewRef(cap) : PyLong_FromLong(1);
    r->kind = PyType_IsSubtype(type, st->types[T_PREEMPTIVE_RESOURCE]) ? RES_PREEMPTIVE
            : PyType_IsSubtype(type, st->types[T_PRIORITY_RESOURCE]) ? RES_PRIORITY : RES_PLAIN;
    r->users = PyList_New(0);
    r->put_queue = PyList_New(0);
    r->get_queue = PyList_New(0);
    r->dict = PyDict_New(); /* made at once: see binding.h on instance dicts */
    if (r->capacity_obj == NULL || r->users == NULL || r->put_queue == NULL || r->get_queue == NULL ||
        r->dict == NULL) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static int Resource_init(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self, (void)args, (void)kw;
    return 0;
}

static int Resource_traverse(ResourceObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->env);
    Py_VISIT(self->capacity_obj);
    Py_VISIT(self->users);
    Py_VISIT(self->put_queue);
    Py_VISIT(self->get_queue);
    Py_VISIT(self->dict);
    return 0;
}

static int Resource_clear(ResourceObject *self)
{
    Py_CLEAR(self->env);
    Py_CLEAR(self->capacity_obj);
    Py_CLEAR(self->users);
    Py_CLEAR(self->put_queue);
    Py_CLEAR(self->get_queue);
    Py_CLEAR(self->dict);
    return 0;
}

static void Resource_dealloc(ResourceObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Resource_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Resource_get_count(ResourceObject *self, void *c)
{
    (void)c;
    return PyLong_FromSsize_t(PyList_GET_SIZE(self->users));
}

static PyMethodDef Resource_methods[] = {
    {"request", (PyCFunction)(void (*)(void))Resource_request, METH_FASTCALL | METH_KEYWORDS,
     "request($self, /, priority=0, preempt=True)\n--\n\nAsk for a unit; the Request succeeds when granted "
     "(priority and preempt: PriorityResource and PreemptiveResource only)."},
    {"release", (PyCFunction)Resource_release, METH_O,
     "release($self, request, /)\n--\n\nGive a unit back; returns the Release event."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Resource_getset[] = {{"count", (getter)Resource_get_count, NULL, "units in use", NULL},
                                        {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "attributes a model sets", NULL},
                                        {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Resource_members[] = {
    {"capacity", T_OBJECT_EX, offsetof(ResourceObject, capacity_obj), READONLY, "units in all"},
    {"users", T_OBJECT_EX, offsetof(ResourceObject, users), READONLY, "the granted requests"},
    {"queue", T_OBJECT_EX, offsetof(ResourceObject, put_queue), READONLY, "the waiting requests, in service order"},
    {"put_queue", T_OBJECT_EX, offsetof(ResourceObject, put_queue), READONLY, "the waiting requests"},
    {"get_queue", T_OBJECT_EX, offsetof(ResourceObject, get_queue), READONLY, "the waiting releases"},
    {"_env", T_OBJECT_EX, offsetof(ResourceObject, env), READONLY, "the environment"},
    {"__dictoffset__", T_PYSSIZET, offsetof(ResourceObject, dict), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot Resource_slots[] = {
    {Py_tp_new, Resource_new}, {Py_tp_init, Resource_init}, {Py_tp_dealloc, Resource_dealloc},
    {Py_tp_traverse, Resource_traverse}, {Py_tp_clear, Resource_clear}, {Py_tp_methods, Resource_methods},
    {Py_tp_getset, Resource_getset}, {Py_tp_members, Resource_members},
    {Py_tp_doc, "Resource(env, capacity=1)\n--\n\ncapacity units, granted in the order they are requested."},
    {0, NULL}};
static PyType_Slot PriorityResource_slots[] = {
    {Py_tp_dealloc, Resource_dealloc},
    {Py_tp_traverse, Resource_traverse}, {Py_tp_clear, Resource_clear},
    {Py_tp_doc, "PriorityResource(env, capacity=1)\n--\n\nUnits granted by (priority, time of request): smaller "
                "priorities first."},
    {0, NULL}};
static PyType_Slot PreemptiveResource_slots[] = {
    {Py_tp_dealloc, Resource_dealloc},
    {Py_tp_traverse, Resource_traverse}, {Py_tp_clear, Resource_clear},
    {Py_tp_doc, "PreemptiveResource(env, capacity=1)\n--\n\nA PriorityResource whose preempting requests "
                "interrupt the user with the largest key (priority, time, not preempt)."},
    {0, NULL}};

static PyType_Spec Resource_spec = {"pysim._native.Resource", sizeof(ResourceObject), 0, BINDING_GC_FLAGS,
                                    Resource_slots};
static PyType_Spec PriorityResource_spec = {"pysim._native.PriorityResource", sizeof(ResourceObject), 0,
                                            BINDING_GC_FLAGS, PriorityResource_slots};
static PyType_Spec PreemptiveResource_spec = {"pysim._native.PreemptiveResource", sizeof(ResourceObject), 0,
                                              BINDING_GC_FLAGS, PreemptiveResource_slots};

/* --- the Request types -------------------------------------------------------------------- */

static PyObject *Request_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"resource", "priority", "preempt", NULL};
    PyObject *res, *priority = NULL;
    int preempt = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Op:Request", kwlist, &res, &priority, &preempt)) return NULL;
    modstate *st = state_of_type(type);
    ResourceObject *r = st ? as_resource(st, res) : NULL;
    if (r == NULL) return NULL;
    if (r->kind == RES_PLAIN && priority != NULL)
        return PyErr_Format(PyExc_TypeError, "a plain Resource's request takes no priority");
    PyObject *zero = (r->kind != RES_PLAIN && priority == NULL) ? PyLong_FromLong(0) : NULL;
    PyObject *q = request_for(r, priority ? priority : zero, preempt);
    Py_XDECREF(zero);
    return q;
}

static PyObject *Release_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"resource", "request", NULL};
    PyObject *res, *request;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:Release", kwlist, &res, &request)) return NULL;
    modstate *st = state_of_type(type);
    ResourceObject *r = st ? as_resource(st, res) : NULL;
    return r ? release_of(r, request) : NULL;
}

static int Request_traverse(RequestObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->resource);
    Py_VISIT(self->proc);
    Py_VISIT(self->priority);
    Py_VISIT(self->key);
    Py_VISIT(self->request);
    return event_traverse(&self->ev, visit, arg);
}

static int Request_clear(RequestObject *self)
{
    Py_CLEAR(self->resource);
    Py_CLEAR(self->proc);
    Py_CLEAR(self->priority);
    Py_CLEAR(self->key);
    Py_CLEAR(self->request);
    return event_clear(&self->ev);
}

/* Withdraw a request (or release) not yet granted. */
static PyObject *Request_cancel(RequestObject *self, PyObject *unused)
{
    (void)unused;
    if (self->ev.value == NULL && self->resource != NULL) {
        PyObject *q = self->ev.kind == EV_RELEASE ? self->resource->get_queue : self->resource->put_queue;
        Py_ssize_t at = index_of(q, (PyObject *)self);
        if (at < 0) return PyErr_Format(PyExc_ValueError, "%R is not queued", self); /* as list.remove */
        if (PySequence_DelItem(q, at) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

PyObject *request_exit(PyObject *req, PyObject *const *args, Py_ssize_t nargs)
{
    RequestObject *self = (RequestObject *)req;
    if (nargs > 3) return PyErr_Format(PyExc_TypeError, "__exit__ takes at most 3 arguments");
    PyObject *exc_type = nargs > 0 ? args[0] : Py_None;
    PyObject *r = Request_cancel(self, NULL);
    if (r == NULL) return NULL;
    Py_DECREF(r);
    if (self->ev.kind == EV_REQUEST && exc_type != PyExc_GeneratorExit) {
        PyObject *rel = release_of(self->resource, (PyObject *)self);
        if (rel == NULL) return NULL;
        Py_DECREF(rel);
    }
    Py_RETURN_NONE;
}

static PyObject *Request_get_usage_since(RequestObject *self, void *c)
{
    (void)c;
    return usage_since(self);
}

static PyGetSetDef Request_getset[] = {
    {"usage_since", (getter)Request_get_usage_since, NULL, "when it was granted, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Request_methods[] = {
    {"cancel", (PyCFunction)Request_cancel, METH_NOARGS,
     "cancel($self, /)\n--\n\nWithdraw the request if it has not been granted yet."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef Request_members[] = {
    {"resource", T_OBJECT_EX, offsetof(RequestObject, resource), READONLY, "the resource"},
    {"proc", T_OBJECT_EX, offsetof(RequestObject, proc), READONLY, "the process that made it, or None"},
    {NULL, 0, 0, 0, NULL}};
static PyMemberDef PriorityRequest_members[] = {
    {"priority", T_OBJECT_EX, offsetof(RequestObject, priority), READONLY, "smaller is served first"},
    {"preempt", T_BOOL, offsetof(RequestObject, preempt), READONLY, "may preempt a user"},
    {"time", T_DOUBLE, offsetof(RequestObject, time), READONLY, "when it was made"},
    {"key", T_OBJECT_EX, offsetof(RequestObject, key), READONLY, "(priority, time, not preempt)"},
    {NULL, 0, 0, 0, NULL}};
static PyMemberDef Release_members[] = {
    {"request", T_OBJECT_EX, offsetof(RequestObject, request), READONLY, "the request given back"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot Request_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, Request_new}, {Py_tp_traverse, Request_traverse}, {Py_tp_clear, Request_clear},
    {Py_tp_methods, Request_methods}, {Py_tp_members, Request_members}, {Py_tp_getset, Request_getset},
    {Py_tp_doc, "Request(resource)\n--\n\nA request for a unit; succeeds when granted. As a context manager "
                "it releases the unit (or withdraws the request) on exit."},
    {0, NULL}};
static PyType_Slot PriorityRequest_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_traverse, Request_traverse}, {Py_tp_clear, Request_clear},
    {Py_tp_members, PriorityRequest_members},
    {Py_tp_doc, "PriorityRequest(resource, priority=0, preempt=True)\n--\n\nA request with a priority."},
    {0, NULL}};
static PyType_Slot Release_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, Release_new}, {Py_tp_traverse, Request_traverse}, {Py_tp_clear, Request_clear},
    {Py_tp_methods, Request_methods}, {Py_tp_members, Release_members},
    {Py_tp_doc, "Release(resource, request)\n--\n\nGives a unit back; succeeds at once."},
    {0, NULL}};

static PyType_Spec Request_spec = {"pysim._native.Request", sizeof(RequestObject), 0, BINDING_GC_FLAGS,
                                   Request_slots};
static PyType_Spec PriorityRequest_spec = {"pysim._native.PriorityRequest", sizeof(RequestObject), 0,
                                           BINDING_GC_FLAGS, PriorityRequest_slots};
static PyType_Spec Release_spec = {"pysim._native.Release", sizeof(RequestObject), 0, BINDING_GC_FLAGS,
                                   Release_slots};

/* --- Preempted -------------------------------------------------------------------------------- */

static PyObject *Preempted_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"by", "usage_since", "resource", NULL};
    PyObject *by, *since, *res;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:Preempted", kwlist, &by, &since, &res)) return NULL;
    modstate *st = state_of_type(type);
    return st ? make_preempted(st, by, since, res) : NULL;
}

static int Preempted_traverse(PreemptedObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->by);
    Py_VISIT(self->resource);
    return 0;
}

static int Preempted_clear(PreemptedObject *self)
{
    Py_CLEAR(self->by);
    Py_CLEAR(self->resource);
    return 0;
}

static void Preempted_dealloc(PreemptedObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Preempted_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Preempted_repr(PreemptedObject *self)
{
    return PyUnicode_FromFormat("Preempted(by=%R, usage_since=%R)", self->by, self->usage_since);
}

static PyMemberDef Preempted_members[] = {
    {"by", T_OBJECT_EX, offsetof(PreemptedObject, by), READONLY, "the preempting process"},
    {"usage_since", T_OBJECT_EX, offsetof(PreemptedObject, usage_since), READONLY, "when the preempted use began"},
    {"resource", T_OBJECT_EX, offsetof(PreemptedObject, resource), READONLY, "the resource"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot Preempted_slots[] = {
    {Py_tp_new, Preempted_new}, {Py_tp_dealloc, Preempted_dealloc}, {Py_tp_traverse, Preempted_traverse},
    {Py_tp_clear, Preempted_clear}, {Py_tp_repr, Preempted_repr}, {Py_tp_members, Preempted_members},
    {Py_tp_doc, "Preempted(by, usage_since, resource)\n--\n\nThe cause of the Interrupt a preempted process gets."},
    {0, NULL}};
static PyType_Spec Preempted_spec = {"pysim._native.Preempted", sizeof(PreemptedObject), 0, BINDING_GC_FLAGS,
                                     Preempted_slots};

int resource_register(PyObject *m, modstate *st)
{
    if (add_type(m, st, T_RESOURCE, &Resource_spec, NULL) < 0) return -1;
    if (add_type(m, st, T_PRIORITY_RESOURCE, &PriorityResource_spec, st->types[T_RESOURCE]) < 0) return -1;
    if (add_type(m, st, T_PREEMPTIVE_RESOURCE, &PreemptiveResource_spec, st->types[T_PRIORITY_RESOURCE]) < 0)
        return -1;
    if (add_type(m, st, T_REQUEST, &Request_spec, st->types[T_EVENT]) < 0) return -1;
    if (add_type(m, st, T_PRIORITY_REQUEST, &PriorityRequest_spec, st->types[T_REQUEST]) < 0) return -1;
    if (add_type(m, st, T_RELEASE, &Release_spec, st->types[T_EVENT]) < 0) return -1;
    if (add_type(m, st, T_PREEMPTED, &Preempted_spec, NULL) < 0) return -1;
    return context_methods_register(m, st);
}
