/* event.c -- Event and Timeout: outcomes, callbacks, and what processing does.
 *
 *     class Event:
 *         def __init__(self, env)
 *         env; callbacks: list | None; triggered; processed; ok; value; defused
 *         def succeed(self, value=None) -> Event
 *         def fail(self, exception) -> Event
 *         def trigger(self, event) -> None    # take event's outcome (a callback)
 *         def __and__(self, other) -> Condition
 *         def __or__(self, other) -> Condition
 *     class Timeout(Event):
 *         def __init__(self, env, delay, value=None)
 *
 * The callbacks list is made only when asked for (a process waiting alone
 * on an event needs none); `event.callbacks` is the real list, so appending
 * to it works as in SimPy. */
#include "kernel.h"

#include <math.h>
#include <string.h>

#include "structmember.h"
#include "pysim/status.h"

/* The freelist for objects of `type`, or NULL: only the kernel's own types (a Python
 * subclass has another size and its own deallocator) are recycled. */
static freelist *freelist_for(modstate *st, PyTypeObject *type)
{
    if (type->tp_dealloc != (destructor)event_dealloc) return NULL;
    for (int i = 0; i < N_FREELISTS; i++) {
        freelist *f = &st->freelists[i];
        if (f->size == type->tp_basicsize) return f;
        if (f->size == 0) {
            f->size = type->tp_basicsize;
            return f;
        }
    }
    return NULL;
}

void event_freelists_clear(modstate *st)
{
    for (int i = 0; i < N_FREELISTS; i++) freelist_clear(&st->freelists[i]);
    condition_values_clear(st);
    freelist_clear(&st->bound);
}

EventObject *event_alloc(PyTypeObject *type, EnvObject *env, int kind)
{
    freelist *f = freelist_for(env->st, type);
    EventObject *ev;
    PyObject *op = f != NULL ? freelist_pop(f) : NULL;
    if (op != NULL) {
        memset(op, 0, (size_t)type->tp_basicsize);
        PyObject_Init(op, type); /* a reference to the object, and one to its heap type */
        PyObject_GC_Track(op);
        ev = (EventObject *)op;
    } else {
        ev = (EventObject *)type->tp_alloc(type, 0);
        if (ev == NULL) return NULL;
    }
    ev->env = (EnvObject *)Py_NewRef(env);
    ev->kind = (char)kind;
    return ev;
}

/* The callbacks as a list (materialised once, kept). NULL on error. */
static PyObject *callbacks_list(EventObject *ev)
{
    if (ev->cbs == NULL) {
        if ((ev->cbs = PyList_New(0)) == NULL) return NULL;
        for (int i = 0; i < 2; i++)
            if (ev->cb[i] != NULL) {
                if (PyList_Append(ev->cbs, ev->cb[i]) < 0) return NULL;
                Py_CLEAR(ev->cb[i]);
            }
    }
    return ev->cbs;
}

int event_add_callback(EventObject *ev, PyObject *cb)
{
    if (ev->cbs == NULL) { /* most events have one or two callbacks: no list for them */
        for (int i = 0; i < 2; i++)
            if (ev->cb[i] == NULL) {
                ev->cb[i] = Py_NewRef(cb);
                return 0;
            }
    }
    PyObject *list = callbacks_list(ev);
    return list ? PyList_Append(list, cb) : -1;
}

int event_remove_callback(EventObject *ev, PyObject *cb)
{
    if (ev->cbs != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ev->cbs); i++)
            if (PyList_GET_ITEM(ev->cbs, i) == cb) return PySequence_DelItem(ev->cbs, i);
        return 0;
    }
    if (ev->cb[0] == cb) { /* keep the order: the second moves up */
        Py_DECREF(cb);
        ev->cb[0] = ev->cb[1];
        ev->cb[1] = NULL;
    } else if (ev->cb[1] == cb) {
        Py_CLEAR(ev->cb[1]);
    }
    return 0;
}

