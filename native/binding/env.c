/* env.c -- Environment: the clock, the C loop that processes events, and run().
 *
 *     class Environment:
 *         def __init__(self, initial_time=0)
 *         now: float; active_process: Process | None; processed: int; pending: int
 *         def schedule(self, event, priority=NORMAL, delay=0) -> None
 *         def peek(self) -> float            # inf when nothing is scheduled
 *         def step(self) -> None             # EmptySchedule when nothing is scheduled
 *         def run(self, until=None)          # None, a time (> now) or an Event
 *         def event(self) -> Event
 *         def timeout(self, delay=0, value=None) -> Timeout
 *         def process(self, generator) -> Process
 *         def all_of(self, events) -> AllOf
 *         def any_of(self, events) -> AnyOf
 *
 * run(until=t) schedules an URGENT stop at t, so it returns before the NORMAL
 * events due at t, as SimPy does. Scheduled Python events hold one reference
 * each, released when they run or when the Environment goes away. */
#include "kernel.h"

#include <math.h>

#include "structmember.h"
#include "pysim/status.h"

EnvObject *as_env(modstate *st, PyObject *o, const char *what)
{
    if (!PyObject_TypeCheck(o, st->types[T_ENVIRONMENT])) {
        PyErr_Format(PyExc_TypeError, "%s: expected an Environment (a pysim Simulation), got %R", what, o);
        return NULL;
    }
    return (EnvObject *)o;
}

int dispatch_event(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx;
    EventObject *ev = (EventObject *)(intptr_t)arg;
    int rc = event_process(ev);
    Py_DECREF(ev);
    return rc == 0 ? PS_OK : PS_ECALLBACK;
}

/* run(until=t)'s URGENT stop at t. */
static int dispatch_stop(ps_engine *e, void *ctx, int64_t arg)
{
    (void)arg;
    EnvObject *env = ctx;
    env->stopping = 1;
    engine_stop(e);
    return PS_OK;
}

int schedule_event(EventObject *ev, double delay, unsigned klass)
{
    Py_INCREF(ev);
    int s = engine_schedule_in(ev->env->e, delay, klass, dispatch_event, ev->env, (int64_t)(intptr_t)ev);
    if (s != PS_OK) {
        Py_DECREF(ev);
        raise_status(ev->env->st, s, "schedule");
        return -1;
    }
    return 0;
}

static void drop_pending(ps_handler fn, void *ctx, int64_t arg)
{
    (void)ctx;
    if (fn == dispatch_event || fn == dispatch_start) Py_DECREF((PyObject *)(intptr_t)arg);
}

static void visit_pending(ps_handler fn, void *ctx, int64_t arg, void *data)
{
    (void)ctx;
    void **va = data;
    visitproc visit = (visitproc)(uintptr_t)va[0];
    if ((fn == dispatch_event || fn == dispatch_start) && va[2] == NULL) {
        int r = visit((PyObject *)(intptr_t)arg, va[1]);
        if (r) va[2] = (void *)(intptr_t)r;
    }
}

static PyObject *Env_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args, (void)kw;
    EnvObject *self = (EnvObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->st = state_of_type(type);
    self->e = engine_new(0.0);
    self->dict = PyDict_New(); /* made at once: see binding.h on instance dicts */
    if (self->st == NULL || self->e == NULL || self->dict == NULL) {
        int no_error_yet = !PyErr_Occurred(); /* engine_new failed: out of memory */
        Py_DECREF(self);
        return no_error_yet ? PyErr_NoMemory() : NULL;
    }
    return (PyObject *)self;
}

static int Env_init(EnvObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"initial_time", NULL};
    double start = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|d:Environment", kwlist, &start)) return -1;
    if (!isfinite(start)) {
        PyErr_Format(PyExc_ValueError, "initial_time must be a finite number of seconds, got %R",
                     PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, 0) : Py_None);
        return -1;
    }
    if (engine_pending(self->e) > 0 || engine_processed(self->e) > 0) {
        PyErr_SetString(PyExc_RuntimeError, "an Environment's initial_time cannot change once events exist");
        return -1;
    }
    ps_engine *fresh = engine_new(start);
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    engine_free(self->e);
    self->e = fresh;
    return 0;
}

