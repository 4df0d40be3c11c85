/* disk.c -- Disk: the mechanical disk model over request arrays.
 *
 *     class Disk:
 *         def __init__(self, cylinders, heads, sector_bytes, rpm, zones, seek_boundary_cyl, seek_a_s, seek_b_s,
 *                      seek_c_s, seek_e_s, head_switch_s, overhead_s, bus_bytes_per_s, buffer_sectors)
 *         def run(self, sched, arrival_s, lba, sectors, write, start_s, finish_s, seek_s, rotation_s,
 *                 transfer_s, buffer_hit)      # fills the output arrays
 *         def seek_time(self, cylinders) -> float; def locate(self, lba) -> tuple; def reset(self)
 *         capacity_sectors: int
 */
#include "binding.h"
#include "pysim/disk.h"
#include "pysim/status.h"

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

static PyType_Slot Disk_slots[] = {{Py_tp_new, Disk_new}, {Py_tp_dealloc, Disk_dealloc}, {Py_tp_methods, Disk_methods},
                                   {Py_tp_getset, Disk_getset}, {Py_tp_doc, "Mechanical disk model."}, {0, NULL}};
static PyType_Spec Disk_spec = {"pysim._native.Disk", sizeof(DiskObject), 0, Py_TPFLAGS_DEFAULT, Disk_slots};

int disk_init(PyObject *m, modstate *st) { return add_type(m, st, T_DISK, &Disk_spec, NULL); }