int event_trigger(EventObject *ev, int ok, PyObject *value)
{
    ev->ok = (char)ok;
    Py_XSETREF(ev->value, value);
    return schedule_event(ev, 0.0, EVQ_NORMAL);
}

PyObject *exception_copy(PyObject *exc)
{
    PyObject *args = PyObject_GetAttrString(exc, "args");
    if (args == NULL) return NULL;
    PyObject *copy = PyObject_Call((PyObject *)Py_TYPE(exc), args, NULL);
    Py_DECREF(args);
    if (copy != NULL) PyException_SetCause(copy, Py_NewRef(exc));
    return copy;
}

/* Run one callback: processes, conditions and resources in C, anything else called. */
static int run_callback(EventObject *ev, PyObject *cb)
{
    modstate *st = ev->env->st;
    PyTypeObject *t = Py_TYPE(cb);
    /* the common callbacks by exact type first: the subtype checks cost more than the dispatch */
    if (t == st->types[T_PROCESS]) return process_resume((ProcessObject *)cb, ev);
    if (t == st->types[T_RESOURCE]) return resource_on_processed(cb, ev);
    if (t == st->types[T_ANYOF] || t == st->types[T_ALLOF] || t == st->types[T_CONDITION])
        return condition_check((ConditionObject *)cb, ev);
    if (PyObject_TypeCheck(cb, st->types[T_PROCESS])) return process_resume((ProcessObject *)cb, ev);
    if (PyObject_TypeCheck(cb, st->types[T_CONDITION])) return condition_check((ConditionObject *)cb, ev);
    if (PyObject_TypeCheck(cb, st->types[T_RESOURCE])) return resource_on_processed(cb, ev);
    PyObject *r = PyObject_CallOneArg(cb, (PyObject *)ev);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* run(until=event) stopped in the middle of the callbacks: the rest (`rest`, n of them,
 * borrowed) run first next time, as SimPy reschedules them at priority -1. */
static int requeue_rest(EventObject *ev, PyObject *const *rest, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    if (list == NULL) return -1;
    for (Py_ssize_t i = 0; i < n; i++) PyList_SET_ITEM(list, i, Py_NewRef(rest[i]));
    ev->cbs = list;
    ev->processed = 0;
    return schedule_event(ev, 0.0, EVQ_FIRST);
}

int event_process(EventObject *ev)
{
    EnvObject *env = ev->env;
    PyObject *inline_cbs[2] = {ev->cb[0], ev->cb[1]}, *list = ev->cbs;
    ev->cb[0] = ev->cb[1] = ev->cbs = NULL;
    ev->processed = 1;
    /* the callbacks to run, in order: the list if there is one, else the inline slots */
    PyObject *const *cbs = list ? ((PyListObject *)list)->ob_item : inline_cbs;
    Py_ssize_t n = list ? PyList_GET_SIZE(list) : (inline_cbs[0] != NULL) + (inline_cbs[1] != NULL);
    int rc = 0;
    if (ev->kind == EV_CONDITION) rc = condition_build((ConditionObject *)ev);
    else if (ev->kind == EV_INTERRUPTION) rc = interruption_fire((InterruptionObject *)ev);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *cb = Py_NewRef(cbs[i]);
        rc = run_callback(ev, cb);
        Py_DECREF(cb);
        if (list) n = PyList_GET_SIZE(list); /* a callback may have changed the detached list */
        if (rc == 0 && env->stopping) { /* even with nothing left: SimPy processes the event again */
            rc = requeue_rest(ev, cbs + i + 1, n - i - 1);
            break;
        }
    }
    Py_XDECREF(inline_cbs[0]);
    Py_XDECREF(inline_cbs[1]);
    Py_XDECREF(list);
    if (rc == 0 && !env->stopping && !ev->ok && !ev->defused) {
        PyObject *copy = exception_copy(ev->value);
        if (copy != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(copy), copy);
            Py_DECREF(copy);
        }
        rc = -1;
    }
    return rc;
}

