/* wasmsched.api.protobuf._decode: Kubernetes protobuf answers to the dicts their JSON gives.
 *
 * Table driven: Python compiles the message declarations of wasmsched.api.protobuf (field
 * number, JSON key, kind, sub-message, what JSON writes when the field is unset or zero)
 * into a Schema; decode() walks the wire bytes against it and builds the dict that
 * msgspec gives for the JSON form of the same object, as the API server writes it: its Go
 * struct unmarshalled by the generated gogo code (k8s.io/api core/v1/generated.pb.go:
 * Unmarshal) and marshalled by encoding/json with the types.go json tags (omitempty drops
 * zero scalars, empty slices and maps, nil pointers; structs are always written; a nil
 * slice without omitempty is null; metav1.Time is RFC 3339 in whole seconds, null when
 * zero, pkg/apis/meta/v1/time.go: MarshalJSON; omitzero drops a zero Time).
 *
 * Every length and varint is bounds checked: malformed bytes raise DecodeError (a
 * ValueError), never read past the buffer.  Unknown field numbers are skipped (a newer
 * server's fields), as the generated Unmarshal skips them (skipGenerated).
 *
 * decode_object() reads an answer: the "k8s\0" prefix and runtime.Unknown (apimachinery
 * pkg/runtime/serializer/protobuf/protobuf.go: Serializer.Decode); watch_frames() reads the
 * whole frames of a watch stream's buffer, each a metav1.WatchEvent whose object is a
 * RawExtension holding an enveloped object (pkg/apis/meta/v1/watch.go).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    K_STR, K_I32, K_I64, K_BOOL, K_MSG, K_INLINE, K_QTY, K_TIME, K_IOS,
    K_RSTR, K_RMSG, K_RI32, K_RI64, K_MAP_SS, K_MAP_QTY, K_RAW_JSON, K_N
};
/* What JSON writes for a field (types.go tags, pointer-ness). */
enum {
    P_OMIT,      /* absent: nothing; present: its value (pointers, omitempty slices/maps) */
    P_NULL,      /* absent: null; present: its value (no omitempty on a pointer/slice/map) */
    P_OMITEMPTY, /* absent or zero: nothing (omitempty non-pointer scalar) */
    P_ALWAYS,    /* absent: the zero value; present: its value (structs, no omitempty) */
    P_OMITZERO,  /* a Time with omitzero: nothing when zero */
    P_N
};
#define MAX_FIELDS 64
#define MAX_DEPTH 100
#define ZERO_TIME_SECONDS (-62135596800LL) /* time.Time{}.Unix() */

typedef struct {
    uint32_t number;
    uint8_t kind, policy;
    int32_t sub;   /* message index for K_MSG, K_INLINE, K_RMSG */
    PyObject *key; /* interned; NULL for K_INLINE */
} Field;

typedef struct {
    Field *fields;
    int nfields;
    uint32_t max_number;
    int8_t *by_number; /* field number -> index into fields, -1 when unknown */
    Py_ssize_t hint;   /* keys of the last one decoded: its dict is made that size */
} Message;

typedef struct {
    Message *messages;
    Py_ssize_t nmessages;
    PyObject *json_loads; /* decodes a FieldsV1's raw JSON */
} Schema;

typedef struct {
    const uint8_t *p, *end;
} Cursor;

static PyObject *DecodeError;
static PyObject *s_zero_qty, *s_empty, *s_zero, *s_magic_error, *s_kind, *s_api_version, *s_type,
    *s_object;

static int fail(const char *what, const char *where) {
    PyErr_Format(DecodeError, "protobuf: %s in %s", what, where);
    return -1;
}

static int rd_varint(Cursor *c, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) return -1;
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* A length-delimited payload: [*start, *start+*len) within the cursor. */
static int rd_bytes(Cursor *c, Cursor *sub) {
    uint64_t n;
    if (rd_varint(c, &n) < 0) return -1;
    if (n > (uint64_t)(c->end - c->p)) return -1;
    sub->p = c->p;
    sub->end = c->p + n;
    c->p += n;
    return 0;
}

