/* The typed read's column builder: a page's decoded msgspec Structs -> Arrow column buffers.
 *
 * `assets.typed` decodes a page into msgspec Structs. This module reads their fields in C, with
 * no Python tuple per row or list per column: each typed column is filled straight into Arrow's
 * buffers (validity bitmap, int64/float64 values, bit-packed booleans, int32 offsets and UTF-8
 * data, date32 days, timestamp milliseconds), which `assets.compiled` hands to pyarrow with
 * `pa.Array.from_buffers` (no copy). It accepts only what `pa.array` of the same values takes
 * without a question: a value it is not sure of (an integer beyond int64, or beyond 2**53 in a
 * float column, a Struct of another type) makes `columns` return None, and the page takes the
 * Python path, which decides as before; a date not in the service's form leaves its column as
 * text, for Arrow's cast to judge. A field is read at its slot's offset (the member descriptor
 * msgspec defines for it), after checking the row's exact type.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

enum { K_INT = 0, K_FLOAT = 1, K_BOOL = 2, K_STR = 3, K_DATE = 4, K_DATETIME = 5 };
#define EXACT_DOUBLE_INT (((int64_t)1) << 53)

/* member_offset(descriptor) -> the slot's byte offset in its objects */
static PyObject *member_offset(PyObject *self, PyObject *arg) {
    if (!Py_IS_TYPE(arg, &PyMemberDescr_Type)) {
        PyErr_SetString(PyExc_TypeError, "not a member descriptor");
        return NULL;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)arg)->d_member;
    if (m->type != T_OBJECT_EX && m->type != T_OBJECT) {
        PyErr_SetString(PyExc_TypeError, "not an object slot");
        return NULL;
    }
    return PyLong_FromSsize_t(m->offset);
}

/* The value of one field of `row` (a borrowed reference), NULL when the row is not of `type`
 * or the slot is empty; with `sub` >= 0 the field of the nested Struct at `off` (Py_None under
 * a missing object). */
static inline PyObject *field(PyObject *row, PyTypeObject *type, Py_ssize_t off, Py_ssize_t sub,
                              PyTypeObject *sub_type) {
    if (Py_TYPE(row) != type) return NULL;
    PyObject *v = *(PyObject **)((char *)row + off);
    if (v == NULL || sub < 0) return v;
    if (v == Py_None) return Py_None;
    if (Py_TYPE(v) != sub_type) return NULL;
    return *(PyObject **)((char *)v + sub);
}

static int parse_spec(PyObject *spec, Py_ssize_t *off, Py_ssize_t *sub, PyTypeObject **sub_type,
                      int *kind) {
    PyObject *st;
    if (!PyArg_ParseTuple(spec, "nnOi", off, sub, &st, kind)) return -1;
    if (*sub >= 0) {
        if (!PyType_Check(st)) {
            PyErr_SetString(PyExc_TypeError, "a nested field needs its Struct type");
            return -1;
        }
        *sub_type = (PyTypeObject *)st;
    } else {
        *sub_type = NULL;
    }
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline int digits(const char *s, int n, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* `yyyy-MM-dd` -> days since the epoch; 0 for any other text (the caller then leaves the
 * column as text, and Arrow's cast decides, as without the extension). */
static int parse_date(const char *s, Py_ssize_t len, int64_t *days) {
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t y, m, d;
    if (len < 10 || s[4] != '-' || s[7] != '-') return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &m) || !digits(s + 8, 2, &d)) return 0;
    if (y < 1 || m < 1 || m > 12 || d < 1) return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > month_days[m - 1] + (m == 2 && leap)) return 0;
    *days = days_from_civil(y, m, d);
    return 1;
}

/* `yyyy-MM-ddTHH:mm:ss` or `yyyy-MM-ddTHH:mm:ss.SSS` (the service's form, UTC) -> ms since
 * the epoch; 0 for any other text. */
