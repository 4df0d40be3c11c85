/* station.c -- Station: a C queueing station on the simulation's loop.
 *
 *     class Station:
 *         def __init__(self, env, servers, discipline, select_address=0)
 *         def serve(self, service_s, klass=0) -> Event   # succeeds at departure with the response time
 *         def stats(self) -> dict; def reset_stats(self); def log_enable(self); def log(self) -> (bytes, bytes)
 *         number: int
 */
#include "kernel.h"

#include <math.h>

#include "pysim/station.h"
#include "pysim/status.h"

PyObject *station_stats_dict(const station_stats *s, double now, int32_t servers);

typedef struct StationObject {
    PyObject_HEAD
    EnvObject *env;
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
            rc = event_trigger((EventObject *)ev, 1, PyFloat_FromDouble(engine_now(e) - arrival_s));
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
    modstate *st = state_of_type(type);
    EnvObject *env = st ? as_env(st, engine, "Station") : NULL;
    if (env == NULL) return NULL;
    StationObject *self = (StationObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->env = (EnvObject *)Py_NewRef((PyObject *)env);
    self->jobs = PyDict_New();
    if (self->jobs == NULL) goto fail;
    self->s = station_new(self->env->e, servers, (station_discipline)discipline,
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
    Py_VISIT(self->env);
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
    station_free(self->s); /* its pending completion will do nothing */
    Py_CLEAR(self->jobs);
    Py_CLEAR(self->env);
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
    EventObject *ev = event_alloc(self->env->st->types[T_EVENT], self->env, EV_PLAIN);
    if (ev == NULL) return NULL;
    PyObject *key = PyLong_FromLongLong(self->next_job);
    if (key == NULL || PyDict_SetItem(self->jobs, key, (PyObject *)ev) < 0) goto fail;
    int s = station_arrive(self->s, self->next_job++, service, klass);
    if (s != PS_OK) {
        PyDict_DelItem(self->jobs, key);
        raise_status(self->env->st, s, "serve");
        goto fail;
    }
    Py_DECREF(key);
    return (PyObject *)ev;
fail:
    Py_XDECREF(key);
    Py_DECREF(ev);
    return NULL;
}

PyObject *station_stats_dict(const station_stats *s, double now, int32_t servers)
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
    return station_stats_dict(station_get_stats(self->s), engine_now(self->env->e), station_servers(self->s));
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
    if (s != PS_OK) return raise_status(self->env->st, s, "log_enable");
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


#define GC_SLOTS(d, t, c) {Py_tp_dealloc, (void *)(d)}, {Py_tp_traverse, (void *)(t)}, {Py_tp_clear, (void *)(c)}

static PyType_Slot Station_slots[] = {{Py_tp_new, Station_new}, GC_SLOTS(Station_dealloc, Station_traverse, Station_clear),
                                      {Py_tp_methods, Station_methods}, {Py_tp_getset, Station_getset},
                                      {Py_tp_doc, "Station(env, servers, discipline, select_address=0)\n--\n\n"
                                                  "A C queueing station on the simulation's loop."},
                                      {0, NULL}};
static PyType_Spec Station_spec = {"pysim._native.Station", sizeof(StationObject), 0, BINDING_GC_FLAGS, Station_slots};

int station_init(PyObject *m, modstate *st) { return add_type(m, st, T_STATION, &Station_spec, NULL); }