static int skip_field(Cursor *c, int wire) {
    uint64_t v;
    Cursor s;
    switch (wire) {
    case 0: return rd_varint(c, &v);
    case 1:
        if (c->end - c->p < 8) return -1;
        c->p += 8;
        return 0;
    case 2: return rd_bytes(c, &s);
    case 5:
        if (c->end - c->p < 4) return -1;
        c->p += 4;
        return 0;
    default: return -1; /* groups (3, 4) and 6, 7: never in Kubernetes objects */
    }
}

static PyObject *utf8(Cursor *s) {
    /* encoding/json writes invalid UTF-8 as U+FFFD */
    return PyUnicode_DecodeUTF8((const char *)s->p, s->end - s->p, "replace");
}

/* The length-delimited fields 1..n-1 of a small message into slots[number] (the last of
 * each number; slots not written keep p NULL); other fields are skipped. */
static int ld_fields(Cursor s, Cursor *slots, int n, const char *where) {
    for (int i = 0; i < n; i++) slots[i].p = slots[i].end = NULL;
    while (s.p < s.end) {
        uint64_t tag;
        Cursor value;
        if (rd_varint(&s, &tag) < 0) return fail("truncated tag", where);
        if ((tag & 7) != 2) {
            if (skip_field(&s, (int)(tag & 7)) < 0) return fail("malformed field", where);
            continue;
        }
        if (rd_bytes(&s, &value) < 0) return fail("truncated field", where);
        if ((tag >> 3) < (uint64_t)n) slots[tag >> 3] = value;
    }
    return 0;
}

/* The bytes field 1 of a small message (Quantity, FieldsV1): 1 when present, 0 when not. */
static int first_string(Cursor s, Cursor *out, const char *where) {
    Cursor slots[2];
    if (ld_fields(s, slots, 2, where) < 0) return -1;
    *out = slots[1];
    return slots[1].p != NULL;
}

static PyObject *quantity(Cursor s) {
    Cursor text;
    int found = first_string(s, &text, "Quantity");
    if (found < 0) return NULL;
    if (!found || text.p == text.end) return Py_NewRef(s_zero_qty);
    return utf8(&text);
}

