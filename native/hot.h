/* Hot: WasmPlugin.filter and WasmPlugin.score in C, for the common case (included by
 * _native.c after the Caller type).
 *
 * A call does what the Python methods of wasm/plugin.py do: the instance that schedules
 * the pod (pool.scheduled, when pool.scheduled_uid is the pod's), its call lock taken as
 * CallLock's inlined acquire (a pop of ``free``), ``ctx.pod`` and ``ctx.node_name`` set
 * around the export call, the result mapped to a Status when the call left nothing to read
 * (or only logged: a record the klog case retained in C).
 * Everything else is Python's: any other state of the pool, the lock or the instance runs
 * the Python method from the start (``slow``), a trap goes to ``trapped`` and a call that
 * left results (``ctx.dirty``) to ``finish``, both with the lock still held, as there. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *plugin;
    PyObject *pool;
    PyObject *slow;       /* (plugin, state, pod, node_info) -> result: the Python method */
    PyObject *finish;     /* (guest, value) -> result, for a call that left results */
    PyObject *trapped;    /* (guest, trap) -> result */
    PyObject *status_cls; /* framework.status.Status */
    PyObject *trap_cls;   /* GuestTrap */
    int score;            /* 0: Filter (None | Status), 1: Score ((int, None | Status)) */
    PyObject *last_pod, *last_uid;  /* klog.h: remembered_uid */
} Hot;

/* Slot offsets of the classes a call reads (configure_hot), so that the attribute
 * protocol (most of a call's cost otherwise) is skipped for the exact classes; any other
 * object is read through PyObject_GetAttr, as before. */
enum { H_POOL_SCHEDULED, H_POOL_UID, H_GUEST_LOCK, H_GUEST_DEAD, H_GUEST_FILTER,
       H_GUEST_SCORE, H_GUEST_CTX, H_LOCK_FREE, H_LOCK_WAITERS, H_NODE_NAME, H_N };
static Py_ssize_t hot_off[H_N];
static PyTypeObject *pool_type = NULL, *guest_type = NULL, *lock_type = NULL,
                    *node_info_type = NULL;

/* obj.<name> as a new reference: its slot for an object of exactly ``type`` (NULL, with
 * no exception, when unset), else the attribute protocol. */
static PyObject *hot_get(PyObject *obj, PyTypeObject *type, int off, PyObject *name) {
    if (type != NULL && Py_TYPE(obj) == type) return Py_XNewRef(SLOT(obj, hot_off[off]));
    return PyObject_GetAttr(obj, name);
}

static PyObject *s_scheduled, *s_scheduled_uid, *s_lock, *s_free, *s_dead, *s_ctx, *s_name,
    *s_waiters, *s_wake, *s_filter, *s_score, *s_empty;

static PyObject *hot_slow(Hot *self, PyObject *const *args, size_t nargs) {
    PyObject *argv[4] = {self->plugin, NULL, NULL, NULL};
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (state, pod, node_info)");
        return NULL;
    }
    argv[1] = args[0]; argv[2] = args[1]; argv[3] = args[2];
    return PyObject_Vectorcall(self->slow, argv, 4, NULL);
}

/* CallLock.acquire and release, inlined: ``free`` holds one item while the lock is free.
 * ``list.pop`` and ``list.append`` would shrink and regrow the list's item array on every
 * call (a realloc each way); taking the item keeps the array, and with it the room to put
 * the item back. The list is only ever read by its size and items up to it, so this is
 * the pop and the append as anyone else sees them. */
static PyObject *lock_take(PyObject *free_ /* a non-empty list */) {
    Py_ssize_t n = PyList_GET_SIZE(free_);
    PyObject *token = PyList_GET_ITEM(free_, n - 1);  /* the list's reference, now ours */
    Py_SET_SIZE(free_, n - 1);
    return token;
}

static int lock_give(PyObject *free_, PyObject *token /* stolen */) {
    PyListObject *list = (PyListObject *)free_;
    Py_ssize_t n = Py_SIZE(list);
    if (n < list->allocated) {
        list->ob_item[n] = token;
        Py_SET_SIZE(list, n + 1);
        return 0;
    }
    int rc = PyList_Append(free_, token);
    Py_DECREF(token);
    return rc;
}

