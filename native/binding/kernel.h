/* kernel.h -- the simulation kernel's types, shared by env.c, event.c,
 * process.c, condition.c and resource.c (and the station and link bindings).
 *
 * The semantics are SimPy 4.1's, event for event: an Event has a list of
 * callbacks (None once processed), a value (PENDING until triggered), ok and
 * defused; succeed(), fail() and trigger() schedule it now in class NORMAL;
 * processing it runs its callbacks in order, and a failure nobody defused
 * raises a copy of the exception (its __cause__ the original). A process
 * starts from an URGENT event, an interruption is an URGENT event, and a
 * process that ends schedules its own event. The C loop processes events;
 * callbacks that are processes, conditions or resources are run in C. */
#ifndef PYSIM_KERNEL_H
#define PYSIM_KERNEL_H

#include "binding.h"
#include "pysim/engine.h"

typedef struct EnvObject {
    PyObject_HEAD
    ps_engine *e;
    modstate *st;
    PyObject *active;     /* the process being resumed, or NULL */
    PyObject *dict;
    PyObject *stop_value; /* set by run()'s stop callback: what run() returns */
    int stopping;         /* run() should return after the current callback */
} EnvObject;

/* Event.kind: what processing the event does before its callbacks. */
enum { EV_PLAIN, EV_TIMEOUT, EV_PROCESS, EV_INTERRUPTION, EV_CONDITION, EV_REQUEST, EV_RELEASE };

typedef struct EventObject {
    PyObject_HEAD
    EnvObject *env;
    PyObject *value; /* NULL while PENDING */
    PyObject *cb[2]; /* the first two callbacks, while the list is not materialised */
    PyObject *cbs;   /* the callbacks (all of them once materialised), or NULL */
    PyObject *dict;
    double delay;    /* Timeout: its delay (for repr) */
    char processed, ok, defused, kind;
} EventObject;

typedef struct ProcessObject {
    EventObject ev;
    PyObject *gen;
    PyObject *target; /* the event it waits for, or NULL */
    char started;
} ProcessObject;

typedef struct InterruptionObject {
    EventObject ev;
    ProcessObject *process;
} InterruptionObject;

enum { COND_CUSTOM, COND_ALL, COND_ANY };

typedef struct ConditionObject {
    EventObject ev;
    PyObject *events;   /* tuple */
    PyObject *evaluate; /* the Python function (events, count) -> bool */
    Py_ssize_t count;
    char how;           /* COND_ALL and COND_ANY are evaluated in C */
    char build;         /* build the ConditionValue when processed */
} ConditionObject;

/* Is `o` an Event? The kernel's own types first: cheaper than a subtype walk. */
static inline int is_event(modstate *st, PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    return t == st->types[T_TIMEOUT] || t == st->types[T_EVENT] || t == st->types[T_REQUEST] ||
           t == st->types[T_CONDITION] || t == st->types[T_PROCESS] || t == st->types[T_RELEASE] ||
           PyObject_TypeCheck(o, st->types[T_EVENT]);
}

/* --- env.c ----------------------------------------------------------------- */

/* `o` as an Environment, or NULL with TypeError naming `what`. */
EnvObject *as_env(modstate *st, PyObject *o, const char *what);
/* Schedule `ev` `delay` seconds from now in an evq class; holds a reference. 0 or -1. */
int schedule_event(EventObject *ev, double delay, unsigned klass);
/* The handler that processes a scheduled Python event (arg: the EventObject). */
int dispatch_event(ps_engine *e, void *ctx, int64_t arg);

/* --- event.c ---------------------------------------------------------------- */

/* Free the recycled objects (module teardown). */
void event_freelists_clear(modstate *st);
/* A new pending event of `type` (an Event subtype) bound to env, or NULL. */
EventObject *event_alloc(PyTypeObject *type, EnvObject *env, int kind);
/* succeed (ok=1) or fail (ok=0) with `value` (stolen) and schedule now, NORMAL. 0 or -1. */
int event_trigger(EventObject *ev, int ok, PyObject *value);
/* Append a callback (borrowed). 0 or -1. */
int event_add_callback(EventObject *ev, PyObject *cb);
/* Remove the first occurrence of `cb` from the callbacks, if there. 0 or -1. */
int event_remove_callback(EventObject *ev, PyObject *cb);
/* Process a due event: run its callbacks; raise an undefused failure. 0 or -1. */
int event_process(EventObject *ev);
/* A copy of an exception, `type(exc)(*exc.args)` with __cause__ = exc, as SimPy throws. */
PyObject *exception_copy(PyObject *exc);
int event_traverse(EventObject *self, visitproc visit, void *arg);
int event_clear(EventObject *self);
void event_dealloc(EventObject *self);
/* repr "<Desc object at 0x...>" from a description. */
PyObject *event_repr_with(EventObject *self, PyObject *desc);
/* A Timeout of `type` due `delay_o` seconds from now (SimPy's checks), or NULL. */
PyObject *timeout_make(PyTypeObject *type, EnvObject *env, PyObject *delay_o, PyObject *value);
extern PyType_Spec Event_spec, Timeout_spec;

/* --- process.c -------------------------------------------------------------- */

/* Resume `p` with the outcome of `ev` (NULL: start it). 0 or -1. */
int process_resume(ProcessObject *p, EventObject *ev);
/* The interruption's callback: throw its Interrupt into the process. 0 or -1. */
int interruption_fire(InterruptionObject *intr);
/* A new Process of `type` running `gen`, started by an URGENT event now; NULL on error. */
PyObject *process_make(PyTypeObject *type, EnvObject *env, PyObject *gen);
/* Interrupt `p` with `cause` (SimPy's Process.interrupt). 0 or -1. */
int process_interrupt(ProcessObject *p, PyObject *cause);
int dispatch_start(ps_engine *e, void *ctx, int64_t arg);
extern PyType_Spec Process_spec, Interruption_spec;

/* --- condition.c ------------------------------------------------------------ */

/* A condition of `type` over `events` (any iterable) with SimPy's evaluate function; NULL on error. */
PyObject *condition_make(PyTypeObject *type, EnvObject *env, PyObject *evaluate, PyObject *events);
/* A sub-event of `c` was processed. 0 or -1. */
int condition_check(ConditionObject *c, EventObject *ev);
/* Detach from sub-events and build the value, as the condition is processed. 0 or -1. */
int condition_build(ConditionObject *c);
int condition_register(PyObject *m, modstate *st);
/* Free the recycled ConditionValues (module teardown). */
void condition_values_clear(modstate *st);

/* --- resource.c ------------------------------------------------------------- */

/* A Request or Release of `r` was processed: serve the other queue. 0 or -1. */
int resource_on_processed(PyObject *r, EventObject *ev);
int resource_register(PyObject *m, modstate *st);
/* A Request's or Release's __exit__(exc_type, exc, tb): withdraw if not granted, else release. */
PyObject *request_exit(PyObject *req, PyObject *const *args, Py_ssize_t nargs);

/* --- bound.c ---------------------------------------------------------------- */

/* Put __enter__ and __exit__ on Request and Release (after resource_register). 0 or -1. */
int context_methods_register(PyObject *m, modstate *st);


#endif