/* --- the Python type ---------------------------------------------------------- */

static PyObject *Event_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)kw;
    modstate *st = state_of_type(type);
    if (st == NULL) return NULL;
    /* subclasses take more arguments in __init__; only env matters here */
    if (PyTuple_GET_SIZE(args) < 1)
        return PyErr_Format(PyExc_TypeError, "%s() needs the environment as its first argument", type->tp_name);
    EnvObject *env = as_env(st, PyTuple_GET_ITEM(args, 0), type->tp_name);
    return env ? (PyObject *)event_alloc(type, env, EV_PLAIN) : NULL;
}

static int Event_init(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self, (void)args, (void)kw;
    return 0;
}

int event_traverse(EventObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->env);
    Py_VISIT(self->value);
    Py_VISIT(self->cb[0]);
    Py_VISIT(self->cb[1]);
    Py_VISIT(self->cbs);
    Py_VISIT(self->dict);
    return 0;
}

int event_clear(EventObject *self)
{
    Py_CLEAR(self->env);
    Py_CLEAR(self->value);
    Py_CLEAR(self->cb[0]);
    Py_CLEAR(self->cb[1]);
    Py_CLEAR(self->cbs);
    Py_CLEAR(self->dict);
    return 0;
}

void event_dealloc(EventObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    modstate *st = self->env ? self->env->st : NULL;
    PyObject_GC_UnTrack(self);
    tp->tp_clear((PyObject *)self);
    freelist *f = st ? freelist_for(st, tp) : NULL;
    if (f == NULL || !freelist_push(f, (PyObject *)self)) tp->tp_free(self);
    Py_DECREF(tp);
}

