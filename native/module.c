/* _native -- CPython binding for the pysim C core. No simulation logic here
 * beyond resuming Python generator processes from the C run loop.
 *
 *     class Engine:                       # base of pysim.engine.Simulation
 *         now: float; processed: int; pending: int; active_process
 *         def run(self, until: float = inf, max_events: int = -1) -> None
 *         def step(self) -> None          # IndexError when nothing is pending
 *         def peek(self) -> float
 *         def stop(self) -> None
 *         def event(self) -> Event
 *         def timeout(self, delay, value=None) -> Timeout
 *         def process(self, generator) -> Process
 *     class Event:  succeed(value=None), fail(exc), add_callback(fn), triggered,
 *                   processed, ok, value, defused, callbacks
 *     class Timeout(Event): cancel()
 *     class Process(Event): is_alive, target, interrupt(cause=None)
 *     class Resource(engine, capacity): request(priority=0) -> Request,
 *                   release(request), count, capacity, users, queue
 *     class Station(engine, servers, discipline, select_address=0):
 *                   serve(service_s, klass=0) -> Event, stats(), log()
 *     class Link(engine, eth): send(nbytes) -> Event, stats()
 *     class Cache(size, line, ways, policy, capsule, callback_address)
 *     class TLB(entries, ways, policy, capsule, callback_address)
 *     class Disk(...); qnet_run(...); qnet_run_trace(...); eth_*(...)
 *
 * Pending Python events are engine events whose ctx is the Engine and whose
 * arg is a tagged pointer to the Event (tag 1: start a Process); each holds
 * one reference, released when the event runs or the Engine goes away. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#include "numpy/random/bitgen.h"
#include "pysim/cache.h"
#include "pysim/disk.h"
#include "pysim/engine.h"
#include "pysim/measure.h"
#include "pysim/net.h"
#include "pysim/qnet.h"
#include "pysim/station.h"
#include "pysim/status.h"
#include "pysim/tlb.h"

typedef struct {
    PyObject *NativeError;
    PyObject *Interrupt;
    PyTypeObject *EngineType, *EventType, *TimeoutType, *ProcessType, *ResourceType,
        *RequestType, *StationType, *LinkType, *CacheType, *TlbType, *DiskType;
    PyObject *str_throw;
} modstate;

static modstate *get_state(PyObject *module) { return (modstate *)PyModule_GetState(module); }

static struct PyModuleDef native_module;
static PyObject *Engine_new_with_state(PyTypeObject *type, PyObject *args, PyObject *kw);

/* ------------------------------------------------------------------ errors */

/* Raise the Python exception matching a C status; returns NULL. */
static PyObject *raise_status(modstate *st, int status, const char *what)
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

/* A C-contiguous buffer of `itemsize` bytes per item whose format code is in `codes`. */
static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *codes,
                      int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (view->itemsize != itemsize || strlen(f) != 1 || strchr(codes, *f) == NULL || view->ndim > 1) {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-d array of %zd-byte items of type code in '%s', got format '%s' itemsize %zd",
                     name, itemsize, codes, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The bitgen_t inside a NumPy BitGenerator capsule, as a ps_rng. */
static ps_rng *rng_from_capsule(PyObject *capsule)
{
    if (capsule == Py_None) return NULL;
    bitgen_t *bg = PyCapsule_GetPointer(capsule, "BitGenerator");
    /* ps_rng mirrors bitgen_t field by field */
    return (ps_rng *)bg;
}

/* ------------------------------------------------------------------ engine */

typedef struct EngineObject {
    PyObject_HEAD
    ps_engine *e;
    modstate *st;
    PyObject *active; /* process being resumed, or NULL */
} EngineObject;

enum { EV_PENDING = 0, EV_TRIGGERED = 1, EV_PROCESSED = 2 };

typedef struct EventObject {
    PyObject_HEAD
    EngineObject *engine;
    PyObject *value;     /* NULL until triggered */
    PyObject *waiter;    /* first waiting Process (fast path), or NULL */
    PyObject *callbacks; /* further callbacks (list), or NULL */
    int64_t handle;      /* engine handle while scheduled, else -1 */
    char state, ok, defused;
} EventObject;

typedef struct ProcessObject {
    EventObject ev;
    PyObject *gen;
    PyObject *target; /* event waited on */
} ProcessObject;

static int py_dispatch(ps_engine *e, void *ctx, int64_t arg);

/* Put an event on the engine `delay` seconds from now; holds a reference. */
static int schedule(EventObject *ev, double delay, int tag)
{
    Py_INCREF(ev);
    int s = engine_schedule(ev->engine->e, delay, py_dispatch, ev->engine,
                            (int64_t)((intptr_t)ev | tag), &ev->handle);
    if (s != PS_OK) {
        Py_DECREF(ev);
        raise_status(ev->engine->st, s, "schedule");
        return -1;
    }
    return 0;
}

/* Mark triggered with a value (stolen) and schedule at now. */
static int trigger(EventObject *ev, int ok, PyObject *value)
{
    ev->ok = (char)ok;
    Py_XSETREF(ev->value, value);
    ev->state = EV_TRIGGERED;
    return schedule(ev, 0.0, 0);
}

static int add_waiter(EventObject *ev, PyObject *cb)
{
    if (ev->waiter == NULL && ev->callbacks == NULL) {
        Py_INCREF(cb);
        ev->waiter = cb;
        return 0;
    }
    if (ev->callbacks == NULL && (ev->callbacks = PyList_New(0)) == NULL) return -1;
    return PyList_Append(ev->callbacks, cb);
}

/* The pending exception, normalised, with its traceback attached; NULL if none. */
static PyObject *fetch_exception(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL) return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static int event_process(EventObject *ev);
static int process_finish(ProcessObject *p, int ok, PyObject *value);

/* Resume a process with the outcome of `ev` (NULL: start it). Loops while
 * the process yields events that have already been processed. */
static int process_resume(ProcessObject *p, EventObject *ev)
{
    EngineObject *eng = p->ev.engine;
    modstate *st = eng->st;
    PyObject *hold = NULL; /* keeps a processed event alive across iterations */
    int rc = 0;
    Py_CLEAR(p->target);
    if (p->gen == NULL) return 0; /* already finished (interrupted late) */
    PyObject *prev_active = eng->active;
    eng->active = (PyObject *)p;
    for (;;) {
        PyObject *out = NULL;
        PySendResult r;
        if (ev == NULL || ev->ok) {
            r = PyIter_Send(p->gen, ev ? ev->value : Py_None, &out);
        } else {
            ev->defused = 1;
            out = PyObject_CallMethodOneArg(p->gen, st->str_throw, ev->value);
            if (out != NULL) {
                r = PYGEN_NEXT;
            } else if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
                PyObject *exc = fetch_exception();
                out = ((PyStopIterationObject *)exc)->value;
                Py_XINCREF(out);
                if (out == NULL) out = Py_NewRef(Py_None);
                Py_DECREF(exc);
                r = PYGEN_RETURN;
            } else {
                r = PYGEN_ERROR;
            }
        }
        if (r == PYGEN_RETURN) {
            rc = process_finish(p, 1, out);
            break;
        }
        if (r == PYGEN_ERROR) {
            rc = process_finish(p, 0, fetch_exception());
            break;
        }
        if (!PyObject_TypeCheck(out, st->EventType)) {
            PyObject *repr = PyObject_Repr(out);
            PyErr_Format(PyExc_TypeError, "a process may only yield events; %R yielded %s",
                         p->gen, repr ? PyUnicode_AsUTF8(repr) : "?");
            Py_XDECREF(repr);
            Py_DECREF(out);
            rc = process_finish(p, 0, fetch_exception());
            break;
        }
        EventObject *y = (EventObject *)out;
        if (y->state == EV_PROCESSED) { /* its outcome is known: go straight on */
            Py_XSETREF(hold, out);
            ev = y;
            continue;
        }
        if (add_waiter(y, (PyObject *)p) < 0) {
            Py_DECREF(out);
            rc = -1;
            break;
        }
        p->target = out; /* steals */
        break;
    }
    eng->active = prev_active;
    Py_XDECREF(hold);
    return rc;
}

