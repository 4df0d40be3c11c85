/* condition.c -- Condition, AllOf, AnyOf and ConditionValue.
 *
 *     class Condition(Event):
 *         def __init__(self, env, evaluate, events)   # evaluate(events, count) -> bool
 *         all_events(events, count); any_events(events, count)   # static
 *     class AllOf(Condition): def __init__(self, env, events)
 *     class AnyOf(Condition): def __init__(self, env, events)
 *     class ConditionValue:                            # what a condition gives
 *         events: list; todict(); keys(); values(); items(); ev in cv; cv[ev]
 *
 * As in SimPy: a condition listens to each of its events (its check is one
 * of their callbacks), fails at once when one fails, and succeeds when
 * evaluate() holds; when it is processed it stops listening to the events
 * that have not happened, and its value lists every processed event of it
 * and of the conditions nested in it, so (a | b) & c gives a, b and c. */
#include "kernel.h"
#include "structmember.h"

typedef struct ConditionValueObject {
    PyObject_HEAD
    PyObject *events; /* list */
} ConditionValueObject;

static int evaluate(ConditionObject *c)
{
    Py_ssize_t n = PyTuple_GET_SIZE(c->events);
    if (c->how == COND_ALL) return c->count == n;
    if (c->how == COND_ANY) return c->count > 0 || n == 0;
    PyObject *cnt = PyLong_FromSsize_t(c->count);
    if (cnt == NULL) return -1;
    PyObject *r = PyObject_CallFunctionObjArgs(c->evaluate, c->events, cnt, NULL);
    Py_DECREF(cnt);
    if (r == NULL) return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

int condition_check(ConditionObject *c, EventObject *ev)
{
    if (c->ev.value != NULL) return 0;
    c->count++;
    if (!ev->ok) {
        ev->defused = 1;
        return event_trigger(&c->ev, 0, Py_NewRef(ev->value));
    }
    int holds = evaluate(c);
    if (holds < 0) return -1;
    return holds ? event_trigger(&c->ev, 1, Py_NewRef(Py_None)) : 0;
}

/* Stop listening to the events (and nested conditions' events) not yet processed. */
static int remove_checks(ConditionObject *c)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c->events); i++) {
        EventObject *e = (EventObject *)PyTuple_GET_ITEM(c->events, i);
        if (!e->processed && event_remove_callback(e, (PyObject *)c) < 0) return -1;
        if (e->kind == EV_CONDITION && remove_checks((ConditionObject *)e) < 0) return -1;
    }
    return 0;
}

/* Append every processed event of c, and of the conditions nested in it, to `events`. */
static int populate(ConditionObject *c, PyObject *events)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c->events); i++) {
        EventObject *e = (EventObject *)PyTuple_GET_ITEM(c->events, i);
        if (e->kind == EV_CONDITION) {
            if (populate((ConditionObject *)e, events) < 0) return -1;
        } else if (e->processed && PyList_Append(events, (PyObject *)e) < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *new_value(modstate *st)
{
    PyTypeObject *t = st->types[T_CONDITION_VALUE];
    PyObject *op = freelist_pop(&st->values);
    if (op != NULL) { /* a recycled one, its list empty but still allocated */
        PyObject_Init(op, t);
        PyObject_GC_Track(((ConditionValueObject *)op)->events);
        PyObject_GC_Track(op);
        return op;
    }
    ConditionValueObject *v = (ConditionValueObject *)t->tp_alloc(t, 0);
    if (v == NULL) return NULL;
    if ((v->events = PyList_New(0)) == NULL) {
        Py_DECREF(v);
        return NULL;
    }
    return (PyObject *)v;
}

int condition_build(ConditionObject *c)
{
    if (!c->build) return 0;
    if (remove_checks(c) < 0) return -1;
    if (!c->ev.ok) return 0;
    PyObject *v = new_value(c->ev.env->st);
    if (v == NULL) return -1;
    if (populate(c, ((ConditionValueObject *)v)->events) < 0) {
        Py_DECREF(v);
        return -1;
    }
    Py_XSETREF(c->ev.value, v);
    return 0;
}

static int condition_setup(ConditionObject *c, PyObject *evaluate_fn, PyObject *events)
{
    modstate *st = c->ev.env->st;
    c->evaluate = Py_NewRef(evaluate_fn);
    c->how = evaluate_fn == st->all_events ? COND_ALL : evaluate_fn == st->any_events ? COND_ANY : COND_CUSTOM;
    c->events = PyTuple_CheckExact(events) ? Py_NewRef(events) : PySequence_Tuple(events);
    if (c->events == NULL) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(c->events);
    if (n == 0) {
        PyObject *v = new_value(st);
        return v ? event_trigger(&c->ev, 1, v) : -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(c->events, i);
        if (!is_event(st, e)) {
            PyErr_Format(PyExc_TypeError, "a condition takes events, got %R", e);
            return -1;
        }
        if (((EventObject *)e)->env != c->ev.env) {
            PyErr_SetString(PyExc_ValueError, "It is not allowed to mix events from different environments");
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        EventObject *e = (EventObject *)PyTuple_GET_ITEM(c->events, i);
        int rc = e->processed ? condition_check(c, e) : event_add_callback(e, (PyObject *)c);
        if (rc < 0) return -1;
    }
    c->build = 1;
    return 0;
}

PyObject *condition_make(PyTypeObject *type, EnvObject *env, PyObject *evaluate_fn, PyObject *events)
{
    ConditionObject *c = (ConditionObject *)event_alloc(type, env, EV_CONDITION);
    if (c == NULL) return NULL;
    if (condition_setup(c, evaluate_fn, events) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static PyObject *Condition_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"env", "evaluate", "events", NULL};
    PyObject *env, *fn, *events;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:Condition", kwlist, &env, &fn, &events)) return NULL;
    if (!PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "evaluate must be callable, got %R", fn);
    modstate *st = state_of_type(type);
    EnvObject *e = st ? as_env(st, env, type->tp_name) : NULL;
    return e ? condition_make(type, e, fn, events) : NULL;
}

static PyObject *AllAny_new(PyTypeObject *type, PyObject *args, PyObject *kw, int all)
{
    static char *kwlist[] = {"env", "events", NULL};
    PyObject *env, *events;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &env, &events)) return NULL;
    modstate *st = state_of_type(type);
    EnvObject *e = st ? as_env(st, env, type->tp_name) : NULL;
    return e ? condition_make(type, e, all ? st->all_events : st->any_events, events) : NULL;
}

static PyObject *AllOf_new(PyTypeObject *type, PyObject *args, PyObject *kw) { return AllAny_new(type, args, kw, 1); }
static PyObject *AnyOf_new(PyTypeObject *type, PyObject *args, PyObject *kw) { return AllAny_new(type, args, kw, 0); }

static int Condition_traverse(ConditionObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->events);
    Py_VISIT(self->evaluate);
    return event_traverse(&self->ev, visit, arg);
}