PyObject *event_repr_with(EventObject *self, PyObject *desc)
{
    if (desc == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("<%U object at %p>", desc, self);
    Py_DECREF(desc);
    return r;
}

static PyObject *Event_repr(EventObject *self)
{
    PyObject *name = PyType_GetName(Py_TYPE(self));
    if (name == NULL) return NULL;
    PyObject *desc = PyUnicode_FromFormat("%U()", name);
    Py_DECREF(name);
    return event_repr_with(self, desc);
}

static PyObject *Event_succeed(EventObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *value = Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1 || (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "value")))
        return PyErr_Format(PyExc_TypeError, "succeed(value=None) takes one argument, value");
    if (nargs + nkw == 1) value = args[0];
    if (self->value != NULL) return PyErr_Format(PyExc_RuntimeError, "%R has already been triggered", self);
    if (event_trigger(self, 1, Py_NewRef(value)) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *Event_fail(EventObject *self, PyObject *exc)
{
    if (self->value != NULL) return PyErr_Format(PyExc_RuntimeError, "%R has already been triggered", self);
    if (!PyExceptionInstance_Check(exc)) return PyErr_Format(PyExc_TypeError, "%S is not an exception.", exc);
    if (event_trigger(self, 0, Py_NewRef(exc)) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *Event_trigger(EventObject *self, PyObject *other)
{
    modstate *st = self->env->st;
    if (!PyObject_TypeCheck(other, st->types[T_EVENT]))
        return PyErr_Format(PyExc_TypeError, "trigger: expected an Event, got %R", other);
    EventObject *o = (EventObject *)other;
    if (o->value == NULL) return PyErr_Format(PyExc_RuntimeError, "trigger: %R has no outcome yet", other);
    if (event_trigger(self, o->ok, Py_NewRef(o->value)) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Event_and(PyObject *a, PyObject *b);
static PyObject *Event_or(PyObject *a, PyObject *b);

/* Is `o` an Event whose environment is set? Its type's `|` is ours (an Event, or a subclass that kept it). */
static int bound_event(PyObject *o)
{
    PyNumberMethods *nm = Py_TYPE(o)->tp_as_number;
    return nm != NULL && nm->nb_or == Event_or && nm->nb_and == Event_and && ((EventObject *)o)->env != NULL;
}

/* a & b, a | b: a Condition over the two (SimPy's Condition.all_events / any_events). */
static PyObject *combine(PyObject *a, PyObject *b, int all)
{
    modstate *st;
    if (bound_event(a) && bound_event(b)) { /* the usual case: two events, no module lookup */
        st = ((EventObject *)a)->env->st;
    } else {
        PyTypeObject *ours = PyType_GetModuleByDef(Py_TYPE(a), &pysim_native_module) ? Py_TYPE(a) : NULL;
        if (ours == NULL) {
            PyErr_Clear();
            ours = PyType_GetModuleByDef(Py_TYPE(b), &pysim_native_module) ? Py_TYPE(b) : NULL;
            if (ours == NULL) {
                PyErr_Clear();
                Py_RETURN_NOTIMPLEMENTED;
            }
        }
        st = state_of_type(ours);
        if (!is_event(st, a) || !is_event(st, b)) Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *pair = PyTuple_Pack(2, a, b);
    if (pair == NULL) return NULL;
    PyObject *c = condition_make(st->types[T_CONDITION], ((EventObject *)a)->env,
                                 all ? st->all_events : st->any_events, pair);
    Py_DECREF(pair);
    return c;
}

static PyObject *Event_and(PyObject *a, PyObject *b) { return combine(a, b, 1); }
static PyObject *Event_or(PyObject *a, PyObject *b) { return combine(a, b, 0); }

static PyObject *Event_get_triggered(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->value != NULL);
}
static PyObject *Event_get_processed(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->processed);
}
static PyObject *Event_get_ok(EventObject *self, void *c)
{
    (void)c;
    if (self->value == NULL) return PyErr_Format(PyExc_AttributeError, "%R has no outcome yet: it is not triggered", self);
    return PyBool_FromLong(self->ok);
}
static PyObject *Event_get_value(EventObject *self, void *c)
{
    (void)c;
    if (self->value == NULL) return PyErr_Format(PyExc_AttributeError, "Value of %R is not yet available", self);
    return Py_NewRef(self->value);
}
static PyObject *Event_get_raw_value(EventObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->value ? self->value : self->env->st->pending);
}
static PyObject *Event_get_defused(EventObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->defused);
}
static int Event_set_defused(EventObject *self, PyObject *v, void *c)
{
    (void)c, (void)v;
    self->defused = 1; /* as SimPy: any assignment marks the failure handled */
    return 0;
}
static PyObject *Event_get_callbacks(EventObject *self, void *c)
{
    (void)c;
    if (self->processed) Py_RETURN_NONE;
    PyObject *list = callbacks_list(self);
    return list ? Py_NewRef(list) : NULL;
}
static PyObject *Event_get_env(EventObject *self, void *c)
{
    (void)c;
    return Py_NewRef(self->env ? (PyObject *)self->env : Py_None);
}

static PyMethodDef Event_methods[] = {
    {"succeed", (PyCFunction)(void (*)(void))Event_succeed, METH_FASTCALL | METH_KEYWORDS,
     "succeed($self, /, value=None)\n--\n\nTrigger with a value, now; returns the event."},
    {"fail", (PyCFunction)Event_fail, METH_O, "fail($self, exception, /)\n--\n\nTrigger with an exception, now."},
    {"trigger", (PyCFunction)Event_trigger, METH_O,
     "trigger($self, event, /)\n--\n\nTake `event`'s outcome and trigger with it (usable as a callback)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Event_getset[] = {
    {"triggered", (getter)Event_get_triggered, NULL, "has an outcome (it may not be processed yet)", NULL},
    {"processed", (getter)Event_get_processed, NULL, "its callbacks have run", NULL},
    {"ok", (getter)Event_get_ok, NULL, "succeeded (True) or failed (False)", NULL},
    {"value", (getter)Event_get_value, NULL, "the value, or the exception of a failure", NULL},
    {"_value", (getter)Event_get_raw_value, NULL, "the value, or PENDING", NULL},
    {"defused", (getter)Event_get_defused, (setter)Event_set_defused, "a failure was handled", NULL},
    {"callbacks", (getter)Event_get_callbacks, NULL, "the callbacks (a list), None once processed", NULL},
    {"env", (getter)Event_get_env, NULL, "the environment", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "attributes a model sets", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Event_members[] = {{"__dictoffset__", T_PYSSIZET, offsetof(EventObject, dict), READONLY, NULL},
                                      {NULL, 0, 0, 0, NULL}};

static PyType_Slot Event_slots[] = {
    {Py_tp_new, Event_new}, {Py_tp_init, Event_init}, {Py_tp_dealloc, event_dealloc},
    {Py_tp_traverse, event_traverse}, {Py_tp_clear, event_clear}, {Py_tp_repr, Event_repr},
    {Py_tp_methods, Event_methods}, {Py_tp_getset, Event_getset}, {Py_tp_members, Event_members},
    {Py_nb_and, Event_and}, {Py_nb_or, Event_or},
    {Py_tp_doc, "Event(env)\n--\n\nSomething that happens at a simulated time: pending, then triggered with a "
                "value or an exception, then processed (its callbacks run)."},
    {0, NULL}};

PyType_Spec Event_spec = {"pysim._native.Event", sizeof(EventObject), 0, BINDING_GC_FLAGS, Event_slots};

/* --- Timeout ------------------------------------------------------------------- */

PyObject *timeout_make(PyTypeObject *type, EnvObject *env, PyObject *delay_o, PyObject *value)
{
    double delay = PyFloat_AsDouble(delay_o);
    if (delay == -1.0 && PyErr_Occurred()) return NULL;
    if (delay < 0) return PyErr_Format(PyExc_ValueError, "Negative delay %R", delay_o);
    if (isnan(delay)) return PyErr_Format(PyExc_ValueError, "delay must be a number of seconds, got %R", delay_o);
    EventObject *ev = event_alloc(type, env, EV_TIMEOUT);
    if (ev == NULL) return NULL;
    ev->ok = 1;
    ev->value = Py_NewRef(value);
    ev->delay = delay;
    if (schedule_event(ev, delay, EVQ_NORMAL) < 0) {
        Py_DECREF(ev);
        return NULL;
    }
    return (PyObject *)ev;
}

static PyObject *Timeout_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "delay", "value", NULL};
    PyObject *env_o, *delay_o, *value = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:Timeout", kwlist, &env_o, &delay_o, &value)) return NULL;
    modstate *st = state_of_type(type);
    EnvObject *env = st ? as_env(st, env_o, "Timeout") : NULL;
    return env ? timeout_make(type, env, delay_o, value) : NULL;
}

static PyObject *Timeout_repr(EventObject *self)
{
    PyObject *name = PyType_GetName(Py_TYPE(self)), *d = PyFloat_FromDouble(self->delay), *desc = NULL;
    if (name && d)
        desc = self->value == Py_None ? PyUnicode_FromFormat("%U(%R)", name, d)
                                      : PyUnicode_FromFormat("%U(%R, value=%S)", name, d, self->value);
    Py_XDECREF(name);
    Py_XDECREF(d);
    return desc ? event_repr_with(self, desc) : NULL;
}

static PyType_Slot Timeout_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, Timeout_new}, {Py_tp_repr, Timeout_repr}, {Py_tp_traverse, event_traverse}, {Py_tp_clear, event_clear},
    {Py_tp_doc, "Timeout(env, delay, value=None)\n--\n\nAn event that succeeds with `value` `delay` seconds "
                "after it is made."},
    {0, NULL}};

PyType_Spec Timeout_spec = {"pysim._native.Timeout", sizeof(EventObject), 0, BINDING_GC_FLAGS, Timeout_slots};