/* Howard Hinnant's civil_from_days: days since 1970-01-01 to (year, month, day). */
static void civil(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* metav1.Time {seconds=1, nanos=2}: sets *zero for the zero time (an empty message, as
 * time_proto.go: Unmarshal reads it, or the zero time's seconds), else the RFC 3339 text. */
static PyObject *timestamp(Cursor s, int *zero) {
    int64_t seconds = 0;
    int empty = s.p == s.end;
    while (s.p < s.end) {
        uint64_t tag, v;
        if (rd_varint(&s, &tag) < 0) goto bad;
        if (tag == ((1 << 3) | 0)) {
            if (rd_varint(&s, &v) < 0) goto bad;
            seconds = (int64_t)v;
        } else if (skip_field(&s, (int)(tag & 7)) < 0) {
            goto bad;
        }
    }
    *zero = empty || seconds == ZERO_TIME_SECONDS;
    if (*zero) Py_RETURN_NONE;
    int64_t days = seconds / 86400, rem = seconds % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned mo, d;
    civil(days, &y, &mo, &d);
    if (y < 0 || y > 9999) {
        fail("time out of range", "Time");
        return NULL;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", (int)y, mo, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60));
    return PyUnicode_FromStringAndSize(buf, 20);
bad:
    fail("malformed Time", "Time");
    return NULL;
}

/* intstr.IntOrString {type=1, intVal=2, strVal=3}: an int, or the string when type is 1. */
static PyObject *int_or_string(Cursor s) {
    uint64_t type = 0, v;
    int32_t ival = 0;
    Cursor text = {s.p, s.p};
    while (s.p < s.end) {
        uint64_t tag;
        if (rd_varint(&s, &tag) < 0) goto bad;
        if (tag == ((1 << 3) | 0) || tag == ((2 << 3) | 0)) {
            if (rd_varint(&s, &v) < 0) goto bad;
            if (tag >> 3 == 1) type = v;
            else ival = (int32_t)(uint32_t)v;
        } else if (tag == ((3 << 3) | 2)) {
            if (rd_bytes(&s, &text) < 0) goto bad;
        } else if (skip_field(&s, (int)(tag & 7)) < 0) {
            goto bad;
        }
    }
    if (type == 1) return utf8(&text);
    return PyLong_FromLong(ival);
bad:
    fail("malformed IntOrString", "IntOrString");
    return NULL;
}

/* A map entry {key=1, value=2}: value a string, or a Quantity when quantities. */
static int map_entry(Cursor s, PyObject *into, int quantities) {
    Cursor key = {s.p, s.p}, value = {s.p, s.p};
    while (s.p < s.end) {
        uint64_t tag;
        if (rd_varint(&s, &tag) < 0) return fail("truncated tag", "map entry");
        if (tag == ((1 << 3) | 2)) {
            if (rd_bytes(&s, &key) < 0) return fail("truncated key", "map entry");
        } else if (tag == ((2 << 3) | 2)) {
            if (rd_bytes(&s, &value) < 0) return fail("truncated value", "map entry");
        } else if (skip_field(&s, (int)(tag & 7)) < 0) {
            return fail("malformed field", "map entry");
        }
    }
    PyObject *k = utf8(&key);
    if (k == NULL) return -1;
    PyObject *v = quantities ? quantity(value) : utf8(&value);
    if (v == NULL) {
        Py_DECREF(k);
        return -1;
    }
    int rc = PyDict_SetItem(into, k, v);
    Py_DECREF(k);
    Py_DECREF(v);
    return rc;
}

/* A FieldsV1 {raw=1}: its raw JSON decoded (null when absent, as FieldsV1.MarshalJSON). */
static PyObject *raw_json(Schema *schema, Cursor s) {
    Cursor raw;
    int found = first_string(s, &raw, "FieldsV1");
    if (found < 0) return NULL;
    if (!found) Py_RETURN_NONE;
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)raw.p, raw.end - raw.p);
    if (bytes == NULL) return NULL;
    PyObject *value = PyObject_CallOneArg(schema->json_loads, bytes);
    Py_DECREF(bytes);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        fail("undecodable JSON", "FieldsV1");
    }
    return value;
}

static int decode_into(Schema *schema, int index, Cursor c, PyObject *dict, int depth);

static PyObject *decode_new(Schema *schema, int index, Cursor c, int depth) {
    /* Made at the size the last one of its message had: no resize as keys go in. */
    Message *msg = &schema->messages[index];
    PyObject *dict = msg->hint > 5 ? _PyDict_NewPresized(msg->hint) : PyDict_New();
    if (dict == NULL) return NULL;
    if (decode_into(schema, index, c, dict, depth) < 0) Py_CLEAR(dict);
    else msg->hint = PyDict_GET_SIZE(dict);
    return dict;
}

static int set_steal(PyObject *dict, PyObject *key, PyObject *value) {
    if (value == NULL) return -1;
    int rc = PyDict_SetItem(dict, key, value);
    Py_DECREF(value);
    return rc;
}

/* The value an absent field has in JSON (P_ALWAYS, P_NULL); 1 when set, 0 when none. */
static int absent(Schema *schema, const Field *f, PyObject *dict, int depth) {
    Cursor empty = {(const uint8_t *)"", (const uint8_t *)""};
    PyObject *v;
    if (f->policy == P_NULL) return PyDict_SetItem(dict, f->key, Py_None);
    if (f->policy != P_ALWAYS) return 0;
    switch (f->kind) {
    case K_STR: v = Py_NewRef(s_empty); break;
    case K_I32: case K_I64: case K_IOS: v = Py_NewRef(s_zero); break;
    case K_BOOL: v = Py_NewRef(Py_False); break;
    case K_MSG: v = decode_new(schema, f->sub, empty, depth + 1); break;
    case K_INLINE: return decode_into(schema, f->sub, empty, dict, depth + 1);
    case K_QTY: v = Py_NewRef(s_zero_qty); break;
    default: v = Py_NewRef(Py_None); break; /* a zero Time, a nil slice or map */
    }
    return set_steal(dict, f->key, v);
}