static int parse_datetime(const char *s, Py_ssize_t len, int64_t *ms) {
    int64_t days, h, mi, sec, frac = 0;
    if (len != 19 && len != 23) return 0;
    if (!parse_date(s, 10, &days) || s[10] != 'T' || s[13] != ':' || s[16] != ':') return 0;
    if (!digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec)) return 0;
    if (h > 23 || mi > 59 || sec > 59) return 0;
    if (len == 23 && (s[19] != '.' || !digits(s + 20, 3, &frac))) return 0;
    *ms = ((days * 24 + h) * 60 + mi) * 60000 + sec * 1000 + frac;
    return 1;
}

static inline void set_valid(uint8_t *bits, Py_ssize_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* One column: (kind built, null count, validity bytes or None, values bytes, offsets bytes or None).
 * Returns NULL with no error set when the page must take the Python path. */
static PyObject *column(PyObject *rows, Py_ssize_t n, PyTypeObject *type, Py_ssize_t off,
                        Py_ssize_t sub, PyTypeObject *sub_type, int kind);

static PyObject *column(PyObject *rows, Py_ssize_t n, PyTypeObject *type, Py_ssize_t off,
                        Py_ssize_t sub, PyTypeObject *sub_type, int kind) {
    Py_ssize_t nbits = (n + 7) / 8;
    PyObject *validity = PyBytes_FromStringAndSize(NULL, nbits);
    if (validity == NULL) return NULL;
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    memset(valid, 0, nbits);
    Py_ssize_t nulls = 0;
    PyObject *data = NULL, *offsets = NULL;
    PyObject **items = PySequence_Fast_ITEMS(rows);

    if (kind == K_INT || kind == K_FLOAT) {
        data = PyBytes_FromStringAndSize(NULL, n * 8);
        if (data == NULL) goto fail;
        char *out = PyBytes_AS_STRING(data);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(items[i], type, off, sub, sub_type);
            if (v == NULL) goto decline;
            if (v == Py_None) {
                memset(out + i * 8, 0, 8);
                nulls++;
                continue;
            }
            set_valid(valid, i);
            if (PyLong_CheckExact(v)) {
                int overflow = 0;
                long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
                if (overflow || (x == -1 && PyErr_Occurred())) goto decline;
                if (kind == K_INT) {
                    int64_t y = (int64_t)x;
                    memcpy(out + i * 8, &y, 8);
                } else {
                    if (x > EXACT_DOUBLE_INT || x < -EXACT_DOUBLE_INT) goto decline;
                    double d = (double)x;
                    memcpy(out + i * 8, &d, 8);
                }
            } else if (kind == K_FLOAT && PyFloat_CheckExact(v)) {
                double d = PyFloat_AS_DOUBLE(v);
                memcpy(out + i * 8, &d, 8);
            } else {
                goto decline;
            }
        }
    } else if (kind == K_BOOL) {
        data = PyBytes_FromStringAndSize(NULL, nbits);
        if (data == NULL) goto fail;
        uint8_t *out = (uint8_t *)PyBytes_AS_STRING(data);
        memset(out, 0, nbits);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(items[i], type, off, sub, sub_type);
            if (v == NULL) goto decline;
            if (v == Py_None) {
                nulls++;
            } else if (v == Py_True) {
                set_valid(valid, i);
                set_valid(out, i);
            } else if (v == Py_False) {
                set_valid(valid, i);
            } else {
                goto decline;
            }
        }
    } else if (kind == K_DATE || kind == K_DATETIME) {
        int width = kind == K_DATE ? 4 : 8;
        data = PyBytes_FromStringAndSize(NULL, n * width);
        if (data == NULL) goto fail;
        char *out = PyBytes_AS_STRING(data);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(items[i], type, off, sub, sub_type);
            if (v == NULL) goto decline;
            int64_t x = 0;
            if (v == Py_None) {
                nulls++;
            } else if (PyUnicode_CheckExact(v) && PyUnicode_IS_COMPACT_ASCII(v)) {
                const char *text = (const char *)PyUnicode_DATA(v);
                Py_ssize_t len = PyUnicode_GET_LENGTH(v);
                int ok = kind == K_DATE ? len == 10 && parse_date(text, len, &x)
                                        : parse_datetime(text, len, &x);
                if (!ok) goto as_text;
                set_valid(valid, i);
            } else {
                goto as_text;
            }
            if (kind == K_DATE) {
                int32_t y = (int32_t)x;
                memcpy(out + i * 4, &y, 4);
            } else {
                memcpy(out + i * 8, &x, 8);
            }
        }
    } else if (kind == K_STR) {
        offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * 4);
        if (offsets == NULL) goto fail;
        int32_t *ends = (int32_t *)PyBytes_AS_STRING(offsets);
        const char **texts = PyMem_Malloc(sizeof(char *) * (n ? n : 1));
        if (texts == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        int64_t total = 0;
        ends[0] = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(items[i], type, off, sub, sub_type);
            Py_ssize_t len = 0;
            texts[i] = NULL;
            if (v == NULL) {
                PyMem_Free(texts);
                goto decline;
            }
            if (v == Py_None) {
                nulls++;
            } else if (PyUnicode_CheckExact(v)) {
                texts[i] = PyUnicode_AsUTF8AndSize(v, &len);
                if (texts[i] == NULL) {  /* a lone surrogate: not UTF-8 */
                    PyErr_Clear();
                    PyMem_Free(texts);
                    goto decline;
                }
                set_valid(valid, i);
            } else {
                PyMem_Free(texts);
                goto decline;
            }
            total += len;
            if (total > INT32_MAX) {
                PyMem_Free(texts);
                goto decline;
            }
            ends[i + 1] = (int32_t)total;
        }
        data = PyBytes_FromStringAndSize(NULL, total);
        if (data == NULL) {
            PyMem_Free(texts);
            goto fail;
        }
        char *out = PyBytes_AS_STRING(data);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (texts[i] != NULL) memcpy(out + ends[i], texts[i], ends[i + 1] - ends[i]);
        }
        PyMem_Free(texts);
    } else {
        PyErr_SetString(PyExc_ValueError, "unknown column kind");
        goto fail;
    }
    if (nulls == 0) {
        Py_DECREF(validity);
        validity = Py_NewRef(Py_None);
    }
    if (offsets == NULL) offsets = Py_NewRef(Py_None);
    return Py_BuildValue("(inNNN)", kind, nulls, validity, data, offsets);

