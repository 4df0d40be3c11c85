/* qnet.c -- open queueing networks run entirely in C: qnet_run() and qnet_run_trace().
 *
 *     def qnet_run(servers, service_rate, arrival_rate, route, discipline, departures, warmup, capsule) -> dict
 *     def qnet_run_trace(interarrival, service, servers, discipline) -> dict
 */
#include "binding.h"
#include "pysim/qnet.h"
#include "pysim/status.h"

PyObject *station_stats_dict(const station_stats *s, double now, int32_t servers);

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
    modstate *st = state_of_module(m);
    ps_rng *rng = rng_from_capsule(capsule);
    if (rng == NULL) return NULL;
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
        PyObject *d = station_stats_dict(&ss[k], ss[k].since_s + res.window_s, servers);
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
            raise_status(state_of_module(m), s, "qnet_run_trace");
        } else {
            result = qnet_result_dict(&res);
            PyObject *d = station_stats_dict(&ss, ss.since_s + res.window_s, servers);
            if (result && (d == NULL || PyDict_SetItemString(result, "station", d) < 0)) Py_CLEAR(result);
            Py_XDECREF(d);
        }
    }
    PyBuffer_Release(&ia);
    PyBuffer_Release(&sv);
    return result;
}


static PyMethodDef qnet_functions[] = {
    {"qnet_run", py_qnet_run, METH_VARARGS,
     "qnet_run(servers, service_rate, arrival_rate, route, discipline, departures, warmup, capsule, /)\n--\n\n"
     "Run an open network of stations in C; a dict of results and per-station statistics."},
    {"qnet_run_trace", py_qnet_run_trace, METH_VARARGS,
     "qnet_run_trace(interarrival, service, servers, discipline, /)\n--\n\nOne station fed by a trace."},
    {NULL, NULL, 0, NULL}};

int qnet_init(PyObject *m, modstate *st)
{
    (void)st;
    return PyModule_AddFunctions(m, qnet_functions);
}