/* (score, None) for the scores of MaxNodeScore's range, built once: tuples are immutable,
 * and building one per call was most of what a Score call adds to a Filter call. */
#define CLEAN_SCORES 101
static PyObject *clean_scores[CLEAN_SCORES];

static PyObject *hot_clean(Hot *self, long long value) {
    int32_t code = (int32_t)(uint32_t)(unsigned long long)value;
    PyObject *status;
    long long high = value >> 32;  /* the signed high word: a Score's score */
    if (code == 0) {
        if (self->score && high >= 0 && high < CLEAN_SCORES) {
            PyObject **cached = &clean_scores[high];
            if (*cached == NULL) {
                PyObject *v = PyLong_FromLongLong(high);
                if (v == NULL) return NULL;
                *cached = PyTuple_Pack(2, v, Py_None);
                Py_DECREF(v);
                if (*cached == NULL) return NULL;
            }
            return Py_NewRef(*cached);
        }
        status = Py_NewRef(Py_None);
    } else {
        PyObject *c = PyLong_FromLong(code);
        if (c == NULL) return NULL;
        status = PyObject_CallOneArg(self->status_cls, c);
        Py_DECREF(c);
        if (status == NULL) return NULL;
    }
    if (!self->score) return status;
    PyObject *score = PyLong_FromLongLong(high);
    if (score == NULL) { Py_DECREF(status); return NULL; }
    PyObject *r = PyTuple_Pack(2, score, status);
    Py_DECREF(score);
    Py_DECREF(status);
    return r;
}