as_text: /* a value not in the service's form: the column as text, for Arrow's cast to judge */
    Py_XDECREF(validity);
    Py_XDECREF(data);
    return column(rows, n, type, off, sub, sub_type, K_STR);

decline:
    PyErr_Clear();
fail:
    Py_XDECREF(validity);
    Py_XDECREF(data);
    Py_XDECREF(offsets);
    return NULL;
}

/* columns(rows: list, type, specs: tuple[(offset, sub offset or -1, sub type or None, kind)])
 * -> list of column tuples, or None when the page must take the Python path (a row of another
 * type, even with no typed column: `values` reads the slots of rows `columns` has vouched for). */
static PyObject *columns(PyObject *self, PyObject *args) {
    PyObject *rows, *type, *specs;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &rows, &PyType_Type, &type,
                          &PyTuple_Type, &specs))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), k = PyTuple_GET_SIZE(specs);
    /* every row of `type`, even where no column is typed: `values` then reads its slots */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(PyList_GET_ITEM(rows, i)) != (PyTypeObject *)type) Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(k);
    if (out == NULL) return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t off, sub;
        PyTypeObject *sub_type;
        int kind;
        if (parse_spec(PyTuple_GET_ITEM(specs, j), &off, &sub, &sub_type, &kind) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *col = column(rows, n, (PyTypeObject *)type, off, sub, sub_type, kind);
        if (col == NULL) {
            Py_DECREF(out);
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(out, j, col);
    }
    return out;
}

