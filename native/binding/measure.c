/* measure.c -- the then-vs-now microbenchmarks of native/src/measure.c.
 *
 * Each returns seconds or bytes per second, or None where the facility is
 * missing on this machine. */
#include "binding.h"
#include "pysim/measure.h"
#include "pysim/status.h"

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
    return measured(state_of_module(m), s, v, "measure_memcpy");
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
    return measured(state_of_module(m), s, v, "measure_udp_rtt");
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
    return measured(state_of_module(m), s, v, "measure_tcp_throughput");
}

static PyObject *py_measure_event_wait(PyObject *m, PyObject *args)
{
    int mech, idle, active, calls, s;
    double v = 0;
    if (!PyArg_ParseTuple(args, "iiii:measure_event_wait", &mech, &idle, &active, &calls)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    s = measure_event_wait(mech, idle, active, calls, &v);
    Py_END_ALLOW_THREADS
    return measured(state_of_module(m), s, v, "measure_event_wait");
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
    return measured(state_of_module(m), s, v, "measure_pread");
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
    return measured(state_of_module(m), s, v, "measure_copy");
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
    return measured(state_of_module(m), s, v, "measure_access");
}

static PyMethodDef measure_functions[] = {
    {"measure_basic", py_measure_basic, METH_VARARGS, "measure_basic(calls, tries, /)\n--\n\nSystem-call cost and timer resolution, seconds."},
    {"measure_memcpy", py_measure_memcpy, METH_VARARGS, "measure_memcpy(bytes, reps, /)\n--\n\nmemcpy bandwidth, bytes/s."},
    {"measure_udp_rtt", py_measure_udp_rtt, METH_VARARGS, "measure_udp_rtt(size, iters, /)\n--\n\nLoopback UDP round trip, seconds, or None."},
    {"measure_tcp_throughput", py_measure_tcp_throughput, METH_VARARGS, "measure_tcp_throughput(total, chunk, rcvbuf, /)\n--\n\nLoopback TCP bytes/s, or None."},
    {"measure_event_wait", py_measure_event_wait, METH_VARARGS, "measure_event_wait(mech, idle, active, calls, /)\n--\n\nSeconds per select/poll/epoll call, or None."},
    {"measure_pread", py_measure_pread, METH_VARARGS, "measure_pread(fd, n, size, uring, /)\n--\n\nSeconds for n preads (io_uring batched or one by one), or None."},
    {"measure_copy", py_measure_copy, METH_VARARGS, "measure_copy(src, dst, bytes, chunk, zero_copy, /)\n--\n\nFile copy bytes/s, or None."},
    {"measure_access", py_measure_access, METH_VARARGS, "measure_access(bytes, accesses, random, huge, seed, /)\n--\n\nSeconds per memory access, or None."},
    {NULL, NULL, 0, NULL}};

int measure_init(PyObject *m, modstate *st)
{
    (void)st;
    return PyModule_AddFunctions(m, measure_functions);
}