static int decode_into(Schema *schema, int index, Cursor c, PyObject *dict, int depth) {
    const Message *msg = &schema->messages[index];
    PyObject *held[MAX_FIELDS]; /* repeated fields' lists and maps' dicts, borrowed */
    uint64_t seen = 0;
    if (depth > MAX_DEPTH) return fail("nesting too deep", "message");
    while (c.p < c.end) {
        uint64_t tag;
        if (rd_varint(&c, &tag) < 0) return fail("truncated tag", "message");
        uint64_t number = tag >> 3;
        int wire = (int)(tag & 7);
        if (number > msg->max_number || msg->by_number[number] < 0) {
            if (skip_field(&c, wire) < 0) return fail("malformed unknown field", "message");
            continue;
        }
        int fi = msg->by_number[number];
        const Field *f = &msg->fields[fi];
        int varint_kind = f->kind == K_I32 || f->kind == K_I64 || f->kind == K_BOOL;
        int packed = 0;
        if (f->kind == K_RI32 || f->kind == K_RI64) packed = wire == 2;
        else if ((wire == 0) != varint_kind || (wire != 0 && wire != 2))
            return fail("wrong wire type", "message");
        if ((f->kind == K_RI32 || f->kind == K_RI64) && wire != 0 && wire != 2)
            return fail("wrong wire type", "message");
        uint64_t v = 0;
        Cursor s = {c.p, c.p};
        if (wire == 0 ? rd_varint(&c, &v) < 0 : rd_bytes(&c, &s) < 0)
            return fail("truncated field", "message");
        int first = !(seen & (1ULL << fi));
        seen |= 1ULL << fi;
        PyObject *value = NULL;
        switch (f->kind) {
        case K_STR:
            if (f->policy == P_OMITEMPTY && s.p == s.end) goto drop;
            value = utf8(&s);
            break;
        case K_I32:
        case K_I64:
        case K_BOOL:
            if (f->policy == P_OMITEMPTY && v == 0) goto drop;
            if (f->kind == K_BOOL) value = Py_NewRef(v ? Py_True : Py_False);
            else if (f->kind == K_I32) value = PyLong_FromLong((int32_t)(uint32_t)v);
            else value = PyLong_FromLongLong((int64_t)v);
            break;
        case K_MSG: value = decode_new(schema, f->sub, s, depth + 1); break;
        case K_INLINE:
            if (decode_into(schema, f->sub, s, dict, depth + 1) < 0) return -1;
            continue;
        case K_QTY: value = quantity(s); break;
        case K_TIME: {
            int zero = 0;
            value = timestamp(s, &zero);
            if (value != NULL && zero && f->policy == P_OMITZERO) {
                Py_DECREF(value);
                goto drop;
            }
            break;
        }
        case K_IOS: value = int_or_string(s); break;
        case K_RAW_JSON: value = raw_json(schema, s); break;
        default: {
            /* repeated fields and maps: their list or dict, made on the first element */
            if (first) {
                PyObject *made = f->kind >= K_MAP_SS ? PyDict_New() : PyList_New(0);
                if (set_steal(dict, f->key, made) < 0) return -1;
                held[fi] = made;
            }
            PyObject *into = held[fi], *item;
            if (f->kind == K_MAP_SS || f->kind == K_MAP_QTY) {
                if (map_entry(s, into, f->kind == K_MAP_QTY) < 0) return -1;
                continue;
            }
            if (packed) { /* repeated integers written packed (proto3 style) */
                while (s.p < s.end) {
                    if (rd_varint(&s, &v) < 0) return fail("truncated packed field", "message");
                    item = f->kind == K_RI32 ? PyLong_FromLong((int32_t)(uint32_t)v)
                                             : PyLong_FromLongLong((int64_t)v);
                    if (item == NULL || PyList_Append(into, item) < 0) {
                        Py_XDECREF(item);
                        return -1;
                    }
                    Py_DECREF(item);
                }
                continue;
            }
            if (f->kind == K_RSTR) item = utf8(&s);
            else if (f->kind == K_RMSG) item = decode_new(schema, f->sub, s, depth + 1);
            else if (f->kind == K_RI32) item = PyLong_FromLong((int32_t)(uint32_t)v);
            else item = PyLong_FromLongLong((int64_t)v);
            if (item == NULL || PyList_Append(into, item) < 0) {
                Py_XDECREF(item);
                return -1;
            }
            Py_DECREF(item);
            continue;
        }
        }
        if (set_steal(dict, f->key, value) < 0) return -1;
        continue;
    drop:
        /* a zero written after a value (malformed, but decodable): the last one wins */
        if (!first && PyDict_DelItem(dict, f->key) < 0) PyErr_Clear();
    }
    for (int i = 0; i < msg->nfields; i++) {
        if (!(seen & (1ULL << i)) && absent(schema, &msg->fields[i], dict, depth) < 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the schema object */

static void schema_free(PyObject *capsule) {
    Schema *schema = PyCapsule_GetPointer(capsule, "wasmsched.protobuf.Schema");
    if (schema == NULL) return;
    for (Py_ssize_t i = 0; i < schema->nmessages; i++) {
        Message *m = &schema->messages[i];
        for (int j = 0; j < m->nfields; j++) Py_XDECREF(m->fields[j].key);
        PyMem_Free(m->fields);
        PyMem_Free(m->by_number);
    }
    PyMem_Free(schema->messages);
    Py_XDECREF(schema->json_loads);
    PyMem_Free(schema);
}

/* compile(messages, json_loads): messages a list of tuples of fields
 * (number, key or None, kind, sub-message index, policy). */
static PyObject *compile(PyObject *mod, PyObject *args) {
    PyObject *messages, *json_loads;
    if (!PyArg_ParseTuple(args, "O!O:compile", &PyList_Type, &messages, &json_loads)) return NULL;
    Schema *schema = PyMem_Calloc(1, sizeof(Schema));
    if (schema == NULL) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(schema, "wasmsched.protobuf.Schema", schema_free);
    if (capsule == NULL) {
        PyMem_Free(schema);
        return NULL;
    }
    schema->json_loads = Py_NewRef(json_loads);
    Py_ssize_t n = PyList_GET_SIZE(messages);
    schema->messages = PyMem_Calloc(n ? n : 1, sizeof(Message));
    if (schema->messages == NULL) goto nomem;
    schema->nmessages = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *fields = PyList_GET_ITEM(messages, i);
        if (!PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) > MAX_FIELDS) goto bad;
        Message *m = &schema->messages[i];
        m->nfields = (int)PyTuple_GET_SIZE(fields);
        m->fields = PyMem_Calloc(m->nfields ? m->nfields : 1, sizeof(Field));
        if (m->fields == NULL) goto nomem;
        for (int j = 0; j < m->nfields; j++) {
            unsigned int number, kind, policy;
            int sub;
            PyObject *key;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, j), "IOIiI", &number, &key, &kind,
                                  &sub, &policy))
                goto fail;
            if (number == 0 || number > 1000 || kind >= K_N || policy >= P_N ||
                ((kind == K_MSG || kind == K_INLINE || kind == K_RMSG) && (sub < 0 || sub >= n)) ||
                (kind != K_INLINE && !PyUnicode_Check(key)))
                goto bad;
            Field *f = &m->fields[j];
            f->number = number;
            f->kind = (uint8_t)kind;
            f->policy = (uint8_t)policy;
            f->sub = sub;
            if (kind != K_INLINE) {
                f->key = Py_NewRef(key);
                PyUnicode_InternInPlace(&f->key);
            }
            if (number > m->max_number) m->max_number = number;
        }
        m->by_number = PyMem_Malloc(m->max_number + 1);
        if (m->by_number == NULL) goto nomem;
        memset(m->by_number, -1, m->max_number + 1);
        for (int j = 0; j < m->nfields; j++) m->by_number[m->fields[j].number] = (int8_t)j;
    }
    return capsule;