/* values(rows: list, type, offset, sub offset or -1, sub type or None) -> the field's values as
 * a list (what the converters read for the columns that are not typed). */
static PyObject *values(PyObject *self, PyObject *args) {
    PyObject *rows, *type, *st;
    Py_ssize_t off, sub;
    if (!PyArg_ParseTuple(args, "O!O!nnO", &PyList_Type, &rows, &PyType_Type, &type, &off, &sub,
                          &st))
        return NULL;
    if (sub >= 0 && !PyType_Check(st)) {
        PyErr_SetString(PyExc_TypeError, "a nested field needs its Struct type");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(rows);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = field(PyList_GET_ITEM(rows, i), (PyTypeObject *)type, off, sub,
                            sub >= 0 ? (PyTypeObject *)st : NULL);
        if (v == NULL) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_TypeError, "a row of another type, or an unset field");
            return NULL;
        }
        PyList_SET_ITEM(out, i, Py_NewRef(v));
    }
    return out;
}

/* sections(rows: list, type, offsets: tuple[int]) -> (items, parents, totals): the items of
 * the list fields at `offsets` of every row, field by field (a missing list holds none); each
 * item's row index as int64 bytes; the number of items of each field. */
static PyObject *sections(PyObject *self, PyObject *args) {
    PyObject *rows, *type, *offs;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &rows, &PyType_Type, &type, &PyTuple_Type,
                          &offs))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows), k = PyTuple_GET_SIZE(offs), total = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t off = PyLong_AsSsize_t(PyTuple_GET_ITEM(offs, j));
        if (off == -1 && PyErr_Occurred()) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(PyList_GET_ITEM(rows, i), (PyTypeObject *)type, off, -1, NULL);
            if (v == NULL || (v != Py_None && !PyList_CheckExact(v))) {
                PyErr_SetString(PyExc_TypeError, "a section that is not a list");
                return NULL;
            }
            if (v != Py_None) total += PyList_GET_SIZE(v);
        }
    }
    PyObject *items = PyList_New(total);
    PyObject *parents = PyBytes_FromStringAndSize(NULL, total * 8);
    PyObject *totals = PyTuple_New(k);
    if (items == NULL || parents == NULL || totals == NULL) goto fail;
    int64_t *parent = (int64_t *)PyBytes_AS_STRING(parents);
    Py_ssize_t at = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t off = PyLong_AsSsize_t(PyTuple_GET_ITEM(offs, j)), start = at;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = field(PyList_GET_ITEM(rows, i), (PyTypeObject *)type, off, -1, NULL);
            if (v == Py_None) continue;
            Py_ssize_t m = PyList_GET_SIZE(v);
            for (Py_ssize_t x = 0; x < m; x++) {
                PyList_SET_ITEM(items, at, Py_NewRef(PyList_GET_ITEM(v, x)));
                parent[at++] = (int64_t)i;
            }
        }
        PyObject *count = PyLong_FromSsize_t(at - start);
        if (count == NULL) goto fail;
        PyTuple_SET_ITEM(totals, j, count);
    }
    return Py_BuildValue("(NNN)", items, parents, totals);
fail:
    Py_XDECREF(items);
    Py_XDECREF(parents);
    Py_XDECREF(totals);
    return NULL;
}

static PyMethodDef methods[] = {
    {"member_offset", member_offset, METH_O, "A slot's byte offset, from its member descriptor."},
    {"columns", columns, METH_VARARGS, "Typed columns of a list of Structs as Arrow buffers."},
    {"values", values, METH_VARARGS, "One field's values of a list of Structs."},
    {"sections", sections, METH_VARARGS, "The items of list fields, with their row indexes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_columns", NULL, -1, methods};

PyMODINIT_FUNC PyInit__columns(void) { return PyModule_Create(&module); }