/* The generator ended: succeed or fail the Process event (value stolen). */
static int process_finish(ProcessObject *p, int ok, PyObject *value)
{
    Py_CLEAR(p->gen);
    if (value == NULL) return -1;
    if (p->ev.waiter != NULL || p->ev.callbacks != NULL) return trigger(&p->ev, ok, value);
    /* nobody waits: settle now rather than spend an engine event on it */
    p->ev.ok = (char)ok;
    Py_XSETREF(p->ev.value, value);
    p->ev.state = EV_PROCESSED;
    if (!ok) {
        PyErr_SetObject((PyObject *)Py_TYPE(value), value);
        return -1;
    }
    return 0;
}

/* Run an event's callbacks; an unhandled failure raises. */
static int event_process(EventObject *ev)
{
    PyTypeObject *ptype = ev->engine->st->ProcessType;
    PyObject *waiter = ev->waiter, *cbs = ev->callbacks;
    ev->waiter = ev->callbacks = NULL;
    ev->state = EV_PROCESSED;
    ev->handle = -1;
    int rc = 0;
    if (waiter != NULL) { /* only processes take the waiter slot */
        rc = process_resume((ProcessObject *)waiter, ev);
        Py_DECREF(waiter);
    }
    for (Py_ssize_t i = 0; rc == 0 && cbs != NULL && i < PyList_GET_SIZE(cbs); i++) {
        PyObject *cb = PyList_GET_ITEM(cbs, i);
        if (PyObject_TypeCheck(cb, ptype)) {
            if (((ProcessObject *)cb)->target == (PyObject *)ev) rc = process_resume((ProcessObject *)cb, ev);
        } else {
            PyObject *r = PyObject_CallOneArg(cb, (PyObject *)ev);
            if (r == NULL) rc = -1;
            Py_XDECREF(r);
        }
    }
    Py_XDECREF(cbs);
    if (rc == 0 && !ev->ok && !ev->defused) {
        PyErr_SetObject((PyObject *)Py_TYPE(ev->value), ev->value);
        rc = -1;
    }
    return rc;
}

static int py_dispatch(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx;
    intptr_t p = (intptr_t)arg;
    EventObject *ev = (EventObject *)(p & ~(intptr_t)1);
    int rc = (p & 1) ? process_resume((ProcessObject *)ev, NULL) : event_process(ev);
    Py_DECREF(ev);
    return rc == 0 ? PS_OK : PS_ECALLBACK;
}

static void drop_pending(ps_handler fn, void *ctx, int64_t arg)
{
    (void)ctx;
    if (fn == py_dispatch) Py_DECREF((PyObject *)((intptr_t)arg & ~(intptr_t)1));
}

/* `o` as an Engine of this module, or NULL with TypeError. */
static EngineObject *as_engine(PyTypeObject *type, PyObject *o)
{
    PyObject *m = PyType_GetModuleByDef(type, &native_module);
    if (m == NULL) return NULL;
    if (!PyObject_TypeCheck(o, get_state(m)->EngineType)) {
        PyErr_Format(PyExc_TypeError, "env: expected a Simulation, got %R", o);
        return NULL;
    }
    return (EngineObject *)o;
}

static PyObject *Engine_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args, (void)kw;
    EngineObject *self = (EngineObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->e = engine_new();
    if (self->e == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static int Engine_traverse(EngineObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->active);
    return 0;
}

static void Engine_dealloc(EngineObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->e) {
        engine_clear(self->e, drop_pending);
        engine_free(self->e);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Engine_run(EngineObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"until", "max_events", NULL};
    double until = INFINITY;
    long long max_events = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|dL:run", kwlist, &until, &max_events)) return NULL;
    if (isnan(until) || until < engine_now(self->e))
        return PyErr_Format(PyExc_ValueError, "run: until must be >= now (%g s), got %g", engine_now(self->e), until);
    int s = engine_run(self->e, until, max_events);
    if (s != PS_OK) return raise_status(self->st, s, "run");
    Py_RETURN_NONE;
}

static PyObject *Engine_step(EngineObject *self, PyObject *unused)
{
    (void)unused;
    if (engine_pending(self->e) == 0) return PyErr_Format(PyExc_IndexError, "step: no pending events");
    int s = engine_run(self->e, INFINITY, 1);
    if (s != PS_OK) return raise_status(self->st, s, "step");
    Py_RETURN_NONE;
}

static PyObject *Engine_peek(EngineObject *self, PyObject *unused)
{
    (void)unused;
    return PyFloat_FromDouble(engine_peek(self->e));
}

static PyObject *Engine_stop(EngineObject *self, PyObject *unused)
{
    (void)unused;
    engine_stop(self->e);
    Py_RETURN_NONE;
}

static EventObject *new_event(PyTypeObject *type, EngineObject *eng)
{
    EventObject *ev = (EventObject *)type->tp_alloc(type, 0);
    if (ev == NULL) return NULL;
    Py_INCREF(eng);
    ev->engine = eng;
    ev->handle = -1;
    return ev;
}

static PyObject *Engine_event(EngineObject *self, PyObject *unused)
{
    (void)unused;
    return (PyObject *)new_event(self->st->EventType, self);
}

static PyObject *make_timeout(EngineObject *eng, PyTypeObject *type, double delay, PyObject *value)
{
    if (!(delay >= 0) || isinf(delay)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%g", delay);
        return PyErr_Format(PyExc_ValueError, "timeout: delay must be a finite number of seconds >= 0, got %s", buf);
    }
    EventObject *ev = new_event(type, eng);
    if (ev == NULL) return NULL;
    ev->ok = 1;
    ev->value = Py_NewRef(value);
    ev->state = EV_TRIGGERED;
    if (schedule(ev, delay, 0) < 0) {
        Py_DECREF(ev);
        return NULL;
    }
    return (PyObject *)ev;
}

static PyObject *Engine_timeout(EngineObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *value = nargs > 1 ? args[1] : Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs < 1 || nargs + nkw > 2 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "value") != 0))
        return PyErr_Format(PyExc_TypeError, "timeout(delay, value=None)");
    if (nkw == 1) value = args[nargs];
    double delay = PyFloat_AsDouble(args[0]);
    if (delay == -1.0 && PyErr_Occurred()) return NULL;
    return make_timeout(self, self->st->TimeoutType, delay, value);
}