static PyObject *hot_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
    Hot *self = (Hot *)self_;
    size_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 || kwnames != NULL || ctx_type == NULL) return hot_slow(self, args, nargs);
    PyObject *pod = args[1], *node_info = args[2];
    PyObject *guest = NULL, *uid = NULL, *suid = NULL, *lock = NULL, *free_ = NULL;
    PyObject *dead = NULL, *caller = NULL, *ctx = NULL, *name = NULL, *result = NULL;
    int slow = 1;
    guest = hot_get(self->pool, pool_type, H_POOL_SCHEDULED, s_scheduled);
    if (guest == NULL || guest == Py_None) goto out;
    uid = remembered_uid(pod, &self->last_pod, &self->last_uid);
    suid = hot_get(self->pool, pool_type, H_POOL_UID, s_scheduled_uid);
    if (uid == NULL || suid == NULL) goto out;
    if (uid != suid) {
        if (!PyUnicode_Check(uid) || !PyUnicode_Check(suid) || PyUnicode_Compare(uid, suid) != 0)
            goto out;
    }
    lock = hot_get(guest, guest_type, H_GUEST_LOCK, s_lock);
    free_ = lock ? hot_get(lock, lock_type, H_LOCK_FREE, s_free) : NULL;
    dead = hot_get(guest, guest_type, H_GUEST_DEAD, s_dead);
    caller = self->score ? hot_get(guest, guest_type, H_GUEST_SCORE, s_score)
                         : hot_get(guest, guest_type, H_GUEST_FILTER, s_filter);
    ctx = hot_get(guest, guest_type, H_GUEST_CTX, s_ctx);
    name = hot_get(node_info, node_info_type, H_NODE_NAME, s_name);
    if (!free_ || !dead || !caller || !ctx || !name) goto out;
    if (!PyList_CheckExact(free_) || PyList_GET_SIZE(free_) == 0 || dead != Py_False ||
        !Py_IS_TYPE(caller, &CallerType) || Py_TYPE(ctx) != ctx_type)
        goto out;
    PyObject *token = lock_take(free_);
    slow = 0;
    slot_put(ctx, ctx_off[C_POD], Py_NewRef(pod));
    slot_put(ctx, ctx_off[C_NODE_NAME], Py_NewRef(name));
    long long value = 0;
    int rc = caller_invoke((Caller *)caller, &value);
    slot_put(ctx, ctx_off[C_POD], Py_NewRef(Py_None));
    slot_put(ctx, ctx_off[C_NODE_NAME], Py_NewRef(s_empty));
    if (rc < 0) {
        if (PyErr_ExceptionMatches(self->trap_cls)) {
            PyObject *type, *exc, *tb;
            PyErr_Fetch(&type, &exc, &tb);
            PyErr_NormalizeException(&type, &exc, &tb);
            if (tb != NULL && exc != NULL) PyException_SetTraceback(exc, tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            result = exc ? PyObject_CallFunctionObjArgs(self->trapped, guest, exc, NULL) : NULL;
            Py_XDECREF(exc);
        }
    } else if (SLOT(ctx, ctx_off[C_DIRTY]) == Py_False) {
        result = hot_clean(self, value);
    } else if (SLOT(ctx, ctx_off[C_DIRTY]) == s_logged) {
        /* the call only logged: its host byte count reset, as Caller.each does */
        slot_put(ctx, ctx_off[C_USED], Py_NewRef(s_zero));
        slot_put(ctx, ctx_off[C_DIRTY], Py_NewRef(Py_False));
        result = hot_clean(self, value);
    } else {
        PyObject *v = PyLong_FromLongLong(value);
        result = v ? PyObject_CallFunctionObjArgs(self->finish, guest, v, NULL) : NULL;
        Py_XDECREF(v);
    }
    /* CallLock.release, inlined: the call's exception (if any) is kept across it */
    PyObject *type = NULL, *exc = NULL, *tb = NULL;
    int failed = result == NULL;
    if (failed) PyErr_Fetch(&type, &exc, &tb);
    if (lock_give(free_, token) == 0) {
        PyObject *waiters = hot_get(lock, lock_type, H_LOCK_WAITERS, s_waiters);
        /* ``waiters`` is an int count: the small int 0 is a singleton */
        int waiting = waiters == NULL ? -1 : waiters == s_zero ? 0 : PyObject_IsTrue(waiters);
        Py_XDECREF(waiters);
        if (waiting > 0) {
            PyObject *r = PyObject_CallMethodNoArgs(lock, s_wake);
            Py_XDECREF(r);
        }
    }
    if (failed) {
        PyErr_Clear();  /* a failed release is not reported over the call's own error */
        PyErr_Restore(type, exc, tb);
    } else if (PyErr_Occurred()) {
        Py_CLEAR(result);  /* the release failed: report that */
    }
out:
    Py_XDECREF(guest); Py_XDECREF(uid); Py_XDECREF(suid); Py_XDECREF(lock);
    Py_XDECREF(free_); Py_XDECREF(dead); Py_XDECREF(caller); Py_XDECREF(ctx); Py_XDECREF(name);
    if (slow) {
        if (PyErr_Occurred()) PyErr_Clear();  /* an attribute missing: Python decides */
        return hot_slow(self, args, nargs);
    }
    return result;
}

static int hot_traverse(Hot *self, visitproc visit, void *arg) {
    Py_VISIT(self->plugin); Py_VISIT(self->pool); Py_VISIT(self->slow);
    Py_VISIT(self->finish); Py_VISIT(self->trapped); Py_VISIT(self->status_cls);
    Py_VISIT(self->trap_cls); Py_VISIT(self->last_pod); Py_VISIT(self->last_uid);
    return 0;
}

static int hot_clear(Hot *self) {
    Py_CLEAR(self->plugin); Py_CLEAR(self->pool); Py_CLEAR(self->slow);
    Py_CLEAR(self->finish); Py_CLEAR(self->trapped); Py_CLEAR(self->status_cls);
    Py_CLEAR(self->trap_cls); Py_CLEAR(self->last_pod); Py_CLEAR(self->last_uid);
    return 0;
}