static int Condition_clear(ConditionObject *self)
{
    Py_CLEAR(self->events);
    Py_CLEAR(self->evaluate);
    return event_clear(&self->ev);
}

static PyObject *Condition_repr(ConditionObject *self)
{
    PyObject *name = PyType_GetName(Py_TYPE(self)), *fname = NULL, *desc = NULL;
    if (name && self->evaluate) fname = PyObject_GetAttr(self->evaluate, self->ev.env->st->str_name);
    if (fname) desc = PyUnicode_FromFormat("%U(%S, %R)", name, fname, self->events);
    Py_XDECREF(name);
    Py_XDECREF(fname);
    return desc ? event_repr_with(&self->ev, desc) : NULL;
}

static PyObject *all_events(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "all_events(events, count)");
    Py_ssize_t n = PyObject_Length(args[0]), count = PyLong_AsSsize_t(args[1]);
    if (n < 0 || (count == -1 && PyErr_Occurred())) return NULL;
    return PyBool_FromLong(n == count);
}

static PyObject *any_events(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "any_events(events, count)");
    Py_ssize_t n = PyObject_Length(args[0]), count = PyLong_AsSsize_t(args[1]);
    if (n < 0 || (count == -1 && PyErr_Occurred())) return NULL;
    return PyBool_FromLong(count > 0 || n == 0);
}

static PyMethodDef evaluate_defs[] = {
    {"all_events", (PyCFunction)(void (*)(void))all_events, METH_FASTCALL,
     "all_events(events, count, /)\n--\n\nTrue when every event has happened."},
    {"any_events", (PyCFunction)(void (*)(void))any_events, METH_FASTCALL,
     "any_events(events, count, /)\n--\n\nTrue when any event has happened (or there are none)."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Condition_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, Condition_new}, {Py_tp_traverse, Condition_traverse}, {Py_tp_clear, Condition_clear},
    {Py_tp_repr, Condition_repr},
    {Py_tp_doc, "Condition(env, evaluate, events)\n--\n\nAn event that succeeds when evaluate(events, count) "
                "holds and fails as soon as one of the events fails."},
    {0, NULL}};
static PyType_Slot AllOf_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, AllOf_new}, {Py_tp_traverse, Condition_traverse}, {Py_tp_clear, Condition_clear}, {Py_tp_doc, "AllOf(env, events)\n--\n\nSucceeds when every event has."}, {0, NULL}};
static PyType_Slot AnyOf_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_new, AnyOf_new}, {Py_tp_traverse, Condition_traverse}, {Py_tp_clear, Condition_clear}, {Py_tp_doc, "AnyOf(env, events)\n--\n\nSucceeds when any event has."}, {0, NULL}};