static PyObject *make_process(EngineObject *eng, PyTypeObject *type, PyObject *gen)
{
    if (!PyGen_Check(gen) && !PyObject_HasAttrString(gen, "send"))
        return PyErr_Format(PyExc_TypeError, "process: expected a generator, got %R", gen);
    ProcessObject *p = (ProcessObject *)new_event(type, eng);
    if (p == NULL) return NULL;
    p->gen = Py_NewRef(gen);
    if (schedule(&p->ev, 0.0, 1) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

static PyObject *Engine_process(EngineObject *self, PyObject *gen)
{
    return make_process(self, self->st->ProcessType, gen);
}

static PyObject *Engine_get_now(EngineObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(engine_now(self->e));
}
static PyObject *Engine_get_processed(EngineObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(engine_processed(self->e));
}
static PyObject *Engine_get_pending(EngineObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(engine_pending(self->e));
}
static PyObject *Engine_get_active(EngineObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->active ? self->active : Py_None);
}

static PyMethodDef Engine_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Engine_run, METH_VARARGS | METH_KEYWORDS, "Run events up to `until` seconds."},
    {"step", (PyCFunction)Engine_step, METH_NOARGS, "Process the next event."},
    {"peek", (PyCFunction)Engine_peek, METH_NOARGS, "Time of the next event, inf if none."},
    {"stop", (PyCFunction)Engine_stop, METH_NOARGS, "Make run() return after the current event."},
    {"event", (PyCFunction)Engine_event, METH_NOARGS, "A new pending Event."},
    {"timeout", (PyCFunction)(void (*)(void))Engine_timeout, METH_FASTCALL | METH_KEYWORDS, "Event due `delay` seconds from now."},
    {"process", (PyCFunction)Engine_process, METH_O, "Start a generator as a Process."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Engine_getset[] = {
    {"now", (getter)Engine_get_now, NULL, "simulated time, seconds", NULL},
    {"processed", (getter)Engine_get_processed, NULL, "events processed so far", NULL},
    {"pending", (getter)Engine_get_pending, NULL, "events waiting to run", NULL},
    {"active_process", (getter)Engine_get_active, NULL, "the process running now, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------ events */

static int Event_traverse(EventObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    Py_VISIT(self->value);
    Py_VISIT(self->waiter);
    Py_VISIT(self->callbacks);
    return 0;
}

static int Event_clear(EventObject *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->value);
    Py_CLEAR(self->waiter);
    Py_CLEAR(self->callbacks);
    return 0;
}

static void Event_dealloc(EventObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    tp->tp_clear((PyObject *)self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Event_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)kw;
    /* Python subclasses take more arguments in __init__; only env matters here */
    if (PyTuple_GET_SIZE(args) < 1) return PyErr_Format(PyExc_TypeError, "%s() needs the simulation as first argument", type->tp_name);
    PyObject *engine = PyTuple_GET_ITEM(args, 0);
    if (as_engine(type, engine) == NULL) return NULL;
    EventObject *ev = (EventObject *)type->tp_alloc(type, 0);
    if (ev == NULL) return NULL;
    ev->handle = -1;
    ev->engine = (EngineObject *)Py_NewRef(engine);
    return (PyObject *)ev;
}

static int check_engine(EventObject *self)
{
    if (self->engine == NULL || self->engine->e == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "event is not bound to a simulation");
        return -1;
    }
    return 0;
}

static PyObject *Event_succeed(EventObject *self, PyObject *args)
{
    PyObject *value = Py_None;
    if (!PyArg_ParseTuple(args, "|O:succeed", &value)) return NULL;
    if (check_engine(self) < 0) return NULL;
    if (self->state != EV_PENDING) return PyErr_Format(PyExc_RuntimeError, "%R has already been triggered", self);
    if (trigger(self, 1, Py_NewRef(value)) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *Event_fail(EventObject *self, PyObject *exc)
{
    if (!PyExceptionInstance_Check(exc)) return PyErr_Format(PyExc_TypeError, "fail: %R is not an exception instance", exc);
    if (check_engine(self) < 0) return NULL;
    if (self->state != EV_PENDING) return PyErr_Format(PyExc_RuntimeError, "%R has already been triggered", self);
    if (trigger(self, 0, Py_NewRef(exc)) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *Event_add_callback(EventObject *self, PyObject *cb)
{
    if (!PyCallable_Check(cb)) return PyErr_Format(PyExc_TypeError, "add_callback: %R is not callable", cb);
    if (self->state == EV_PROCESSED) return PyErr_Format(PyExc_RuntimeError, "%R has already been processed", self);
    /* plain callables go to the list: the waiter slot is for processes only */
    if (self->callbacks == NULL && (self->callbacks = PyList_New(0)) == NULL) return NULL;
    if (PyList_Append(self->callbacks, cb) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Event_get_triggered(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->state != EV_PENDING);
}
static PyObject *Event_get_processed(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->state == EV_PROCESSED);
}
static PyObject *Event_get_ok(EventObject *self, void *c)
{
    (void)c;
    if (self->state == EV_PENDING) return PyErr_Format(PyExc_AttributeError, "%R is not triggered yet", self);
    return PyBool_FromLong(self->ok);
}
static PyObject *Event_get_value(EventObject *self, void *c)
{
    (void)c;
    if (self->value == NULL) return PyErr_Format(PyExc_AttributeError, "value of %R is not yet available", self);
    return Py_NewRef(self->value);
}
static PyObject *Event_get_defused(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->defused);
}
static int Event_set_defused(EventObject *self, PyObject *v, void *c)
{
    (void)c;
    int t = PyObject_IsTrue(v);
    if (t < 0) return -1;
    self->defused = (char)t;
    return 0;
}
static PyObject *Event_get_callbacks(EventObject *self, void *c)
{
    (void)c;
    if (self->state == EV_PROCESSED) Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    if (self->waiter && PyList_Append(out, self->waiter) < 0) goto fail;
    for (Py_ssize_t i = 0; self->callbacks && i < PyList_GET_SIZE(self->callbacks); i++)
        if (PyList_Append(out, PyList_GET_ITEM(self->callbacks, i)) < 0) goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}
static PyObject *Event_get_engine(EventObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->engine ? (PyObject *)self->engine : Py_None);
}

static PyMethodDef Event_methods[] = {
    {"succeed", (PyCFunction)Event_succeed, METH_VARARGS, "Trigger with a value; returns the event."},
    {"fail", (PyCFunction)Event_fail, METH_O, "Trigger with an exception; returns the event."},
    {"add_callback", (PyCFunction)Event_add_callback, METH_O, "Call fn(event) when the event is processed."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Event_getset[] = {
    {"triggered", (getter)Event_get_triggered, NULL, "has an outcome (maybe not yet processed)", NULL},
    {"processed", (getter)Event_get_processed, NULL, "callbacks have run", NULL},
    {"ok", (getter)Event_get_ok, NULL, "succeeded (True) or failed (False)", NULL},
    {"value", (getter)Event_get_value, NULL, "the value or exception", NULL},
    {"defused", (getter)Event_get_defused, (setter)Event_set_defused, "a failure was handled", NULL},
    {"callbacks", (getter)Event_get_callbacks, NULL, "snapshot of waiting callbacks; None once processed", NULL},
    {"env", (getter)Event_get_engine, NULL, "the simulation", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyObject *Timeout_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "delay", "value", NULL};
    PyObject *engine, *value = Py_None;
    double delay;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|O:Timeout", kwlist, &engine, &delay, &value)) return NULL;
    if (as_engine(type, engine) == NULL) return NULL;
    return make_timeout((EngineObject *)engine, type, delay, value);
}

static PyObject *Timeout_cancel(EventObject *self, PyObject *unused)
{
    (void)unused;
    if (self->state != EV_TRIGGERED || self->handle < 0) Py_RETURN_FALSE;
    if (engine_cancel(self->engine->e, self->handle) != PS_OK) Py_RETURN_FALSE;
    self->handle = -1;
    self->state = EV_PENDING; /* will never fire */
    Py_DECREF(self);          /* the engine's reference */
    Py_RETURN_TRUE;
}

static PyMethodDef Timeout_methods[] = {
    {"cancel", (PyCFunction)Timeout_cancel, METH_NOARGS, "Withdraw the timeout; True if it was still pending."},
    {NULL, NULL, 0, NULL}};

/* ------------------------------------------------------------------ process */

static PyObject *Process_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "generator", NULL};
    PyObject *engine, *gen;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:Process", kwlist, &engine, &gen)) return NULL;
    if (as_engine(type, engine) == NULL) return NULL;
    return make_process((EngineObject *)engine, type, gen);
}

static int Process_traverse(ProcessObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->gen);
    Py_VISIT(self->target);
    return Event_traverse(&self->ev, visit, arg);
}

static int Process_clear(ProcessObject *self)
{
    Py_CLEAR(self->gen);
    Py_CLEAR(self->target);
    return Event_clear(&self->ev);
}

/* Remove `p` from the callbacks of the event it waits on. */
static int detach_from_target(ProcessObject *p)
{
    EventObject *t = (EventObject *)p->target;
    if (t == NULL) return 0;
    if (t->waiter == (PyObject *)p) {
        Py_CLEAR(t->waiter);
    } else if (t->callbacks) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(t->callbacks); i++)
            if (PyList_GET_ITEM(t->callbacks, i) == (PyObject *)p) {
                if (PySequence_DelItem(t->callbacks, i) < 0) return -1;
                break;
            }
    }
    Py_CLEAR(p->target);
    return 0;
}

static PyObject *Process_interrupt(ProcessObject *self, PyObject *args)
{
    PyObject *cause = Py_None;
    if (!PyArg_ParseTuple(args, "|O:interrupt", &cause)) return NULL;
    modstate *st = self->ev.engine->st;
    if (self->gen == NULL) return PyErr_Format(PyExc_RuntimeError, "%R has terminated and cannot be interrupted", self);
    if (self->ev.engine->active == (PyObject *)self)
        return PyErr_Format(PyExc_RuntimeError, "a process is not allowed to interrupt itself");
    PyObject *exc = PyObject_CallOneArg(st->Interrupt, cause);
    if (exc == NULL) return NULL;
    EventObject *ev = new_event(st->EventType, self->ev.engine);
    if (ev == NULL || detach_from_target(self) < 0 || add_waiter(ev, (PyObject *)self) < 0) {
        Py_XDECREF(ev);
        Py_DECREF(exc);
        return NULL;
    }
    self->target = Py_NewRef(ev);
    int rc = trigger(ev, 0, exc);
    Py_DECREF(ev);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Process_get_alive(ProcessObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->gen != NULL);
}
static PyObject *Process_get_target(ProcessObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->target ? self->target : Py_None);
}
static PyObject *Process_get_generator(ProcessObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->gen ? self->gen : Py_None);
}

