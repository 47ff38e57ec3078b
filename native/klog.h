/* The compiled klog case of the host trampoline (included by _native.c, after the Host
 * type and before host_trampoline). */

/* The klog case (KIND_LOG, state: the CallContext): a record at or above the configured
 * severity is charged, read, built and retained here, as host.py's log/logs functions do
 * (CallContext.charge, LogRecord.from_guest, PluginEnv.emit), and shown through the
 * Python PluginEnv.show unless the logger's level cache already says it is disabled.
 * Anything unusual (a budget that would be exceeded, an unreadable or
 * non-ASCII message) returns 0 before changing anything: the Python function then does
 * the whole call, raising what it raises. */
static PyObject *p_record_cls = NULL;
static long long lim_record, lim_call, lim_cycle, lim_logs, lim_log_bytes;

static int get_ll(PyObject *obj, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int is_ascii(const uint8_t *p, size_t n) {
    /* eight bytes at a time (a record's message and key/values are tens of bytes) */
    uint64_t high = 0, word;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&word, p + i, 8);
        high |= word;
    }
    for (; i < n; i++) high |= p[i];
    return (high & 0x8080808080808080ULL) == 0;
}

/* Whether [ptr, ptr + n) lies in the instance memory (the size re-read when needed). */
static int in_memory(Host *h, uint32_t ptr, uint32_t n) {
    size_t end = (size_t)ptr + (size_t)n;
    if (h->mem_base == NULL) return 0;
    if (end > h->mem_size) h->mem_size = p_mem_size(h->mem_ctx, h->mem);
    return end <= h->mem_size;
}

static int slot_offset(PyObject *cls, const char *name, Py_ssize_t *out) {
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL) return -1;
    int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
    if (ok) *out = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    if (!ok) PyErr_Format(PyExc_ValueError, "%s is not an object slot", name);
    return ok ? 0 : -1;
}

/* The gate alone, for a state that is not a CallContext: 1 dropped, 0 run the Python. */
static int log_gate_of(Host *h, wasmtime_val_raw_t *args) {
    PyObject *env = PyObject_GetAttr(h->state, s_env);
    if (env == NULL) { PyErr_Clear(); return 0; }
    long long t;
    int rc = get_ll(env, s_severity, &t);
    Py_DECREF(env);
    if (rc < 0) { PyErr_Clear(); return 0; }
    return args[0].i32 < t ? 1 : 0;
}

