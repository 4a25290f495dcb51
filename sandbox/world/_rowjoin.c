/* The sandbox's row join: pieces of text -> one string per row, as Arrow's buffers.
 *
 * `sandbox.world.rows.join_pieces` writes a batch's JSON as pieces: literal text shared by every
 * row, string arrays of one value per row, and lookups (a table of texts and one position in it
 * per row, `sandbox.world.pieces.Taken`). Arrow's `array_take` and `binary_join_element_wise`
 * did this in two steps: every lookup was first copied into an array of its own, then the
 * kernel joined the arrays with per-row, per-argument bookkeeping (nulls, the separator) where
 * the work is a few small copies per row. Here it is one loop: the rows' lengths (their int32
 * offsets), then each row's pieces copied in order, a lookup straight from its table. Only
 * pieces without nulls come here (the caller checks); the result is byte for byte what Arrow's
 * take and join give (tests/sandbox/test_rowjoin.py).
 *
 * join(n, pieces) -> (offsets, data): `pieces` a list whose items are bytes (the same text for
 * every row), a tuple (offsets, data, offset) of a string array of n rows (its int32 offsets
 * buffer, its data buffer or None, the array's offset), or (offsets, data, offset, positions):
 * a table of texts and, per row, the position of its text in the table (n int64 values, any
 * object with the buffer protocol), or (numbers,): n int64 values written in decimal (what
 * Arrow's cast of integers to strings writes). `offsets` is n + 1 int32 values as bytes, `data`
 * the rows' text. Raises IndexError for a position outside its table, ValueError for inconsistent
 * buffers, OverflowError when the text would not fit int32 offsets. join(n, pieces, True): a
 * list of n bytes instead, one per row (what `sandbox.world.rows.to_bytes` gives of the array,
 * without the array in between).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *text;     /* a literal (offs == NULL) or the array's / table's data */
    Py_ssize_t len;       /* a literal's length; a table's number of texts */
    Py_ssize_t dlen;      /* the data's length */
    const int32_t *offs;  /* the array's / table's offsets, from its offset on */
    const int64_t *at;    /* a lookup's position per row (NULL: an array of n rows) */
    const int64_t *num;   /* integers written in decimal (then nothing else is set) */
} Piece;