static PyMethodDef Process_methods[] = {
    {"interrupt", (PyCFunction)Process_interrupt, METH_VARARGS, "Throw Interrupt(cause) into the process now."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Process_getset[] = {
    {"is_alive", (getter)Process_get_alive, NULL, "the generator has not finished", NULL},
    {"target", (getter)Process_get_target, NULL, "the event the process waits for", NULL},
    {"generator", (getter)Process_get_generator, NULL, "the generator, None once finished", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------ resource */

typedef struct ResourceObject {
    PyObject_HEAD
    EngineObject *engine;
    Py_ssize_t capacity;
    PyObject *users; /* list of granted requests */
    PyObject *queue; /* list of waiting requests, by (priority, arrival) */
    uint64_t seq;
} ResourceObject;

typedef struct RequestObject {
    EventObject ev;
    ResourceObject *resource;
    long priority;
    uint64_t seq;
} RequestObject;

static PyObject *Resource_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "capacity", NULL};
    PyObject *engine;
    Py_ssize_t capacity = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|n:Resource", kwlist, &engine, &capacity)) return NULL;
    if (as_engine(type, engine) == NULL) return NULL;
    if (capacity < 1) return PyErr_Format(PyExc_ValueError, "Resource: capacity must be >= 1, got %zd", capacity);
    ResourceObject *r = (ResourceObject *)type->tp_alloc(type, 0);
    if (r == NULL) return NULL;
    r->engine = (EngineObject *)Py_NewRef(engine);
    r->capacity = capacity;
    r->users = PyList_New(0);
    r->queue = PyList_New(0);
    if (r->users == NULL || r->queue == NULL) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static int Resource_traverse(ResourceObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    Py_VISIT(self->users);
    Py_VISIT(self->queue);
    return 0;
}

static int Resource_clear(ResourceObject *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->users);
    Py_CLEAR(self->queue);
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

static int grant(ResourceObject *r, RequestObject *req)
{
    if (PyList_Append(r->users, (PyObject *)req) < 0) return -1;
    return trigger(&req->ev, 1, Py_NewRef(Py_None));
}

static PyObject *Resource_request(ResourceObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long priority = 0;
    if (nargs > 1) return PyErr_Format(PyExc_TypeError, "request(priority=0)");
    if (nargs == 1 && (priority = PyLong_AsLong(args[0])) == -1 && PyErr_Occurred()) return NULL;
    modstate *st = self->engine->st;
    RequestObject *req = (RequestObject *)new_event(st->RequestType, self->engine);
    if (req == NULL) return NULL;
    req->resource = (ResourceObject *)Py_NewRef(self);
    req->priority = priority;
    req->seq = self->seq++;
    int rc;
    if (PyList_GET_SIZE(self->users) < self->capacity) {
        rc = grant(self, req);
    } else { /* keep the queue ordered by (priority, arrival) */
        Py_ssize_t i = PyList_GET_SIZE(self->queue);
        while (i > 0 && ((RequestObject *)PyList_GET_ITEM(self->queue, i - 1))->priority > priority) i--;
        rc = PyList_Insert(self->queue, i, (PyObject *)req);
    }
    if (rc < 0) {
        Py_DECREF(req);
        return NULL;
    }
    return (PyObject *)req;
}

static Py_ssize_t index_of(PyObject *list, PyObject *item)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (PyList_GET_ITEM(list, i) == item) return i;
    return -1;
}

static PyObject *Resource_release(ResourceObject *self, PyObject *req)
{
    Py_ssize_t i = index_of(self->users, req);
    if (i >= 0) {
        if (PySequence_DelItem(self->users, i) < 0) return NULL;
        while (PyList_GET_SIZE(self->queue) > 0 && PyList_GET_SIZE(self->users) < self->capacity) {
            PyObject *next = Py_NewRef(PyList_GET_ITEM(self->queue, 0));
            int rc = PySequence_DelItem(self->queue, 0);
            if (rc == 0) rc = grant(self, (RequestObject *)next);
            Py_DECREF(next);
            if (rc < 0) return NULL;
        }
        Py_RETURN_NONE;
    }
    if ((i = index_of(self->queue, req)) >= 0) { /* withdrawn before it was granted */
        if (PySequence_DelItem(self->queue, i) < 0) return NULL;
        Py_RETURN_NONE;
    }
    return PyErr_Format(PyExc_ValueError, "release: %R neither holds nor waits for this resource", req);
}

static PyObject *Resource_get_count(ResourceObject *self, void *c)
{
    (void)c;
    return PyLong_FromSsize_t(PyList_GET_SIZE(self->users));
}
static PyObject *Resource_get_capacity(ResourceObject *self, void *c)
{
    (void)c;
    return PyLong_FromSsize_t(self->capacity);
}
static PyObject *Resource_get_users(ResourceObject *self, void *c)
{
    (void)c;
    return PyList_AsTuple(self->users);
}
static PyObject *Resource_get_queue(ResourceObject *self, void *c)
{
    (void)c;
    return PyList_AsTuple(self->queue);
}

static PyMethodDef Resource_methods[] = {
    {"request", (PyCFunction)(void (*)(void))Resource_request, METH_FASTCALL, "Ask for a unit; yield the Request to wait."},
    {"release", (PyCFunction)Resource_release, METH_O, "Give a unit back (or withdraw a waiting request)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Resource_getset[] = {
    {"count", (getter)Resource_get_count, NULL, "units in use", NULL},
    {"capacity", (getter)Resource_get_capacity, NULL, "units in all", NULL},
    {"users", (getter)Resource_get_users, NULL, "granted requests", NULL},
    {"queue", (getter)Resource_get_queue, NULL, "waiting requests, in service order", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static int Request_traverse(RequestObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->resource);
    return Event_traverse(&self->ev, visit, arg);
}

static int Request_clear(RequestObject *self)
{
    Py_CLEAR(self->resource);
    return Event_clear(&self->ev);
}

static PyObject *Request_enter(RequestObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *Request_exit(RequestObject *self, PyObject *args)
{
    (void)args;
    if (self->resource == NULL) Py_RETURN_FALSE;
    PyObject *r = Resource_release(self->resource, (PyObject *)self);
    if (r == NULL) {
        /* already released inside the block: nothing to do */
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
        PyErr_Clear();
    }
    Py_XDECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *Request_get_priority(RequestObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(self->priority);
}
static PyObject *Request_get_resource(RequestObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->resource ? (PyObject *)self->resource : Py_None);
}

static PyMethodDef Request_methods[] = {
    {"__enter__", (PyCFunction)Request_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Request_exit, METH_VARARGS, "Release (or withdraw) the request."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Request_getset[] = {
    {"priority", (getter)Request_get_priority, NULL, "smaller is served first", NULL},
    {"resource", (getter)Request_get_resource, NULL, "the resource asked for", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------ station */

typedef struct StationObject {
    PyObject_HEAD
    EngineObject *engine;
    station *s;
    PyObject *jobs; /* job id -> Event waiting for the departure */
    int64_t next_job;
} StationObject;

static int station_departed(void *ctx, ps_engine *e, int64_t job, double arrival_s, int32_t klass)
{
    (void)klass;
    StationObject *self = ctx;
    PyObject *key = PyLong_FromLongLong(job);
    if (key == NULL) return PS_ECALLBACK;
    PyObject *ev = PyDict_GetItemWithError(self->jobs, key);
    int rc = -1;
    if (ev != NULL) {
        Py_INCREF(ev);
        if (PyDict_DelItem(self->jobs, key) == 0)
            rc = trigger((EventObject *)ev, 1, PyFloat_FromDouble(engine_now(e) - arrival_s));
        Py_DECREF(ev);
    }
    Py_DECREF(key);
    return rc == 0 ? PS_OK : PS_ECALLBACK;
}

static PyObject *Station_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "servers", "discipline", "select_address", NULL};
    PyObject *engine;
    int servers, discipline;
    unsigned long long address = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oii|K:Station", kwlist, &engine, &servers, &discipline, &address))
        return NULL;
    if (as_engine(type, engine) == NULL) return NULL;
    StationObject *self = (StationObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->engine = (EngineObject *)Py_NewRef(engine);
    self->jobs = PyDict_New();
    if (self->jobs == NULL) goto fail;
    self->s = station_new(self->engine->e, servers, (station_discipline)discipline,
                          (station_select_fn)(uintptr_t)address);
    if (self->s == NULL) {
        PyErr_Format(PyExc_ValueError, "Station: invalid servers=%d or discipline=%d (or custom without select)", servers, discipline);
        goto fail;
    }
    station_on_depart(self->s, station_departed, self);
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static int Station_traverse(StationObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    Py_VISIT(self->jobs);
    return 0;
}

static int Station_clear(StationObject *self)
{
    Py_CLEAR(self->jobs);
    return 0;
}

static void Station_dealloc(StationObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    station_free(self->s); /* cancels its pending completion */
    Py_CLEAR(self->jobs);
    Py_CLEAR(self->engine);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Station_serve(StationObject *self, PyObject *args)
{
    double service;
    int klass = 0;
    if (!PyArg_ParseTuple(args, "d|i:serve", &service, &klass)) return NULL;
    if (!(service >= 0) || isinf(service))
        return PyErr_Format(PyExc_ValueError, "serve: service_s must be a finite number of seconds >= 0, got %S", PyTuple_GET_ITEM(args, 0));
    EventObject *ev = new_event(self->engine->st->EventType, self->engine);
    if (ev == NULL) return NULL;
    PyObject *key = PyLong_FromLongLong(self->next_job);
    if (key == NULL || PyDict_SetItem(self->jobs, key, (PyObject *)ev) < 0) goto fail;
    int s = station_arrive(self->s, self->next_job++, service, klass);
    if (s != PS_OK) {
        PyDict_DelItem(self->jobs, key);
        raise_status(self->engine->st, s, "serve");
        goto fail;
    }
    Py_DECREF(key);
    return (PyObject *)ev;
fail:
    Py_XDECREF(key);
    Py_DECREF(ev);
    return NULL;
}

static PyObject *stats_dict(const station_stats *s, double now, int32_t servers)
{
    double window = now - s->since_s;
    return Py_BuildValue("{s:K,s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:d}", "arrivals", (unsigned long long)s->arrivals,
                         "departures", (unsigned long long)s->departures, "window_s", window,
                         "utilization", window > 0 ? s->busy_integral / (window * servers) : 0.0,
                         "mean_number", window > 0 ? s->number_integral / window : 0.0,
                         "mean_response_s", s->departures ? s->response_sum / (double)s->departures : NAN,
                         "mean_wait_s", s->departures ? s->wait_sum / (double)s->departures : NAN,
                         "response_sumsq", s->response_sumsq, "max_number", (long long)s->max_number,
                         "busy_server_s", s->busy_integral);
}

static PyObject *Station_stats(StationObject *self, PyObject *unused)
{
    (void)unused;
    return stats_dict(station_get_stats(self->s), engine_now(self->engine->e), station_servers(self->s));
}

static PyObject *Station_reset_stats(StationObject *self, PyObject *unused)
{
    (void)unused;
    station_reset_stats(self->s);
    Py_RETURN_NONE;
}

static PyObject *Station_log_enable(StationObject *self, PyObject *unused)
{
    (void)unused;
    int s = station_log_enable(self->s);
    if (s != PS_OK) return raise_status(self->engine->st, s, "log_enable");
    Py_RETURN_NONE;
}

static PyObject *Station_log(StationObject *self, PyObject *unused)
{
    (void)unused;
    const double *t;
    const int64_t *n;
    int64_t len = station_log(self->s, &t, &n);
    return Py_BuildValue("(y#y#)", (const char *)t, (Py_ssize_t)(len * 8), (const char *)n, (Py_ssize_t)(len * 8));
}

static PyObject *Station_get_number(StationObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(station_number(self->s));
}

static PyMethodDef Station_methods[] = {
    {"serve", (PyCFunction)Station_serve, METH_VARARGS, "Queue a job of service_s seconds; the Event fires at departure with the response time."},
    {"stats", (PyCFunction)Station_stats, METH_NOARGS, "Statistics over the current window."},
    {"reset_stats", (PyCFunction)Station_reset_stats, METH_NOARGS, "Start a new statistics window now."},
    {"log_enable", (PyCFunction)Station_log_enable, METH_NOARGS, "Record (time, jobs present) at every change."},
    {"log", (PyCFunction)Station_log, METH_NOARGS, "The recorded (times, numbers) as raw float64 and int64 bytes."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Station_getset[] = {
    {"number", (getter)Station_get_number, NULL, "jobs present", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------ ps_link */

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
    EngineObject *engine;
    ps_link *l;
} LinkObject;

static PyObject *Link_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "eth", NULL};
    PyObject *engine, *eth;
    eth_params p;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!:Link", kwlist, &engine, &PyTuple_Type, &eth)) return NULL;
    if (as_engine(type, engine) == NULL) return NULL;
    if (parse_eth(eth, &p) < 0) return NULL;
    LinkObject *self = (LinkObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->engine = (EngineObject *)Py_NewRef(engine);
    self->l = link_new(self->engine->e, &p);
    if (self->l == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static int Link_traverse(LinkObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    return 0;
}

static void Link_dealloc(LinkObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    link_free(self->l);
    Py_CLEAR(self->engine);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Link_send(LinkObject *self, PyObject *arg)
{
    unsigned long long nbytes = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    EventObject *ev = new_event(self->engine->st->EventType, self->engine);
    if (ev == NULL) return NULL;
    double arrive;
    ev->ok = 1;
    ev->state = EV_TRIGGERED;
    Py_INCREF(ev); /* the engine's reference, released by py_dispatch */
    int s = link_send(self->l, nbytes, py_dispatch, self->engine, (int64_t)(intptr_t)ev, &arrive);
    if (s != PS_OK) {
        Py_DECREF(ev);
        Py_DECREF(ev);
        return raise_status(self->engine->st, s, "send");
    }
    ev->value = PyFloat_FromDouble(arrive);
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

/* ------------------------------------------------------------------ cache and TLB */

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

/* ------------------------------------------------------------------ disk */

typedef struct DiskObject {
    PyObject_HEAD
    disk *d;
} DiskObject;

static PyObject *Disk_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cylinders", "heads", "sector_bytes", "rpm", "zones", "seek_boundary_cyl", "seek_a_s",
                             "seek_b_s", "seek_c_s", "seek_e_s", "head_switch_s", "overhead_s", "bus_bytes_per_s",
                             "buffer_sectors", NULL};
    disk_geom g;
    PyObject *zones;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "IIIdOddddddddI:Disk", kwlist, &g.cylinders, &g.heads, &g.sector_bytes,
                                     &g.rpm, &zones, &g.seek_boundary_cyl, &g.seek_a_s, &g.seek_b_s, &g.seek_c_s,
                                     &g.seek_e_s, &g.head_switch_s, &g.overhead_s, &g.bus_bytes_per_s, &g.buffer_sectors))
        return NULL;
    PyObject *seq = PySequence_Fast(zones, "zones: expected a sequence of (first_cyl, sectors_per_track)");
    if (seq == NULL) return NULL;
    Py_ssize_t nz = PySequence_Fast_GET_SIZE(seq);
    disk_zone *z = PyMem_Calloc((size_t)(nz ? nz : 1), sizeof *z);
    DiskObject *self = NULL;
    if (z == NULL) goto done;
    for (Py_ssize_t i = 0; i < nz; i++)
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "II;zone: (first_cyl, sectors_per_track)", &z[i].first_cyl, &z[i].sectors_per_track))
            goto done;
    g.nzones = (uint32_t)nz;
    g.zones = z;
    if (disk_geom_check(&g) != PS_OK) {
        PyErr_SetString(PyExc_ValueError, "Disk: inconsistent geometry (zones must start at cylinder 0 and increase; counts and rates > 0; times >= 0)");
        goto done;
    }
    self = (DiskObject *)type->tp_alloc(type, 0);
    if (self == NULL) goto done;
    self->d = disk_new(&g);
    if (self->d == NULL) {
        Py_CLEAR(self);
        PyErr_NoMemory();
    }
done:
    PyMem_Free(z);
    Py_DECREF(seq);
    return (PyObject *)self;
}

static void Disk_dealloc(DiskObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    disk_free(self->d);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *Disk_run(DiskObject *self, PyObject *args)
{
    int sched;
    PyObject *o[10];
    if (!PyArg_ParseTuple(args, "iOOOOOOOOOO:run", &sched, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9]))
        return NULL;
    static const char *names[10] = {"arrival_s", "lba", "sectors", "write", "start_s", "finish_s", "seek_s", "rotation_s", "transfer_s", "buffer_hit"};
    static const Py_ssize_t sizes[10] = {8, 8, 4, 1, 8, 8, 8, 8, 8, 1};
    static const char *codes[10] = {"d", "QL", "I", "B?", "d", "d", "d", "d", "d", "B?"};
    Py_buffer b[10];
    int got = 0, status = PS_OK;
    Py_ssize_t n = -1;
    for (; got < 10; got++) {
        if (get_buffer(o[got], &b[got], sizes[got], codes[got], got >= 4, names[got]) < 0) break;
        Py_ssize_t len = b[got].len / sizes[got];
        if (n >= 0 && len != n) {
            PyErr_Format(PyExc_ValueError, "%s: length %zd, expected %zd", names[got], len, n);
            got++;
            break;
        }
        n = len;
    }
    if (got == 10 && !PyErr_Occurred()) {
        disk_batch batch = {n, b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[6].buf, b[7].buf, b[8].buf, b[9].buf};
        Py_BEGIN_ALLOW_THREADS
        status = disk_run(self->d, (disk_sched)sched, &batch);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    if (PyErr_Occurred()) return NULL;
    if (status == PS_EINVAL)
        return PyErr_Format(PyExc_ValueError, "disk run: arrivals must be sorted and >= 0, sectors >= 1, LBAs within the %llu-sector disk, scheduler in 0..3",
                            (unsigned long long)disk_capacity_sectors(self->d));
    if (status != PS_OK) return PyErr_Format(PyExc_RuntimeError, "disk run: %s", ps_strerror(status));
    Py_RETURN_NONE;
}

static PyObject *Disk_seek_time(DiskObject *self, PyObject *arg)
{
    unsigned long d = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred()) return NULL;
    return PyFloat_FromDouble(disk_seek_time(self->d, (uint32_t)d));
}

static PyObject *Disk_locate(DiskObject *self, PyObject *arg)
{
    unsigned long long lba = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    uint32_t c, h, s, n;
    if (disk_locate(self->d, lba, &c, &h, &s, &n) != PS_OK)
        return PyErr_Format(PyExc_ValueError, "locate: lba %llu past the end (%llu sectors)", lba, (unsigned long long)disk_capacity_sectors(self->d));
    return Py_BuildValue("(IIII)", c, h, s, n);
}

static PyObject *Disk_reset(DiskObject *self, PyObject *unused)
{
    (void)unused;
    disk_reset(self->d);
    Py_RETURN_NONE;
}

static PyObject *Disk_get_capacity(DiskObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(disk_capacity_sectors(self->d));
}

static PyMethodDef Disk_methods[] = {
    {"run", (PyCFunction)Disk_run, METH_VARARGS, "run(sched, arrival_s, lba, sectors, write, start_s, finish_s, seek_s, rotation_s, transfer_s, buffer_hit)"},
    {"seek_time", (PyCFunction)Disk_seek_time, METH_O, "Seek time in seconds for a distance in cylinders."},
    {"locate", (PyCFunction)Disk_locate, METH_O, "(cylinder, head, sector, sectors_per_track) of an LBA."},
    {"reset", (PyCFunction)Disk_reset, METH_NOARGS, "Head to cylinder 0, buffer empty, clock 0."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Disk_getset[] = {
    {"capacity_sectors", (getter)Disk_get_capacity, NULL, "sectors on the disk", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------ open networks */

static PyObject *qnet_result_dict(const qnet_result *r)
{
    return Py_BuildValue("{s:L,s:d,s:d,s:d,s:d,s:d,s:K}", "departures", (long long)r->departures, "sojourn_sum_s",
                         r->sojourn_sum, "sojourn_sumsq", r->sojourn_sumsq, "number_integral", r->number_integral,
                         "window_s", r->window_s, "throughput", r->throughput, "events", (unsigned long long)r->events);
}

static PyObject *py_qnet_run(PyObject *m, PyObject *args)
{
    Py_buffer sv, mu, lam, rt = {0}, dis;
    PyObject *sv_o, *mu_o, *lam_o, *rt_o, *dis_o, *capsule;
    long long departures, warmup;
    if (!PyArg_ParseTuple(args, "OOOOOLLO:qnet_run", &sv_o, &mu_o, &lam_o, &rt_o, &dis_o, &departures, &warmup, &capsule))
        return NULL;
    modstate *st = get_state(m);
    ps_rng *rng = rng_from_capsule(capsule);
    if (rng == NULL) return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "qnet_run needs a bit generator");
    if (get_buffer(sv_o, &sv, 4, "i", 0, "servers") < 0) return NULL;
    PyObject *result = NULL;
    int have_mu = 0, have_lam = 0, have_dis = 0;
    if (get_buffer(mu_o, &mu, 8, "d", 0, "service_rate") < 0) goto done;
    have_mu = 1;
    if (get_buffer(lam_o, &lam, 8, "d", 0, "arrival_rate") < 0) goto done;
    have_lam = 1;
    if (get_buffer(dis_o, &dis, 4, "i", 0, "discipline") < 0) goto done;
    have_dis = 1;
    if (rt_o != Py_None && get_buffer(rt_o, &rt, 8, "d", 0, "route") < 0) goto done;
    Py_ssize_t K = sv.len / 4;
    if (mu.len / 8 != K || lam.len / 8 != K || dis.len / 4 != K || (rt.obj && rt.len / 8 != K * K)) {
        PyErr_Format(PyExc_ValueError, "qnet_run: per-station arrays must have %zd entries and route %zd", K, K * K);
        goto done;
    }
    qnet_spec spec = {(int32_t)K, sv.buf, dis.buf, mu.buf, lam.buf, rt.obj ? rt.buf : NULL, departures, warmup};
    qnet_result res;
    station_stats *ss = PyMem_Calloc((size_t)(K ? K : 1), sizeof *ss);
    if (ss == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int s;
    Py_BEGIN_ALLOW_THREADS
    s = qnet_run(&spec, rng, &res, ss);
    Py_END_ALLOW_THREADS
    if (s != PS_OK) {
        PyMem_Free(ss);
        raise_status(st, s, "qnet_run");
        goto done;
    }
    PyObject *stations = PyList_New(K);
    for (Py_ssize_t k = 0; stations && k < K; k++) {
        int32_t servers = ((int32_t *)sv.buf)[k];
        PyObject *d = stats_dict(&ss[k], ss[k].since_s + res.window_s, servers);
        if (d == NULL) Py_CLEAR(stations);
        else PyList_SET_ITEM(stations, k, d);
    }
    PyMem_Free(ss);
    if (stations == NULL) goto done;
    result = qnet_result_dict(&res);
    if (result == NULL || PyDict_SetItemString(result, "stations", stations) < 0) Py_CLEAR(result);
    Py_DECREF(stations);
done:
    PyBuffer_Release(&sv);
    if (have_mu) PyBuffer_Release(&mu);
    if (have_lam) PyBuffer_Release(&lam);
    if (have_dis) PyBuffer_Release(&dis);
    if (rt.obj) PyBuffer_Release(&rt);
    return result;
}

static PyObject *py_qnet_run_trace(PyObject *m, PyObject *args)
{
    PyObject *ia_o, *sv_o;
    int servers, discipline;
    Py_buffer ia, sv;
    if (!PyArg_ParseTuple(args, "OOii:qnet_run_trace", &ia_o, &sv_o, &servers, &discipline)) return NULL;
    if (get_buffer(ia_o, &ia, 8, "d", 0, "interarrival") < 0) return NULL;
    if (get_buffer(sv_o, &sv, 8, "d", 0, "service") < 0) {
        PyBuffer_Release(&ia);
        return NULL;
    }
    PyObject *result = NULL;
    if (ia.len != sv.len || ia.len == 0) {
        PyErr_Format(PyExc_ValueError, "qnet_run_trace: interarrival and service must be non-empty and of equal length (%zd, %zd)", ia.len / 8, sv.len / 8);
    } else {
        qnet_result res;
        station_stats ss;
        int s;
        Py_BEGIN_ALLOW_THREADS
        s = qnet_run_trace(servers, (station_discipline)discipline, ia.buf, sv.buf, ia.len / 8, &res, &ss);
        Py_END_ALLOW_THREADS
        if (s != PS_OK) {
            raise_status(get_state(m), s, "qnet_run_trace");
        } else {
            result = qnet_result_dict(&res);
            PyObject *d = stats_dict(&ss, ss.since_s + res.window_s, servers);
            if (result && (d == NULL || PyDict_SetItemString(result, "station", d) < 0)) Py_CLEAR(result);
            Py_XDECREF(d);
        }
    }
    PyBuffer_Release(&ia);
    PyBuffer_Release(&sv);
    return result;
}


/* ------------------------------------------------------------------ then vs now */

/* Map a measurement's status: PS_ESTATE becomes None (facility missing), errors raise. */
static PyObject *measured(modstate *st, int status, double value, const char *what)
{
    if (status == PS_OK) return PyFloat_FromDouble(value);
    if (status == PS_ESTATE) Py_RETURN_NONE;
    return raise_status(st, status, what);
}

static PyObject *py_measure_basic(PyObject *m, PyObject *args)
{
    (void)m;
    long long calls;
    int tries;
    if (!PyArg_ParseTuple(args, "Li:measure_basic", &calls, &tries)) return NULL;
    double sc, res;
    Py_BEGIN_ALLOW_THREADS
    sc = measure_syscall(calls);
    res = measure_timer_resolution(tries);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("{s:d,s:d}", "syscall_s", sc, "timer_resolution_s", res);
}

static PyObject *py_measure_memcpy(PyObject *m, PyObject *args)
{
    Py_ssize_t bytes;
    int reps, s;
    double v = 0;
    if (!PyArg_ParseTuple(args, "ni:measure_memcpy", &bytes, &reps)) return NULL;
    if (bytes <= 0) return PyErr_Format(PyExc_ValueError, "bytes must be > 0, got %zd", bytes);
    Py_BEGIN_ALLOW_THREADS
    s = measure_memcpy((size_t)bytes, reps, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_memcpy");
}

static PyObject *py_measure_udp_rtt(PyObject *m, PyObject *args)
{
    Py_ssize_t size;
    int iters, s;
    double v = 0;
    if (!PyArg_ParseTuple(args, "ni:measure_udp_rtt", &size, &iters)) return NULL;
    if (size < 1 || size > 65000) return PyErr_Format(PyExc_ValueError, "size must be in [1, 65000] bytes, got %zd", size);
    Py_BEGIN_ALLOW_THREADS
    s = measure_udp_rtt((size_t)size, iters, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_udp_rtt");
}

static PyObject *py_measure_tcp_throughput(PyObject *m, PyObject *args)
{
    Py_ssize_t total, chunk;
    int rcvbuf, s;
    double v = 0;
    if (!PyArg_ParseTuple(args, "nni:measure_tcp_throughput", &total, &chunk, &rcvbuf)) return NULL;
    if (total <= 0 || chunk <= 0) return PyErr_Format(PyExc_ValueError, "total and chunk must be > 0 bytes");
    Py_BEGIN_ALLOW_THREADS
    s = measure_tcp_throughput((size_t)total, (size_t)chunk, rcvbuf, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_tcp_throughput");
}

static PyObject *py_measure_event_wait(PyObject *m, PyObject *args)
{
    int mech, idle, active, calls, s;
    double v = 0;
    if (!PyArg_ParseTuple(args, "iiii:measure_event_wait", &mech, &idle, &active, &calls)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    s = measure_event_wait(mech, idle, active, calls, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_event_wait");
}

static PyObject *py_measure_pread(PyObject *m, PyObject *args)
{
    int fd, n, uring, s;
    Py_ssize_t size;
    double v = 0;
    if (!PyArg_ParseTuple(args, "iinp:measure_pread", &fd, &n, &size, &uring)) return NULL;
    if (size <= 0) return PyErr_Format(PyExc_ValueError, "size must be > 0 bytes, got %zd", size);
    Py_BEGIN_ALLOW_THREADS
    s = uring ? measure_pread_uring(fd, n, (size_t)size, &v) : measure_pread_single(fd, n, (size_t)size, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_pread");
}

static PyObject *py_measure_copy(PyObject *m, PyObject *args)
{
    int src, dst, zero, s;
    Py_ssize_t bytes, chunk;
    double v = 0;
    if (!PyArg_ParseTuple(args, "iinnp:measure_copy", &src, &dst, &bytes, &chunk, &zero)) return NULL;
    if (bytes <= 0 || chunk <= 0) return PyErr_Format(PyExc_ValueError, "bytes and chunk must be > 0");
    Py_BEGIN_ALLOW_THREADS
    s = zero ? measure_copy_file_range(src, dst, (size_t)bytes, &v)
             : measure_copy_readwrite(src, dst, (size_t)bytes, (size_t)chunk, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_copy");
}

static PyObject *py_measure_access(PyObject *m, PyObject *args)
{
    Py_ssize_t bytes;
    long long accesses;
    int random, huge, s;
    unsigned long long seed;
    double v = 0;
    if (!PyArg_ParseTuple(args, "nLppK:measure_access", &bytes, &accesses, &random, &huge, &seed)) return NULL;
    if (bytes < 4096) return PyErr_Format(PyExc_ValueError, "bytes must be >= 4096, got %zd", bytes);
    Py_BEGIN_ALLOW_THREADS
    s = measure_access((size_t)bytes, accesses, random, huge, seed, &v);
    Py_END_ALLOW_THREADS
    return measured(get_state(m), s, v, "measure_access");
}

/* ------------------------------------------------------------------ module */

static PyMethodDef module_methods[] = {
    {"qnet_run", py_qnet_run, METH_VARARGS, "qnet_run(servers, service_rate, arrival_rate, route, discipline, departures, warmup, capsule) -> dict"},
    {"qnet_run_trace", py_qnet_run_trace, METH_VARARGS, "qnet_run_trace(interarrival, service, servers, discipline) -> dict"},
    {"eth_timing", py_eth_timing, METH_VARARGS, "eth_timing(eth_tuple, nbytes) -> dict of frame counts and times"},
    {"measure_basic", py_measure_basic, METH_VARARGS, "measure_basic(calls, tries) -> syscall cost, timer resolution"},
    {"measure_memcpy", py_measure_memcpy, METH_VARARGS, "measure_memcpy(bytes, reps) -> bytes/s"},
    {"measure_udp_rtt", py_measure_udp_rtt, METH_VARARGS, "measure_udp_rtt(size, iters) -> seconds or None"},
    {"measure_tcp_throughput", py_measure_tcp_throughput, METH_VARARGS, "measure_tcp_throughput(total, chunk, rcvbuf) -> bytes/s or None"},
    {"measure_event_wait", py_measure_event_wait, METH_VARARGS, "measure_event_wait(mech, idle, active, calls) -> s/call or None"},
    {"measure_pread", py_measure_pread, METH_VARARGS, "measure_pread(fd, n, size, uring) -> seconds or None"},
    {"measure_copy", py_measure_copy, METH_VARARGS, "measure_copy(src, dst, bytes, chunk, zero_copy) -> bytes/s or None"},
    {"measure_access", py_measure_access, METH_VARARGS, "measure_access(bytes, accesses, random, huge, seed) -> s/access or None"},
    {NULL, NULL, 0, NULL}};

#define SLOTS_COMMON(dealloc, traverse, clear) \
    {Py_tp_dealloc, (void *)(dealloc)}, {Py_tp_traverse, (void *)(traverse)}, {Py_tp_clear, (void *)(clear)}

static PyType_Slot Engine_slots[] = {{Py_tp_new, Engine_new_with_state}, {Py_tp_dealloc, Engine_dealloc},
                                     {Py_tp_traverse, Engine_traverse}, {Py_tp_methods, Engine_methods},
                                     {Py_tp_getset, Engine_getset}, {Py_tp_doc, "Simulated clock and pending events; the loop runs in C."},
                                     {0, NULL}};
static PyType_Slot Event_slots[] = {{Py_tp_new, Event_new}, SLOTS_COMMON(Event_dealloc, Event_traverse, Event_clear),
                                    {Py_tp_methods, Event_methods}, {Py_tp_getset, Event_getset},
                                    {Py_tp_doc, "Something that happens at a simulated time."}, {0, NULL}};
static PyType_Slot Timeout_slots[] = {{Py_tp_new, Timeout_new}, SLOTS_COMMON(Event_dealloc, Event_traverse, Event_clear), {Py_tp_methods, Timeout_methods},
                                      {Py_tp_doc, "An event due after a delay."}, {0, NULL}};
static PyType_Slot Process_slots[] = {{Py_tp_new, Process_new}, SLOTS_COMMON(Event_dealloc, Process_traverse, Process_clear),
                                      {Py_tp_methods, Process_methods}, {Py_tp_getset, Process_getset},
                                      {Py_tp_doc, "A generator driven by the events it yields; fires when it ends."}, {0, NULL}};
static PyType_Slot Resource_slots[] = {{Py_tp_new, Resource_new}, SLOTS_COMMON(Resource_dealloc, Resource_traverse, Resource_clear),
                                       {Py_tp_methods, Resource_methods}, {Py_tp_getset, Resource_getset},
                                       {Py_tp_doc, "capacity units granted in (priority, arrival) order."}, {0, NULL}};
static PyType_Slot Request_slots[] = {SLOTS_COMMON(Event_dealloc, Request_traverse, Request_clear),
                                      {Py_tp_methods, Request_methods}, {Py_tp_getset, Request_getset},
                                      {Py_tp_doc, "A request for a Resource unit; fires when granted."}, {0, NULL}};
static PyType_Slot Station_slots[] = {{Py_tp_new, Station_new}, SLOTS_COMMON(Station_dealloc, Station_traverse, Station_clear),
                                      {Py_tp_methods, Station_methods}, {Py_tp_getset, Station_getset},
                                      {Py_tp_doc, "A C queueing station on the simulation's loop."}, {0, NULL}};
static PyType_Slot Link_slots[] = {{Py_tp_new, Link_new}, {Py_tp_dealloc, Link_dealloc}, {Py_tp_traverse, Link_traverse},
                                   {Py_tp_methods, Link_methods}, {Py_tp_doc, "A FIFO Ethernet medium on the simulation's loop."}, {0, NULL}};
static PyType_Slot Cache_slots[] = {{Py_tp_new, Cache_new}, {Py_tp_dealloc, Assoc_dealloc}, {Py_tp_methods, Cache_methods},
                                    {Py_tp_doc, "Set-associative cache simulator."}, {0, NULL}};
static PyType_Slot Tlb_slots[] = {{Py_tp_new, Tlb_new}, {Py_tp_dealloc, Assoc_dealloc}, {Py_tp_methods, Tlb_methods},
                                  {Py_tp_doc, "Multi-page-size TLB simulator."}, {0, NULL}};
static PyType_Slot Disk_slots[] = {{Py_tp_new, Disk_new}, {Py_tp_dealloc, Disk_dealloc}, {Py_tp_methods, Disk_methods},
                                   {Py_tp_getset, Disk_getset}, {Py_tp_doc, "Mechanical disk model."}, {0, NULL}};

#define GC_BASE (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC)
static PyType_Spec Engine_spec = {"pysim._native.Engine", sizeof(EngineObject), 0, GC_BASE, Engine_slots};
static PyType_Spec Event_spec = {"pysim._native.Event", sizeof(EventObject), 0, GC_BASE, Event_slots};
static PyType_Spec Timeout_spec = {"pysim._native.Timeout", sizeof(EventObject), 0, GC_BASE, Timeout_slots};
static PyType_Spec Process_spec = {"pysim._native.Process", sizeof(ProcessObject), 0, GC_BASE, Process_slots};
static PyType_Spec Resource_spec = {"pysim._native.Resource", sizeof(ResourceObject), 0, GC_BASE, Resource_slots};
static PyType_Spec Request_spec = {"pysim._native.Request", sizeof(RequestObject), 0, GC_BASE, Request_slots};
static PyType_Spec Station_spec = {"pysim._native.Station", sizeof(StationObject), 0, GC_BASE, Station_slots};
static PyType_Spec Link_spec = {"pysim._native.Link", sizeof(LinkObject), 0, GC_BASE, Link_slots};
static PyType_Spec Cache_spec = {"pysim._native.Cache", sizeof(AssocObject), 0, Py_TPFLAGS_DEFAULT, Cache_slots};
static PyType_Spec Tlb_spec = {"pysim._native.TLB", sizeof(AssocObject), 0, Py_TPFLAGS_DEFAULT, Tlb_slots};
static PyType_Spec Disk_spec = {"pysim._native.Disk", sizeof(DiskObject), 0, Py_TPFLAGS_DEFAULT, Disk_slots};

static PyTypeObject *add_type(PyObject *m, PyType_Spec *spec, PyObject *base)
{
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, base);
    if (t == NULL) return NULL;
    if (PyModule_AddType(m, t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}


static int module_exec(PyObject *m)
{
    modstate *st = get_state(m);
    PyObject *errors = PyImport_ImportModule("pysim.errors");
    if (errors == NULL) return -1;
    PyObject *base = PyObject_GetAttrString(errors, "PysimError");
    PyObject *interrupt_base = PyObject_GetAttrString(errors, "Interrupt");
    Py_DECREF(errors);
    if (base == NULL || interrupt_base == NULL) return -1;
    st->NativeError = PyErr_NewExceptionWithDoc("pysim._native.NativeError", "A C core call failed.", base, NULL);
    Py_DECREF(base);
    st->Interrupt = interrupt_base; /* defined in Python so it can carry a cause */
    if (st->NativeError == NULL || PyModule_AddObjectRef(m, "NativeError", st->NativeError) < 0) return -1;
    if ((st->str_throw = PyUnicode_InternFromString("throw")) == NULL) return -1;
    if ((st->EngineType = add_type(m, &Engine_spec, NULL)) == NULL) return -1;
    if ((st->EventType = add_type(m, &Event_spec, NULL)) == NULL) return -1;
    if ((st->TimeoutType = add_type(m, &Timeout_spec, (PyObject *)st->EventType)) == NULL) return -1;
    if ((st->ProcessType = add_type(m, &Process_spec, (PyObject *)st->EventType)) == NULL) return -1;
    if ((st->ResourceType = add_type(m, &Resource_spec, NULL)) == NULL) return -1;
    if ((st->RequestType = add_type(m, &Request_spec, (PyObject *)st->EventType)) == NULL) return -1;
    if ((st->StationType = add_type(m, &Station_spec, NULL)) == NULL) return -1;
    if ((st->LinkType = add_type(m, &Link_spec, NULL)) == NULL) return -1;
    if ((st->CacheType = add_type(m, &Cache_spec, NULL)) == NULL) return -1;
    if ((st->TlbType = add_type(m, &Tlb_spec, NULL)) == NULL) return -1;
    if ((st->DiskType = add_type(m, &Disk_spec, NULL)) == NULL) return -1;
    if (PyModule_AddIntConstant(m, "TLB_MAX_SHIFT", TLB_MAX_SHIFT) < 0) return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    modstate *st = get_state(m);
    Py_VISIT(st->NativeError);
    Py_VISIT(st->Interrupt);
    Py_VISIT(st->EngineType);
    Py_VISIT(st->EventType);
    Py_VISIT(st->TimeoutType);
    Py_VISIT(st->ProcessType);
    Py_VISIT(st->ResourceType);
    Py_VISIT(st->RequestType);
    Py_VISIT(st->StationType);
    Py_VISIT(st->LinkType);
    Py_VISIT(st->CacheType);
    Py_VISIT(st->TlbType);
    Py_VISIT(st->DiskType);
    return 0;
}

static int module_clear(PyObject *m)
{
    modstate *st = get_state(m);
    Py_CLEAR(st->NativeError);
    Py_CLEAR(st->Interrupt);
    Py_CLEAR(st->EngineType);
    Py_CLEAR(st->EventType);
    Py_CLEAR(st->TimeoutType);
    Py_CLEAR(st->ProcessType);
    Py_CLEAR(st->ResourceType);
    Py_CLEAR(st->RequestType);
    Py_CLEAR(st->StationType);
    Py_CLEAR(st->LinkType);
    Py_CLEAR(st->CacheType);
    Py_CLEAR(st->TlbType);
    Py_CLEAR(st->DiskType);
    Py_CLEAR(st->str_throw);
    return 0;
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

static struct PyModuleDef native_module = {PyModuleDef_HEAD_INIT, "_native", "CPython binding for the pysim C core.",
                                           sizeof(modstate), module_methods, module_slots, module_traverse,
                                           module_clear, NULL};

static PyObject *Engine_new_with_state(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *m = PyType_GetModuleByDef(type, &native_module);
    if (m == NULL) return NULL;
    EngineObject *self = (EngineObject *)Engine_new(type, args, kw);
    if (self != NULL) self->st = get_state(m);
    return (PyObject *)self;
}

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&native_module); }
