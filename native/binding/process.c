/* process.c -- Process (a generator driven by the events it yields) and Interruption.
 *
 *     class Process(Event):
 *         def __init__(self, env, generator)
 *         name: str; target: Event | None; is_alive: bool
 *         def interrupt(self, cause=None) -> None
 *
 * As in SimPy: a new process starts from an URGENT event, so before the
 * other events due now; a failed event is thrown into the process as a copy
 * (its __cause__ the original), so processes waiting on one event do not
 * share a traceback; a process that ends (returns or raises) schedules its
 * own event; an interruption is an URGENT event that detaches the process
 * from what it waits for and throws Interrupt(cause) into it. A Process is
 * callable as an event's callback (it resumes). */
#include "kernel.h"
#include "pysim/status.h"

int dispatch_start(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx;
    ProcessObject *p = (ProcessObject *)(intptr_t)arg;
    int rc = 0;
    if (!p->started) { /* an interruption may have started it already */
        p->started = 1;
        rc = process_resume(p, NULL);
    }
    Py_DECREF(p);
    return rc == 0 ? PS_OK : PS_ECALLBACK;
}

/* The generator is done: take its outcome (value stolen) and schedule the process's event. */
static int process_finish(ProcessObject *p, int ok, PyObject *value)
{
    if (value == NULL) return -1;
    return event_trigger(&p->ev, ok, value);
}

/* The exception being raised, normalised, with its traceback attached; NULL if none. */
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

/* The value a generator returned, from the StopIteration being raised. */
static PyObject *returned_value(void)
{
    PyObject *exc = fetch_exception();
    PyObject *v = ((PyStopIterationObject *)exc)->value;
    v = Py_NewRef(v ? v : Py_None);
    Py_DECREF(exc);
    return v;
}

/* Invalid yield value: SimPy raises RuntimeError from the loop, leaving the process suspended. */
static int invalid_yield(ProcessObject *p, PyObject *out)
{
    PyObject *name = PyObject_GetAttr(p->gen, p->ev.env->st->str_name);
    PyErr_Format(PyExc_RuntimeError, "process %S: Invalid yield value \"%S\" (a process yields only events)",
                 name ? name : Py_None, out);
    Py_XDECREF(name);
    return -1;
}

int process_resume(ProcessObject *p, EventObject *ev)
{
    EnvObject *env = p->ev.env;
    modstate *st = env->st;
    if (p->ev.value != NULL) return 0; /* already ended */
    PyObject *hold = NULL; /* keeps an already-processed yielded event alive across turns */
    int rc = 0;
    Py_CLEAR(p->target);
    Py_XSETREF(env->active, Py_NewRef((PyObject *)p));
    for (;;) {
        PyObject *out = NULL;
        PySendResult r;
        if (ev == NULL || ev->ok) {
            r = PyIter_Send(p->gen, ev ? ev->value : Py_None, &out);
        } else {
            ev->defused = 1;
            PyObject *exc = exception_copy(ev->value);
            if (exc == NULL) {
                rc = -1;
                break;
            }
            out = PyObject_CallMethodOneArg(p->gen, st->str_throw, exc);
            Py_DECREF(exc);
            if (out != NULL) r = PYGEN_NEXT;
            else if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
                out = returned_value();
                r = PYGEN_RETURN;
            } else r = PYGEN_ERROR;
        }
        if (r == PYGEN_RETURN) {
            rc = process_finish(p, 1, out);
            break;
        }
        if (r == PYGEN_ERROR) {
            rc = process_finish(p, 0, fetch_exception());
            break;
        }
        if (!is_event(st, out)) {
            rc = invalid_yield(p, out);
            Py_DECREF(out);
            break;
        }
        EventObject *y = (EventObject *)out;
        if (y->processed) { /* its outcome is known: go straight on */
            Py_XSETREF(hold, out);
            ev = y;
            continue;
        }
        rc = event_add_callback(y, (PyObject *)p);
        if (rc == 0) p->target = out; /* steals */
        else Py_DECREF(out);
        break;
    }
    Py_CLEAR(env->active);
    Py_XDECREF(hold);
    return rc;
}

int interruption_fire(InterruptionObject *intr)
{
    ProcessObject *p = intr->process;
    if (p->ev.value != NULL) return 0; /* it ended meanwhile */
    if (p->target != NULL) {
        if (event_remove_callback((EventObject *)p->target, (PyObject *)p) < 0) return -1;
    } else if (!p->started) {
        p->started = 1; /* thrown into before its first step: its start event will do nothing */
    }
    return process_resume(p, &intr->ev);
}

int process_interrupt(ProcessObject *p, PyObject *cause)
{
    EnvObject *env = p->ev.env;
    modstate *st = env->st;
    if (p->ev.value != NULL) {
        PyErr_Format(PyExc_RuntimeError, "%R has terminated and cannot be interrupted.", p);
        return -1;
    }
    if (env->active == (PyObject *)p) {
        PyErr_SetString(PyExc_RuntimeError, "A process is not allowed to interrupt itself.");
        return -1;
    }
    PyObject *exc = PyObject_CallOneArg(st->Interrupt, cause);
    if (exc == NULL) return -1;
    InterruptionObject *intr = (InterruptionObject *)event_alloc(st->types[T_INTERRUPTION], env, EV_INTERRUPTION);
    if (intr == NULL) {
        Py_DECREF(exc);
        return -1;
    }
    intr->ev.value = exc;
    intr->ev.ok = 0;
    intr->ev.defused = 1;
    intr->process = (ProcessObject *)Py_NewRef((PyObject *)p);
    int rc = schedule_event(&intr->ev, 0.0, EVQ_URGENT);
    Py_DECREF(intr);
    return rc;
}