nomem:
    PyErr_NoMemory();
    goto fail;
bad:
    PyErr_SetString(PyExc_ValueError, "compile: malformed message table");
fail:
    Py_DECREF(capsule);
    return NULL;
}

/* The object of a "k8s\0" + runtime.Unknown {typeMeta=1 {apiVersion=1, kind=2}, raw=2,
 * contentEncoding=3, contentType=4}: raw decoded by the message ``kinds`` maps its kind to,
 * with its kind and apiVersion set (as a JSON answer or watch event carries them). */
static PyObject *enveloped(Schema *schema, PyObject *kinds, Cursor c) {
    Cursor unknown[5], meta[3];
    if (c.end - c.p < 4 || memcmp(c.p, "k8s\0", 4) != 0) {
        PyErr_SetObject(DecodeError, s_magic_error);
        return NULL;
    }
    c.p += 4;
    if (ld_fields(c, unknown, 5, "runtime.Unknown") < 0) return NULL;
    Cursor raw = unknown[2];
    if (raw.p == NULL) raw.p = raw.end = c.p;
    if (unknown[1].p == NULL) unknown[1].p = unknown[1].end = c.p;
    if (ld_fields(unknown[1], meta, 3, "TypeMeta") < 0) return NULL;
    if ((unknown[3].p && unknown[3].p != unknown[3].end) ||
        (unknown[4].p && unknown[4].p != unknown[4].end)) {
        fail("raw with a content encoding or type", "runtime.Unknown");
        return NULL;
    }
    PyObject *kind = meta[2].p ? utf8(&meta[2]) : Py_NewRef(s_empty);
    if (kind == NULL) return NULL;
    PyObject *index = PyDict_GetItemWithError(kinds, kind);
    if (index == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(DecodeError, "protobuf: cannot decode kind %R", kind);
        Py_DECREF(kind);
        return NULL;
    }
    long i = PyLong_AsLong(index);
    PyObject *obj = NULL, *api = NULL;
    if (i < 0 || i >= schema->nmessages) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "kinds: no such message");
    } else if ((obj = decode_new(schema, (int)i, raw, 0)) != NULL) {
        api = meta[1].p ? utf8(&meta[1]) : Py_NewRef(s_empty);
        if (api == NULL || PyDict_SetItem(obj, s_kind, kind) < 0 ||
            PyDict_SetItem(obj, s_api_version, api) < 0)
            Py_CLEAR(obj);
    }
    Py_XDECREF(api);
    Py_DECREF(kind);
    return obj;
}