/* The decimal digits of v into buf (at least 20 bytes), returning their count. */
static inline int decimal(int64_t v, char *buf) {
    char tmp[20];
    int len = 0, neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[len++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int k = 0;
    if (neg) buf[k++] = '-';
    while (len) buf[k++] = tmp[--len];
    return k;
}

static inline int decimal_len(int64_t v) {
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int len = v < 0 ? 2 : 1;
    while (u >= 10) {
        u /= 10;
        len++;
    }
    return len;
}

static void release_all(Py_buffer *views, int *held, Py_ssize_t count) {
    for (Py_ssize_t i = 0; i < count; i++) {
        if (held[i] & 1) PyBuffer_Release(&views[3 * i]);
        if (held[i] & 2) PyBuffer_Release(&views[3 * i + 1]);
        if (held[i] & 4) PyBuffer_Release(&views[3 * i + 2]);
    }
}

static PyObject *join(PyObject *self, PyObject *args) {
    Py_ssize_t n;
    PyObject *list;
    int split = 0;
    char **rows = NULL;
    if (!PyArg_ParseTuple(args, "nO!|p", &n, &PyList_Type, &list, &split)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative row count");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(list);
    Piece *pieces = PyMem_Calloc(count ? count : 1, sizeof(Piece));
    Py_buffer *views = PyMem_Calloc(count ? 3 * count : 1, sizeof(Py_buffer));
    int *held = PyMem_Calloc(count ? count : 1, sizeof(int));
    PyObject *offsets = NULL, *data = NULL, *result = NULL;
    if (pieces == NULL || views == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (PyBytes_Check(item)) {
            pieces[i].text = PyBytes_AS_STRING(item);
            pieces[i].len = PyBytes_GET_SIZE(item);
            continue;
        }
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 1) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, 0), &views[3 * i], PyBUF_SIMPLE) < 0)
                goto done;
            held[i] |= 1;
            if (views[3 * i].len < n * (Py_ssize_t)sizeof(int64_t)) {
                PyErr_SetString(PyExc_ValueError, "numbers buffer too short");
                goto done;
            }
            pieces[i].num = (const int64_t *)views[3 * i].buf;
            continue;
        }
        PyObject *obuf, *dbuf, *pbuf = NULL;
        Py_ssize_t start;
        if (!PyTuple_Check(item) ||
            !PyArg_ParseTuple(item, "OOn|O", &obuf, &dbuf, &start, &pbuf)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a piece is bytes or (offsets, data, offset[, at])");
            goto done;
        }
        if (pbuf != NULL) {
            if (PyObject_GetBuffer(pbuf, &views[3 * i + 2], PyBUF_SIMPLE) < 0) goto done;
            held[i] |= 4;
            if (views[3 * i + 2].len < n * (Py_ssize_t)sizeof(int64_t)) {
                PyErr_SetString(PyExc_ValueError, "positions buffer too short");
                goto done;
            }
            pieces[i].at = (const int64_t *)views[3 * i + 2].buf;
        }
        if (PyObject_GetBuffer(obuf, &views[3 * i], PyBUF_SIMPLE) < 0) goto done;
        held[i] |= 1;
        /* an array has n texts; a table as many as its offsets buffer holds from `start` */
        Py_ssize_t texts = pbuf != NULL
            ? views[3 * i].len / (Py_ssize_t)sizeof(int32_t) - start - 1 : n;
        if (start < 0 || texts < 0 ||
            (start + texts + 1) * (Py_ssize_t)sizeof(int32_t) > views[3 * i].len) {
            PyErr_SetString(PyExc_ValueError, "offsets buffer too short");
            goto done;
        }
        pieces[i].offs = (const int32_t *)views[3 * i].buf + start;
        pieces[i].len = texts;
        if (dbuf != Py_None) {
            if (PyObject_GetBuffer(dbuf, &views[3 * i + 1], PyBUF_SIMPLE) < 0) goto done;
            held[i] |= 2;
            pieces[i].text = views[3 * i + 1].buf;
            pieces[i].dlen = views[3 * i + 1].len;
        }
    }
    offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    if (offsets == NULL) goto done;
    int32_t *out_offs = (int32_t *)PyBytes_AS_STRING(offsets);
    int64_t total = 0;
    out_offs[0] = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        for (Py_ssize_t i = 0; i < count; i++) {
            const Piece *p = &pieces[i];
            if (p->num != NULL) {
                total += decimal_len(p->num[r]);
                continue;
            }
            if (p->offs == NULL) {
                total += p->len;
                continue;
            }
            int64_t k = r;
            if (p->at != NULL) {
                k = p->at[r];
                if (k < 0 || k >= p->len) {
                    PyErr_SetString(PyExc_IndexError, "a position outside its table");
                    goto done;
                }
            }
            int32_t a = p->offs[k], b = p->offs[k + 1];
            if (a < 0 || b < a || b > p->dlen) {
                PyErr_SetString(PyExc_ValueError, "offsets beyond the data");
                goto done;
            }
            total += b - a;
        }
        if (total > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "rows beyond int32 offsets");
            goto done;
        }
        out_offs[r + 1] = (int32_t)total;
    }
    char *out = NULL;
    if (split) { /* one bytes object per row, each sized to its text */
        data = PyList_New(n);
        rows = PyMem_Malloc((n ? n : 1) * sizeof(char *));
        if (data == NULL || rows == NULL) {
            if (rows == NULL) PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t r = 0; r < n; r++) {
            PyObject *row = PyBytes_FromStringAndSize(NULL, out_offs[r + 1] - out_offs[r]);
            if (row == NULL) goto done;
            PyList_SET_ITEM(data, r, row);
            rows[r] = PyBytes_AS_STRING(row);
        }
    } else {
        data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
        if (data == NULL) goto done;
        out = PyBytes_AS_STRING(data);
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n; r++) {
        if (split) out = rows[r];
        for (Py_ssize_t i = 0; i < count; i++) {
            const Piece *p = &pieces[i];
            if (p->num) {
                out += decimal(p->num[r], out);
            } else if (p->offs) {
                int64_t k = p->at != NULL ? p->at[r] : r;
                int32_t a = p->offs[k], len = p->offs[k + 1] - a;
                if (len) memcpy(out, p->text + a, (size_t)len);
                out += len;
            } else if (p->len) {
                memcpy(out, p->text, (size_t)p->len);
                out += p->len;
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (split) {
        result = data;
        data = NULL;
    } else {
        result = PyTuple_Pack(2, offsets, data);
    }
done:
    PyMem_Free(rows);
    if (held != NULL && views != NULL) release_all(views, held, count);
    PyMem_Free(pieces);
    PyMem_Free(views);
    PyMem_Free(held);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    return result;
}

static PyMethodDef methods[] = {
    {"join", join, METH_VARARGS,
     "join(n, pieces, split=False) -> (int32 offsets, data) of the rows' text, or with split a "
     "list of n bytes, one per row"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowjoin", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rowjoin(void) { return PyModule_Create(&module); }