static PyType_Spec Condition_spec = {"pysim._native.Condition", sizeof(ConditionObject), 0, BINDING_GC_FLAGS,
                                     Condition_slots};
static PyType_Spec AllOf_spec = {"pysim._native.AllOf", sizeof(ConditionObject), 0, BINDING_GC_FLAGS, AllOf_slots};
static PyType_Spec AnyOf_spec = {"pysim._native.AnyOf", sizeof(ConditionObject), 0, BINDING_GC_FLAGS, AnyOf_slots};

/* --- ConditionValue ---------------------------------------------------------------- */

static int CV_traverse(ConditionValueObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->events);
    return 0;
}

static int CV_clear(ConditionValueObject *self)
{
    Py_CLEAR(self->events);
    return 0;
}

/* Keep a ConditionValue for the next condition, with its list emptied but not freed: every condition
 * processed makes one, so its allocation (the object, the list and the list's items) is a real share
 * of a process-heavy model. Only the module's own type, and a list nobody else holds, are kept. */
static int CV_recycle(ConditionValueObject *self, modstate *st)
{
    PyObject *list = self->events;
    if (st == NULL || st->values.n >= FREELIST_CAPACITY || list == NULL || Py_REFCNT(list) != 1 ||
        Py_TYPE(self) != st->types[T_CONDITION_VALUE])
        return 0;
    PyListObject *l = (PyListObject *)list;
    Py_ssize_t n = Py_SIZE(l);
    Py_SET_SIZE(l, 0); /* before the references go: a finaliser they run sees an empty list */
    for (Py_ssize_t i = 0; i < n; i++) Py_CLEAR(l->ob_item[i]);
    if (Py_SIZE(l) != 0 || Py_REFCNT(list) != 1) return 0; /* a finaliser took it: free as usual */
    PyObject_GC_UnTrack(list); /* kept out of the collector's sight until it is used again */
    return freelist_push(&st->values, (PyObject *)self);
}

void condition_values_clear(modstate *st)
{
    ConditionValueObject *v;
    while ((v = (ConditionValueObject *)freelist_pop(&st->values)) != NULL) { /* each still holds its list */
        Py_CLEAR(v->events);
        PyObject_GC_Del(v);
    }
}

static void CV_dealloc(ConditionValueObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    /* the module of the exact type, read without an API call that could set (and so clear) an error */
    PyObject *m = PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE) ? ((PyHeapTypeObject *)tp)->ht_module : NULL;
    modstate *st = m != NULL && PyModule_GetDef(m) == &pysim_native_module ? state_of_module(m) : NULL;
    if (!CV_recycle(self, st)) {
        CV_clear(self);
        tp->tp_free(self);
    }
    Py_DECREF(tp);
}

static PyObject *CV_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
        return PyErr_Format(PyExc_TypeError, "ConditionValue() takes no arguments");
    ConditionValueObject *v = (ConditionValueObject *)type->tp_alloc(type, 0);
    if (v != NULL && (v->events = PyList_New(0)) == NULL) Py_CLEAR(v);
    return (PyObject *)v;
}

static int CV_contains(ConditionValueObject *self, PyObject *key)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(self->events); i++)
        if (PyList_GET_ITEM(self->events, i) == key) return 1;
    /* events compare by identity unless a subclass says otherwise */
    if (Py_TYPE(key)->tp_richcompare == NULL || Py_TYPE(key)->tp_richcompare == PyBaseObject_Type.tp_richcompare)
        return 0;
    return PySequence_Contains(self->events, key);
}

static PyObject *CV_getitem(ConditionValueObject *self, PyObject *key)
{
    int in = CV_contains(self, key);
    if (in < 0) return NULL;
    if (!in) {
        PyObject *s = PyObject_Str(key);
        if (s) PyErr_SetObject(PyExc_KeyError, s);
        Py_XDECREF(s);
        return NULL;
    }
    PyObject *v = ((EventObject *)key)->value;
    return Py_NewRef(v ? v : Py_None);
}

static PyObject *CV_todict(ConditionValueObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *d = PyDict_New();
    for (Py_ssize_t i = 0; d && i < PyList_GET_SIZE(self->events); i++) {
        EventObject *e = (EventObject *)PyList_GET_ITEM(self->events, i);
        if (PyDict_SetItem(d, (PyObject *)e, e->value ? e->value : Py_None) < 0) Py_CLEAR(d);
    }
    return d;
}

static PyObject *CV_keys(ConditionValueObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetIter(self->events);
}