/* --- the Python types ------------------------------------------------------------ */

PyObject *process_make(PyTypeObject *type, EnvObject *env, PyObject *gen)
{
    modstate *st = env->st;
    if (!PyGen_Check(gen) && !PyObject_HasAttr(gen, st->str_throw)) return PyErr_Format(PyExc_ValueError, "%R is not a generator.", gen);
    ProcessObject *p = (ProcessObject *)event_alloc(type, env, EV_PROCESS);
    if (p == NULL) return NULL;
    p->gen = Py_NewRef(gen);
    Py_INCREF(p); /* the start event's reference */
    int s = engine_schedule_in(env->e, 0.0, EVQ_URGENT, dispatch_start, env, (int64_t)(intptr_t)p);
    if (s != PS_OK) {
        Py_DECREF(p);
        Py_DECREF(p);
        return raise_status(st, s, "process");
    }
    return (PyObject *)p;
}

static PyObject *Process_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "generator", NULL};
    PyObject *env_o, *gen;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:Process", kwlist, &env_o, &gen)) return NULL;
    modstate *st = state_of_type(type);
    EnvObject *env = st ? as_env(st, env_o, "Process") : NULL;
    return env ? process_make(type, env, gen) : NULL;
}

static int Process_traverse(ProcessObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->gen);
    Py_VISIT(self->target);
    return event_traverse(&self->ev, visit, arg);
}

static int Process_clear(ProcessObject *self)
{
    Py_CLEAR(self->gen);
    Py_CLEAR(self->target);
    return event_clear(&self->ev);
}

static PyObject *Process_get_name(ProcessObject *self, void *c)
{
    (void)c;
    return PyObject_GetAttr(self->gen, self->ev.env->st->str_name);
}

static PyObject *Process_repr(ProcessObject *self)
{
    PyObject *name = PyType_GetName(Py_TYPE(self)), *gname = Process_get_name(self, NULL), *desc = NULL;
    if (gname == NULL) PyErr_Clear();
    if (name) desc = PyUnicode_FromFormat("%U(%S)", name, gname ? gname : Py_None);
    Py_XDECREF(name);
    Py_XDECREF(gname);
    return desc ? event_repr_with(&self->ev, desc) : NULL;
}

static PyObject *Process_call(ProcessObject *self, PyObject *args, PyObject *kw)
{
    PyObject *event;
    if (kw != NULL || !PyArg_ParseTuple(args, "O:Process", &event)) return NULL;
    if (!PyObject_TypeCheck(event, self->ev.env->st->types[T_EVENT]))
        return PyErr_Format(PyExc_TypeError, "a process resumes with an Event, got %R", event);
    if (process_resume(self, (EventObject *)event) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Process_interrupt(ProcessObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cause", NULL};
    PyObject *cause = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:interrupt", kwlist, &cause)) return NULL;
    if (process_interrupt(self, cause) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Process_get_alive(ProcessObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->ev.value == NULL);
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
    {"interrupt", (PyCFunction)(void (*)(void))Process_interrupt, METH_VARARGS | METH_KEYWORDS,
     "interrupt($self, /, cause=None)\n--\n\nThrow Interrupt(cause) into the process, now (URGENT)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Process_getset[] = {
    {"is_alive", (getter)Process_get_alive, NULL, "the generator has not ended", NULL},
    {"target", (getter)Process_get_target, NULL, "the event the process waits for, or None", NULL},
    {"name", (getter)Process_get_name, NULL, "the generator's name", NULL},
    {"_generator", (getter)Process_get_generator, NULL, "the generator", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Process_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, Process_new}, {Py_tp_traverse, Process_traverse}, {Py_tp_clear, Process_clear},
    {Py_tp_repr, Process_repr}, {Py_tp_call, Process_call}, {Py_tp_methods, Process_methods},
    {Py_tp_getset, Process_getset},
    {Py_tp_doc, "Process(env, generator)\n--\n\nA generator driven by the events it yields; its own event "
                "succeeds with the generator's return value (or fails with what it raised)."},
    {0, NULL}};

PyType_Spec Process_spec = {"pysim._native.Process", sizeof(ProcessObject), 0, BINDING_GC_FLAGS, Process_slots};

static int Interruption_traverse(InterruptionObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->process);
    return event_traverse(&self->ev, visit, arg);
}

static int Interruption_clear(InterruptionObject *self)
{
    Py_CLEAR(self->process);
    return event_clear(&self->ev);
}

static PyType_Slot Interruption_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_traverse, Interruption_traverse}, {Py_tp_clear, Interruption_clear},
    {Py_tp_doc, "The URGENT event that throws Interrupt(cause) into a process."}, {0, NULL}};

PyType_Spec Interruption_spec = {"pysim._native.Interruption", sizeof(InterruptionObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, Interruption_slots};