static void hot_dealloc(Hot *self) {
    PyObject_GC_UnTrack(self);
    hot_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *hot_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *plugin, *pool, *slow, *finish, *trapped, *status_cls, *trap_cls;
    int score;
    (void)kw;
    if (!PyArg_ParseTuple(args, "OOOOOOOp", &plugin, &pool, &slow, &finish, &trapped,
                          &status_cls, &trap_cls, &score))
        return NULL;
    Hot *self = (Hot *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = hot_vectorcall;
    self->plugin = Py_NewRef(plugin);
    self->pool = Py_NewRef(pool);
    self->slow = Py_NewRef(slow);
    self->finish = Py_NewRef(finish);
    self->trapped = Py_NewRef(trapped);
    self->status_cls = Py_NewRef(status_cls);
    self->trap_cls = Py_NewRef(trap_cls);
    self->score = score;
    return (PyObject *)self;
}

static PyTypeObject HotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wasmsched.wasm._native.Hot",
    .tp_basicsize = sizeof(Hot),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Hot(plugin, pool, slow, finish, trapped, Status, GuestTrap, score)",
    .tp_new = hot_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Hot, vectorcall),
    .tp_traverse = (traverseproc)hot_traverse,
    .tp_clear = (inquiry)hot_clear,
    .tp_dealloc = (destructor)hot_dealloc,
};

static int hot_init_names(void) {
    s_scheduled = PyUnicode_InternFromString("scheduled");
    s_scheduled_uid = PyUnicode_InternFromString("scheduled_uid");
    s_lock = PyUnicode_InternFromString("lock");
    s_free = PyUnicode_InternFromString("free");
    s_dead = PyUnicode_InternFromString("dead");
    s_ctx = PyUnicode_InternFromString("ctx");
    s_name = PyUnicode_InternFromString("name");
    s_waiters = PyUnicode_InternFromString("waiters");
    s_wake = PyUnicode_InternFromString("wake");
    s_filter = PyUnicode_InternFromString("filter");
    s_score = PyUnicode_InternFromString("score");
    s_empty = PyUnicode_FromString("");
    return (s_scheduled && s_scheduled_uid && s_lock && s_free && s_dead && s_ctx && s_name &&
            s_waiters && s_wake && s_filter && s_score && s_empty) ? 0 : -1;
}

/* configure_hot(GuestPool, Guest, CallLock, NodeInfo): the slot offsets a call reads. */
static PyObject *configure_hot(PyObject *mod, PyObject *args) {
    PyObject *pool_cls, *guest_cls, *lock_cls, *node_cls;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyType_Type, &pool_cls, &PyType_Type, &guest_cls,
                          &PyType_Type, &lock_cls, &PyType_Type, &node_cls))
        return NULL;
    static const struct { int which; int cls; const char *name; } fields[H_N] = {
        {H_POOL_SCHEDULED, 0, "scheduled"}, {H_POOL_UID, 0, "scheduled_uid"},
        {H_GUEST_LOCK, 1, "lock"}, {H_GUEST_DEAD, 1, "dead"}, {H_GUEST_FILTER, 1, "filter"},
        {H_GUEST_SCORE, 1, "score"}, {H_GUEST_CTX, 1, "ctx"}, {H_LOCK_FREE, 2, "free"},
        {H_LOCK_WAITERS, 2, "waiters"}, {H_NODE_NAME, 3, "name"},
    };
    PyObject *classes[4] = {pool_cls, guest_cls, lock_cls, node_cls};
    Py_ssize_t off[H_N];
    for (int i = 0; i < H_N; i++)
        if (slot_offset(classes[fields[i].cls], fields[i].name, &off[fields[i].which]) < 0)
            return NULL;
    memcpy(hot_off, off, sizeof off);
    Py_XSETREF(pool_type, (PyTypeObject *)Py_NewRef(pool_cls));
    Py_XSETREF(guest_type, (PyTypeObject *)Py_NewRef(guest_cls));
    Py_XSETREF(lock_type, (PyTypeObject *)Py_NewRef(lock_cls));
    Py_XSETREF(node_info_type, (PyTypeObject *)Py_NewRef(node_cls));
    Py_RETURN_NONE;
}