/* A slot holding an exact int, read as long long: 0, or -1 when it is anything else. */
static int slot_ll(PyObject *o, Py_ssize_t off, long long *out) {
    PyObject *v = SLOT(o, off);
    if (v == NULL || !PyLong_CheckExact(v)) return -1;
    *out = PyLong_AsLongLong(v);
    if (*out == -1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
    return 0;
}

/* pod.uid (None for no pod), remembered in a (last pod, its uid) pair: a cached property
 * of an immutable Pod, so looked up once per pod by each caller that keeps such a pair
 * (the klog case per Host, the compiled Filter/Score per Hot). */
static PyObject *remembered_uid(PyObject *pod, PyObject **last_pod, PyObject **last_uid) {
    if (pod == *last_pod && *last_uid != NULL) return Py_NewRef(*last_uid);
    PyObject *uid = pod == Py_None ? Py_NewRef(Py_None) : PyObject_GetAttr(pod, s_uid);
    if (uid == NULL) return NULL;
    Py_XSETREF(*last_pod, Py_NewRef(pod));
    Py_XSETREF(*last_uid, Py_NewRef(uid));
    return uid;
}

/* Whether the logger's level cache says ``level`` is disabled for sure (0 when it does
 * not know: PluginEnv.show then asks logging.Logger.isEnabledFor). */
static int level_disabled(Host *h, PyObject *logger, int level) {
    if (logger != h->last_logger || h->last_levels == NULL) {
        PyObject *cache = PyObject_GetAttr(logger, s_cache);
        if (cache == NULL) { PyErr_Clear(); return 0; }
        if (!PyDict_CheckExact(cache)) { Py_DECREF(cache); return 0; }
        Py_XSETREF(h->last_logger, Py_NewRef(logger));
        Py_XSETREF(h->last_levels, cache);
    }
    PyObject *known = PyDict_GetItemWithError(h->last_levels, level_keys[level / 10 - 1]);
    if (known == NULL) PyErr_Clear();
    return known == Py_False;
}

static int log_fast(Host *h, wasmtime_val_raw_t *args) {
    int32_t severity = args[0].i32;
    uint32_t ptr = (uint32_t)args[1].i32, size = (uint32_t)args[2].i32;
    uint32_t kptr = 0, klen = 0;
    if (h->nparams == 5) { kptr = (uint32_t)args[3].i32; klen = (uint32_t)args[4].i32; }
    PyObject *ctx = h->state;
    if (ctx_type == NULL || Py_TYPE(ctx) != ctx_type) return log_gate_of(h, args);
    PyObject *env = SLOT(ctx, ctx_off[C_ENV]);
    if (env == NULL || env_type == NULL || Py_TYPE(env) != env_type) return log_gate_of(h, args);
    PyObject *rec = NULL, *uid = NULL;
    int done = -1, new_cycle_uid = 0;
    long long threshold, used, cycle_used, log_bytes;
    Py_INCREF(env);
    if (slot_ll(env, env_off[E_SEVERITY], &threshold) < 0) { done = 0; goto out; }
    if (severity < threshold) { done = 1; goto out; }
    done = 0;
    if (p_record_cls == NULL) goto out;
    PyObject *logs = SLOT(env, env_off[E_LOGS]), *logger = SLOT(env, env_off[E_LOGGER]);
    if (logs == NULL || !PyList_CheckExact(logs) || logger == NULL ||
        slot_ll(env, env_off[E_LOG_BYTES], &log_bytes) < 0)
        goto out;
    long long n = (long long)size + (long long)klen;
    if (n > lim_record) goto out;
    PyObject *pod = SLOT(ctx, ctx_off[C_POD]), *cycle_uid = SLOT(ctx, ctx_off[C_CYCLE_UID]);
    if (!pod || !cycle_uid || slot_ll(ctx, ctx_off[C_USED], &used) < 0 ||
        slot_ll(ctx, ctx_off[C_CYCLE_USED], &cycle_used) < 0)
        goto out;
    uid = remembered_uid(pod, &h->last_pod, &h->last_uid);
    if (uid == NULL) goto err;
    if (uid != cycle_uid) {
        if (uid != Py_None && !PyUnicode_CheckExact(uid)) goto out;
        int same = PyUnicode_CheckExact(uid) && PyUnicode_CheckExact(cycle_uid) &&
                   PyUnicode_Compare(uid, cycle_uid) == 0;
        if (PyErr_Occurred()) goto err;
        if (!same) { cycle_used = 0; new_cycle_uid = 1; }  /* CallContext.charge: a new cycle */
    }
    if (used + n > lim_call || cycle_used + n > lim_cycle) goto out;
    if (!in_memory(h, ptr, size) || (klen && !in_memory(h, kptr, klen))) goto out;
    const uint8_t *data = h->mem_base + ptr, *kv = h->mem_base + kptr;
    if (!is_ascii(data, size) || !is_ascii(kv, klen)) goto out;
    size_t dlen = size;
    long long rsize;
    int nonempty = 0;
    if (klen == 0) {
        if (dlen && data[dlen - 1] == '\n') dlen--;  /* klog.log drops a trailing newline */
        rsize = (long long)dlen;
    } else {
        /* the NUL-terminated key/values (upstream's cstring.go: fromNULTerminated): the
         * bytes after the last NUL are not a value; empty strings are skipped */
        long long sum = 0, seg = 0;
        for (uint32_t i = 0; i < klen; i++) {
            if (kv[i] == 0) { if (seg) { sum += seg; nonempty++; } seg = 0; }
            else seg++;
        }
        rsize = (long long)dlen + sum + ((nonempty & 1) ? 9 /* "(MISSING)" */ : 0);
    }
    PyObject *vals[R_N];
    vals[R_SEVERITY] = PyLong_FromLong(severity);
    vals[R_STRUCTURED] = PyBool_FromLong(klen != 0);
    vals[R_MESSAGE] = Py_NewRef(Py_None);
    vals[R_KVS] = nonempty ? Py_NewRef(Py_None) : PyTuple_New(0);
    vals[R_RAW] = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)dlen);
    vals[R_RAW_KVS] = klen ? PyBytes_FromStringAndSize((const char *)kv, klen)
                           : Py_NewRef(Py_None);
    vals[R_SIZE] = PyLong_FromLongLong(rsize);
    PyObject *new_used = PyLong_FromLongLong(used + n);
    PyObject *new_cycle = PyLong_FromLongLong(cycle_used + n);
    PyObject *new_bytes = PyLong_FromLongLong(log_bytes + rsize);
    rec = ((PyTypeObject *)p_record_cls)->tp_alloc((PyTypeObject *)p_record_cls, 0);
    int ok = rec != NULL && new_used != NULL && new_cycle != NULL && new_bytes != NULL;
    for (int i = 0; i < R_N; i++) ok = ok && vals[i] != NULL;
    if (!ok) {
        for (int i = 0; i < R_N; i++) Py_XDECREF(vals[i]);
        Py_XDECREF(new_used); Py_XDECREF(new_cycle); Py_XDECREF(new_bytes);
        goto err;
    }
    for (int i = 0; i < R_N; i++) slot_put(rec, rec_off[i], vals[i]);
    /* It holds only ints, bytes, None and (decoded later) strings and tuples of them: it
     * can be in no reference cycle, so the collector need not traverse the retained ones
     * (the class is not a GC one at all when untrack_class could make it so). */
    if (PyObject_IS_GC(rec)) PyObject_GC_UnTrack(rec);
    /* CallContext.charge, committed */
    slot_put(ctx, ctx_off[C_USED], new_used);
    slot_put(ctx, ctx_off[C_CYCLE_USED], new_cycle);
    if (new_cycle_uid) slot_put(ctx, ctx_off[C_CYCLE_UID], Py_NewRef(uid));
    if (SLOT(ctx, ctx_off[C_DIRTY]) == Py_False)
        slot_put(ctx, ctx_off[C_DIRTY], Py_NewRef(s_logged));
    /* PluginEnv.emit: retain, trim, show */
    done = 1;
    if (PyList_Append(logs, rec) < 0) { Py_DECREF(new_bytes); goto err; }
    slot_put(env, env_off[E_LOG_BYTES], new_bytes);
    if (PyList_GET_SIZE(logs) > lim_logs || log_bytes + rsize > lim_log_bytes) {
        PyObject *r = PyObject_CallMethodNoArgs(env, s_trim_logs);
        if (r == NULL) goto err;
        Py_DECREF(r);
    }
    /* host.py's _LEVELS: 0 INFO, 1 WARNING, 2 ERROR, 3 and above CRITICAL, below 0 DEBUG */
    int level = severity < 0 ? 10 : severity == 0 ? 20 : severity == 1 ? 30
              : severity == 2 ? 40 : 50;
    /* the logger is read again: _trim_logs runs Python */
    logger = SLOT(env, env_off[E_LOGGER]);
    if (logger == NULL || !level_disabled(h, logger, level)) {
        PyObject *r = PyObject_CallMethodOneArg(env, s_show, rec);
        if (r == NULL) goto err;
        Py_DECREF(r);
    }
    goto out;
err:
    done = -1;
out:
    Py_XDECREF(env); Py_XDECREF(rec); Py_XDECREF(uid);
    return done;
}