static Schema *schema_of(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, "wasmsched.protobuf.Schema");
}

/* decode_object(schema, kinds, data) -> dict: an answer's object */
static PyObject *decode_object(PyObject *mod, PyObject *args) {
    PyObject *capsule, *kinds, *result = NULL;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "OO!y*:decode_object", &capsule, &PyDict_Type, &kinds, &buf))
        return NULL;
    Schema *schema = schema_of(capsule);
    Cursor c = {(const uint8_t *)buf.buf, (const uint8_t *)buf.buf + buf.len};
    if (schema != NULL) result = enveloped(schema, kinds, c);
    PyBuffer_Release(&buf);
    return result;
}

/* One frame: a WatchEvent {type=1, object=2 RawExtension {raw=1}} as {"type", "object"}. */
static PyObject *watch_event(Schema *schema, PyObject *kinds, Cursor frame) {
    Cursor event[3], raw;
    if (ld_fields(frame, event, 3, "WatchEvent") < 0) return NULL;
    if (event[1].p == NULL || event[2].p == NULL) {
        fail("event without a type or an object", "WatchEvent");
        return NULL;
    }
    int found = first_string(event[2], &raw, "RawExtension");
    if (found < 0) return NULL;
    if (!found) raw.p = raw.end = event[2].p;
    PyObject *type = utf8(&event[1]);
    if (type == NULL) return NULL;
    PyObject *obj = enveloped(schema, kinds, raw), *result = NULL;
    if (obj != NULL) {
        result = PyDict_New();
        if (result != NULL && (PyDict_SetItem(result, s_type, type) < 0 ||
                               PyDict_SetItem(result, s_object, obj) < 0))
            Py_CLEAR(result);
    }
    Py_DECREF(type);
    Py_XDECREF(obj);
    return result;
}