static int Env_traverse(EnvObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->active);
    Py_VISIT(self->dict);
    Py_VISIT(self->stop_value);
    if (self->e) {
        void *va[3] = {(void *)(uintptr_t)visit, arg, NULL};
        engine_visit(self->e, visit_pending, va);
        if (va[2]) return (int)(intptr_t)va[2];
    }
    return 0;
}

static int Env_clear(EnvObject *self)
{
    Py_CLEAR(self->active);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->stop_value);
    if (self->e) engine_clear(self->e, drop_pending);
    return 0;
}

static void Env_dealloc(EnvObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Env_clear(self);
    engine_free(self->e);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Env_repr(EnvObject *self)
{
    PyObject *now = PyFloat_FromDouble(engine_now(self->e));
    if (now == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("<%s now=%R pending=%lld at %p>", Py_TYPE(self)->tp_name, now,
                                       (long long)engine_pending(self->e), self);
    Py_DECREF(now);
    return r;
}

/* Run the C loop until it stops or runs out; then raise what a callback raised. */
static int loop(EnvObject *self)
{
    int s = engine_run(self->e, INFINITY, -1);
    if (s != PS_OK) {
        raise_status(self->st, s, "run");
        return -1;
    }
    return 0;
}

/* The callback run(until=event) adds: stop, returning the event's value or raising its exception. */
static PyObject *stop_on_event(PyObject *env_obj, PyObject *event)
{
    EnvObject *env = (EnvObject *)env_obj;
    EventObject *ev = (EventObject *)event;
    if (!ev->ok) {
        PyErr_SetObject((PyObject *)Py_TYPE(ev->value), ev->value);
        return NULL;
    }
    Py_XSETREF(env->stop_value, Py_NewRef(ev->value));
    env->stopping = 1;
    engine_stop(env->e);
    Py_RETURN_NONE;
}

static PyMethodDef stop_def = {"_stop_simulation", stop_on_event, METH_O, "Stop run() when this event is processed."};

static PyObject *Env_run(EnvObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"until", NULL};
    PyObject *until = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:run", kwlist, &until)) return NULL;
    modstate *st = self->st;
    self->stopping = 0;
    Py_CLEAR(self->stop_value);
    if (until == Py_None) {
        if (loop(self) < 0) return NULL;
        Py_RETURN_NONE;
    }
    if (PyObject_TypeCheck(until, st->types[T_EVENT])) {
        EventObject *ev = (EventObject *)until;
        if (ev->processed) return Py_NewRef(ev->value);
        PyObject *stopper = PyCFunction_NewEx(&stop_def, (PyObject *)self, NULL);
        if (stopper == NULL) return NULL;
        int rc = event_add_callback(ev, stopper);
        Py_DECREF(stopper);
        if (rc < 0 || loop(self) < 0) return NULL;
        if (!self->stopping) {
            PyErr_Format(PyExc_RuntimeError, "No scheduled events left but \"until\" event was not triggered: %R",
                         until);
            return NULL;
        }
        PyObject *v = self->stop_value;
        self->stop_value = NULL;
        return v ? v : Py_NewRef(Py_None);
    }
    double at = PyFloat_AsDouble(until);
    if (at == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "until must be None, a time or an Event, got %R", until);
        return NULL;
    }
    double now = engine_now(self->e);
    if (!(at > now)) return PyErr_Format(PyExc_ValueError, "until (%R) must be greater than the current simulation time",
                                         until);
    int s = engine_schedule_in(self->e, at - now, EVQ_URGENT, dispatch_stop, self, 0);
    if (s != PS_OK) return raise_status(st, s, "run");
    if (loop(self) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Env_step(EnvObject *self, PyObject *unused)
{
    (void)unused;
    if (engine_pending(self->e) == 0) {
        PyErr_SetString(self->st->EmptySchedule, "no events are scheduled");
        return NULL;
    }
    int s = engine_run(self->e, INFINITY, 1);
    if (s != PS_OK) return raise_status(self->st, s, "step");
    Py_RETURN_NONE;
}

static PyObject *Env_peek(EnvObject *self, PyObject *unused)
{
    (void)unused;
    return PyFloat_FromDouble(engine_peek(self->e));
}

static PyObject *Env_schedule(EnvObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"event", "priority", "delay", NULL};
    PyObject *event;
    int priority = 1;
    double delay = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|id:schedule", kwlist, self->st->types[T_EVENT], &event,
                                     &priority, &delay))
        return NULL;
    if (priority < -1 || priority > 1)
        return PyErr_Format(PyExc_ValueError, "schedule: priority must be URGENT (0) or NORMAL (1), got %d", priority);
    if (!(delay >= 0)) {
        PyObject *d = PyFloat_FromDouble(delay);
        if (d) PyErr_Format(PyExc_ValueError, "Negative delay %R", d);
        Py_XDECREF(d);
        return NULL;
    }
    if (schedule_event((EventObject *)event, delay, (unsigned)(priority + 1)) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Env_event(EnvObject *self, PyObject *unused)
{
    (void)unused;
    return (PyObject *)event_alloc(self->st->types[T_EVENT], self, EV_PLAIN);
}

static PyObject *Env_timeout(EnvObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *names[] = {"delay", "value"};
    PyObject *given[2] = {NULL, NULL};
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 2) return PyErr_Format(PyExc_TypeError, "timeout(delay=0, value=None) takes at most 2 arguments");
    for (Py_ssize_t i = 0; i < nargs; i++) given[i] = args[i];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        int slot = PyUnicode_CompareWithASCIIString(k, names[0]) == 0 ? 0
                 : PyUnicode_CompareWithASCIIString(k, names[1]) == 0 ? 1 : -1;
        if (slot < 0) return PyErr_Format(PyExc_TypeError, "timeout() got an unexpected keyword argument %R", k);
        if (given[slot]) return PyErr_Format(PyExc_TypeError, "timeout() got multiple values for argument '%s'",
                                             names[slot]);
        given[slot] = args[nargs + i];
    }
    if (given[0] != NULL) return timeout_make(self->st->types[T_TIMEOUT], self, given[0], given[1] ? given[1] : Py_None);
    PyObject *zero = PyLong_FromLong(0);
    PyObject *t = zero ? timeout_make(self->st->types[T_TIMEOUT], self, zero, given[1] ? given[1] : Py_None) : NULL;
    Py_XDECREF(zero);
    return t;
}