static PyObject *CV_values(ConditionValueObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *vals = PyList_New(0);
    for (Py_ssize_t i = 0; vals && i < PyList_GET_SIZE(self->events); i++) {
        EventObject *e = (EventObject *)PyList_GET_ITEM(self->events, i);
        if (PyList_Append(vals, e->value ? e->value : Py_None) < 0) Py_CLEAR(vals);
    }
    PyObject *it = vals ? PyObject_GetIter(vals) : NULL;
    Py_XDECREF(vals);
    return it;
}

static PyObject *CV_items(ConditionValueObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *pairs = PyList_New(0);
    for (Py_ssize_t i = 0; pairs && i < PyList_GET_SIZE(self->events); i++) {
        EventObject *e = (EventObject *)PyList_GET_ITEM(self->events, i);
        PyObject *t = PyTuple_Pack(2, (PyObject *)e, e->value ? e->value : Py_None);
        if (t == NULL || PyList_Append(pairs, t) < 0) Py_CLEAR(pairs);
        Py_XDECREF(t);
    }
    PyObject *it = pairs ? PyObject_GetIter(pairs) : NULL;
    Py_XDECREF(pairs);
    return it;
}

static PyObject *CV_richcompare(ConditionValueObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
    PyObject *r;
    if (Py_TYPE(other) == Py_TYPE(self)) {
        r = PyObject_RichCompare(self->events, ((ConditionValueObject *)other)->events, op);
    } else if (PyDict_Check(other)) {
        PyObject *d = CV_todict(self, NULL);
        if (d == NULL) return NULL;
        r = PyObject_RichCompare(d, other, op);
        Py_DECREF(d);
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return r;
}

static PyObject *CV_repr(ConditionValueObject *self)
{
    PyObject *d = CV_todict(self, NULL);
    if (d == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("<ConditionValue %R>", d);
    Py_DECREF(d);
    return r;
}

static PyMethodDef CV_methods[] = {
    {"todict", (PyCFunction)CV_todict, METH_NOARGS, "todict($self, /)\n--\n\n{event: value} in order."},
    {"keys", (PyCFunction)CV_keys, METH_NOARGS, "keys($self, /)\n--\n\nThe events."},
    {"values", (PyCFunction)CV_values, METH_NOARGS, "values($self, /)\n--\n\nTheir values."},
    {"items", (PyCFunction)CV_items, METH_NOARGS, "items($self, /)\n--\n\n(event, value) pairs."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef CV_members[] = {{"events", T_OBJECT_EX, offsetof(ConditionValueObject, events), READONLY,
                                    "the processed events, in order"},
                                   {NULL, 0, 0, 0, NULL}};

static PyType_Slot CV_slots[] = {
    {Py_tp_new, CV_new}, {Py_tp_dealloc, CV_dealloc}, {Py_tp_traverse, CV_traverse}, {Py_tp_clear, CV_clear},
    {Py_tp_repr, CV_repr}, {Py_tp_richcompare, CV_richcompare}, {Py_tp_iter, CV_keys}, {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_methods, CV_methods}, {Py_tp_members, CV_members}, {Py_mp_subscript, CV_getitem},
    {Py_sq_contains, CV_contains},
    {Py_tp_doc, "ConditionValue()\n--\n\nThe value of a condition: its processed events (nested conditions "
                "flattened) and their values, as an ordered mapping."},
    {0, NULL}};

static PyType_Spec CV_spec = {"pysim._native.ConditionValue", sizeof(ConditionValueObject), 0, BINDING_GC_FLAGS,
                              CV_slots};

int condition_register(PyObject *m, modstate *st)
{
    if (add_type(m, st, T_CONDITION, &Condition_spec, st->types[T_EVENT]) < 0) return -1;
    if (add_type(m, st, T_ALLOF, &AllOf_spec, st->types[T_CONDITION]) < 0) return -1;
    if (add_type(m, st, T_ANYOF, &AnyOf_spec, st->types[T_CONDITION]) < 0) return -1;
    if (add_type(m, st, T_CONDITION_VALUE, &CV_spec, NULL) < 0) return -1;
    st->all_events = PyCFunction_NewEx(&evaluate_defs[0], NULL, NULL);
    st->any_events = PyCFunction_NewEx(&evaluate_defs[1], NULL, NULL);
    if (st->all_events == NULL || st->any_events == NULL) return -1;
    /* SimPy spells them Condition.all_events and Condition.any_events */
    PyObject *sa = PyStaticMethod_New(st->all_events), *sn = PyStaticMethod_New(st->any_events);
    int rc = (sa && sn && PyObject_SetAttrString((PyObject *)st->types[T_CONDITION], "all_events", sa) == 0 &&
              PyObject_SetAttrString((PyObject *)st->types[T_CONDITION], "any_events", sn) == 0) ? 0 : -1;
    Py_XDECREF(sa);
    Py_XDECREF(sn);
    return rc;
}