/* watch_frames(schema, kinds, buffer, max_frame) -> (events, bytes used): the whole frames
 * at the buffer's start (a 4-byte big-endian length, then the frame: apimachinery
 * streaming.go with framer.NewLengthDelimitedFrameReader). */
static PyObject *watch_frames(PyObject *mod, PyObject *args) {
    PyObject *capsule, *kinds;
    Py_buffer buf;
    Py_ssize_t max_frame;
    if (!PyArg_ParseTuple(args, "OO!y*n:watch_frames", &capsule, &PyDict_Type, &kinds, &buf,
                          &max_frame))
        return NULL;
    Schema *schema = schema_of(capsule);
    PyObject *events = schema != NULL ? PyList_New(0) : NULL;
    const uint8_t *base = buf.buf;
    Py_ssize_t pos = 0;
    while (events != NULL && buf.len - pos >= 4) {
        const uint8_t *p = base + pos;
        Py_ssize_t size = ((Py_ssize_t)p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
        if (size > max_frame) {
            PyErr_Format(DecodeError, "protobuf: watch frame of %zd bytes is too large", size);
            Py_CLEAR(events);
            break;
        }
        if (buf.len - pos - 4 < size) break;
        Cursor frame = {p + 4, p + 4 + size};
        PyObject *event = watch_event(schema, kinds, frame);
        if (event == NULL || PyList_Append(events, event) < 0) Py_CLEAR(events);
        Py_XDECREF(event);
        pos += 4 + size;
    }
    PyBuffer_Release(&buf);
    return events == NULL ? NULL : Py_BuildValue("Nn", events, pos);
}

static PyMethodDef methods[] = {
    {"compile", compile, METH_VARARGS,
     "compile(messages, json_loads) -> schema: the message tables"},
    {"decode_object", decode_object, METH_VARARGS,
     "decode_object(schema, kinds, data) -> dict: the object of a k8s\\0 envelope"},
    {"watch_frames", watch_frames, METH_VARARGS,
     "watch_frames(schema, kinds, buffer, max_frame) -> (events, bytes used)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "wasmsched.api.protobuf._decode",
    "Kubernetes protobuf to the dicts of its JSON form.", -1, methods,
};

PyMODINIT_FUNC PyInit__decode(void) {
    s_zero_qty = PyUnicode_InternFromString("0");
    s_empty = PyUnicode_InternFromString("");
    s_zero = PyLong_FromLong(0);
    s_magic_error = PyUnicode_FromString("protobuf: no k8s\\x00 prefix");
    s_kind = PyUnicode_InternFromString("kind");
    s_api_version = PyUnicode_InternFromString("apiVersion");
    s_type = PyUnicode_InternFromString("type");
    s_object = PyUnicode_InternFromString("object");
    if (!s_zero_qty || !s_empty || !s_zero || !s_magic_error || !s_kind || !s_api_version ||
        !s_type || !s_object)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    DecodeError = PyErr_NewException("wasmsched.api.protobuf._decode.DecodeError",
                                     PyExc_ValueError, NULL);
    if (DecodeError == NULL || PyModule_AddObjectRef(m, "DecodeError", DecodeError) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