static PyObject *Env_process(EnvObject *self, PyObject *gen)
{
    return process_make(self->st->types[T_PROCESS], self, gen);
}

static PyObject *condition_of(EnvObject *self, enum binding_type t, PyObject *events)
{
    return condition_make(self->st->types[t], self, t == T_ALLOF ? self->st->all_events : self->st->any_events,
                          events);
}

static PyObject *Env_all_of(EnvObject *self, PyObject *events) { return condition_of(self, T_ALLOF, events); }
static PyObject *Env_any_of(EnvObject *self, PyObject *events) { return condition_of(self, T_ANYOF, events); }

static PyObject *Env_get_now(EnvObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(engine_now(self->e));
}
static PyObject *Env_get_active(EnvObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->active ? self->active : Py_None);
}
static PyObject *Env_get_processed(EnvObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(engine_processed(self->e));
}
static PyObject *Env_get_pending(EnvObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(engine_pending(self->e));
}

static PyMethodDef Env_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Env_run, METH_VARARGS | METH_KEYWORDS,
     "run($self, /, until=None)\n--\n\nProcess events until there are none, until time `until` (before the "
     "events due then), or until the Event `until` is processed (returning its value)."},
    {"step", (PyCFunction)Env_step, METH_NOARGS, "step($self, /)\n--\n\nProcess the next event; EmptySchedule if none."},
    {"peek", (PyCFunction)Env_peek, METH_NOARGS, "peek($self, /)\n--\n\nTime of the next event, inf if none."},
    {"schedule", (PyCFunction)(void (*)(void))Env_schedule, METH_VARARGS | METH_KEYWORDS,
     "schedule($self, /, event, priority=1, delay=0)\n--\n\nSchedule `event` `delay` seconds from now (priority URGENT=0 or NORMAL=1)."},
    {"event", (PyCFunction)Env_event, METH_NOARGS, "event($self, /)\n--\n\nA new pending Event."},
    {"timeout", (PyCFunction)(void (*)(void))Env_timeout, METH_FASTCALL | METH_KEYWORDS,
     "timeout($self, /, delay=0, value=None)\n--\n\nAn Event that succeeds `delay` seconds from now."},
    {"process", (PyCFunction)Env_process, METH_O,
     "process($self, generator, /)\n--\n\nStart `generator` as a Process (before the other events due now)."},
    {"all_of", (PyCFunction)Env_all_of, METH_O, "all_of($self, events, /)\n--\n\nAn AllOf condition."},
    {"any_of", (PyCFunction)Env_any_of, METH_O, "any_of($self, events, /)\n--\n\nAn AnyOf condition."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Env_getset[] = {
    {"now", (getter)Env_get_now, NULL, "the current simulated time, seconds", NULL},
    {"active_process", (getter)Env_get_active, NULL, "the process being resumed, or None", NULL},
    {"processed", (getter)Env_get_processed, NULL, "events processed so far (pysim)", NULL},
    {"pending", (getter)Env_get_pending, NULL, "events scheduled and not yet processed (pysim)", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "attributes a model sets", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Env_members[] = {{"__dictoffset__", T_PYSSIZET, offsetof(EnvObject, dict), READONLY, NULL},
                                    {NULL, 0, 0, 0, NULL}};

static PyType_Slot Env_slots[] = {
    {Py_tp_new, Env_new}, {Py_tp_init, Env_init}, {Py_tp_dealloc, Env_dealloc}, {Py_tp_traverse, Env_traverse},
    {Py_tp_clear, Env_clear}, {Py_tp_repr, Env_repr}, {Py_tp_methods, Env_methods}, {Py_tp_getset, Env_getset},
    {Py_tp_members, Env_members},
    {Py_tp_doc, "Environment(initial_time=0)\n--\n\nThe simulated clock and the events scheduled on it, "
                "processed by a C loop with SimPy's semantics."},
    {0, NULL}};

static PyType_Spec Env_spec = {"pysim._native.Environment", sizeof(EnvObject), 0, BINDING_GC_FLAGS, Env_slots};

int kernel_init(PyObject *m, modstate *st)
{
    PyObject *errors = PyImport_ImportModule("pysim.errors");
    PyObject *base = errors ? PyObject_GetAttrString(errors, "PysimError") : NULL;
    Py_XDECREF(errors);
    if (base == NULL) return -1;
    st->EmptySchedule = PyErr_NewExceptionWithDoc("pysim._native.EmptySchedule",
                                                  "step() was called with no events scheduled.", base, NULL);
    Py_DECREF(base);
    if (st->EmptySchedule == NULL || PyModule_AddObjectRef(m, "EmptySchedule", st->EmptySchedule) < 0) return -1;
    if (PyModule_AddIntConstant(m, "URGENT", 0) < 0 || PyModule_AddIntConstant(m, "NORMAL", 1) < 0) return -1;
    if (add_type(m, st, T_ENVIRONMENT, &Env_spec, NULL) < 0) return -1;
    if (add_type(m, st, T_EVENT, &Event_spec, NULL) < 0) return -1;
    if (add_type(m, st, T_TIMEOUT, &Timeout_spec, st->types[T_EVENT]) < 0) return -1;
    if (add_type(m, st, T_PROCESS, &Process_spec, st->types[T_EVENT]) < 0) return -1;
    if (add_type(m, st, T_INTERRUPTION, &Interruption_spec, st->types[T_EVENT]) < 0) return -1;
    if (condition_register(m, st) < 0 || resource_register(m, st) < 0) return -1;
    st->pending = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (st->pending == NULL || PyModule_AddObjectRef(m, "PENDING", st->pending) < 0) return -1;
    return 0;
}
