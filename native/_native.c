/* wasmsched.wasm._native: the compiled call path to wasmtime (see _fastpath.py).
 *
 * Caller: calls one export through wasmtime_func_call_unchecked with a value array owned
 * by the caller object (allocated once), re-arming the store's epoch deadline through a
 * Python callable only when the epoch moved, as the ctypes path does.  A call keeps the
 * GIL, the watchdog thread below standing in for the epoch ticker (a Python thread)
 * meanwhile; without the watchdog a call releases the GIL so that the ticker runs.
 *
 * Host: the env of a wasmtime_func_new_unchecked host function.  The trampoline takes the
 * GIL, decodes the raw arguments, and either runs a native fast case (the current node
 * name getter, the klog gate that drops a record below the configured severity) or calls
 * the Python implementation; an exception becomes a trap through the Python trap_for, so
 * nothing unwinds through wasmtime.  Any unusual case (out-of-bounds write, no memory)
 * falls back to the Python implementation, which raises the error the ctypes path raises.
 *
 * klog.h: the klog case of the trampoline (records built and retained in C).
 * hot.h: Hot, WasmPlugin.filter and WasmPlugin.score in C for the common case.
 * Caller.each: one call per node name, the loop of the batch forms (wasm/nodes.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <structmember.h>
#include "wasmtime_decls.h"

static wasmtime_func_call_unchecked_fn p_call = NULL;
static wasmtime_trap_new_fn p_trap_new = NULL;
static wasmtime_memory_data_size_fn p_mem_size = NULL;
static PyObject *s_node_name = NULL;
static PyObject *s_severity = NULL;
static PyObject *s_dirty = NULL;
static PyObject *s_used = NULL;
static PyObject *s_logged = NULL;  /* CallContext.dirty after a call that only logged */
static PyObject *s_zero = NULL;
static PyObject *s_env, *s_pod, *s_uid, *s_cycle_uid, *s_cycle_used, *s_trim_logs, *s_cache,
    *s_show;

/* Direct access to __slots__ members (offsets read from the classes' member descriptors
 * by configure_logs): the attribute protocol costs more than the rest of a log record. */
#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))
static void slot_put(PyObject *o, Py_ssize_t off, PyObject *v /* stolen */) {
    PyObject *old = SLOT(o, off);
    SLOT(o, off) = v;
    Py_XDECREF(old);
}

enum { R_SEVERITY, R_STRUCTURED, R_MESSAGE, R_KVS, R_RAW, R_RAW_KVS, R_SIZE, R_N };
static const char *const rec_names[R_N] = {"severity", "structured", "_message", "_kvs",
                                           "_raw", "_raw_kvs", "size"};
enum { C_ENV, C_POD, C_CYCLE_UID, C_USED, C_CYCLE_USED, C_DIRTY, C_NODE_NAME, C_N };
static const char *const ctx_names[C_N] = {"env", "pod", "cycle_uid", "used", "cycle_used",
                                           "dirty", "node_name"};
enum { E_SEVERITY, E_LOGS, E_LOG_BYTES, E_LOGGER, E_N };
static const char *const env_names[E_N] = {"severity", "logs", "log_bytes", "logger"};
static Py_ssize_t rec_off[R_N], ctx_off[C_N], env_off[E_N];
static PyTypeObject *ctx_type = NULL, *env_type = NULL;
static PyObject *level_keys[5];  /* 10, 20, 30, 40, 50: logging's levels */

/* ---------------------------------------------------------------- watchdog
 *
 * An export call keeps the GIL (releasing and retaking it around every call, and again in
 * every host function, cost more than a no-op guest call). This C thread keeps the epoch
 * meanwhile: while a call is held it advances the engine's epoch one tick every ``tick``
 * seconds and counts the ticks. A call re-arms the deadline whenever the count moved since
 * its caller last armed (or the Python ticker's count moved), and records the count it
 * armed at in the instance's ``armed[1]``, from which a host function tells that host work
 * overran the deadline. Compiled instances need no Python ticker: that thread (for the
 * ctypes path, wasm/_fastpath.py: _tick_forever) waits on the GIL at every tick, and every
 * GIL release of this thread woke it again. When both run, the Python ticker leaves the
 * engine's epoch alone while a call is held (``calls_held``), so the two never tick the
 * same interval twice; its read races the count by one tick at most: a deadline can come
 * one tick (5 ms) early, never late. */
typedef void (*wasmtime_engine_increment_epoch_fn)(void *engine);
static wasmtime_engine_increment_epoch_fn p_increment_epoch = NULL;
static void *p_engine = NULL;
static long tick_ns = 0;
static atomic_int held_calls = 0;
static atomic_ulong held_ticks = 0;
static int watchdog_started = 0;
/* Set while this thread is inside a held export call, so holds the GIL: a host function
 * called back from that call need not ask for the GIL again (host_trampoline). */
static _Thread_local int in_held_call = 0;

static void *watchdog_main(void *unused) {
    (void)unused;
    struct timespec ts = {tick_ns / 1000000000L, tick_ns % 1000000000L};
    for (;;) {
        nanosleep(&ts, NULL);
        if (atomic_load(&held_calls) > 0) {
            atomic_fetch_add(&held_ticks, 1);
            p_increment_epoch(p_engine);
        }
    }
    return NULL;
}

/* In a forked child the thread is gone: the next configure_watchdog (wasm/epoch.py:
 * _restart_after_fork, when the parent had one) starts another. */
static void watchdog_after_fork(void) { watchdog_started = 0; atomic_store(&held_calls, 0); }

/* ---------------------------------------------------------------- untracked records
 *
 * untrack_class(cls) -> bool: turns a plain ``__slots__`` class (LogRecord, right after
 * its class statement, before any instance exists) into one whose instances the cyclic
 * collector does not know. Every class statement makes a GC type, and each allocation of a
 * GC object counts towards the next collection even when untracked at once, so a guest
 * that logs on every Score made the collector run every 700 records, each run traversing
 * the young objects of the whole simulation. A record holds only ints, bools, bytes, None,
 * strings and tuples of strings: it can be in no reference cycle. The class keeps its
 * slots, methods and pickling; its instances are freed by ``untracked_dealloc`` (the
 * default deallocator of a non-GC class would not release the slots). False, and nothing
 * changed, for any class or Python version this is not known to be right for. */
static void untracked_dealloc(PyObject *self) {
    PyTypeObject *type = Py_TYPE(self);
    for (PyMemberDef *m = type->tp_members; m != NULL && m->name != NULL; m++)
        if (m->type == T_OBJECT_EX) Py_CLEAR(*(PyObject **)((char *)self + m->offset));
    type->tp_free(self);
    Py_DECREF(type);  /* an instance of a heap type holds a reference to it */
}

static PyObject *untrack_class(PyObject *mod, PyObject *arg) {
    (void)mod;
    if (!PyType_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "untrack_class expects a class");
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    PyTypeObject *t = (PyTypeObject *)arg;
    unsigned long need = Py_TPFLAGS_HEAPTYPE | Py_TPFLAGS_HAVE_GC;
    unsigned long refuse = Py_TPFLAGS_MANAGED_DICT;
#ifdef Py_TPFLAGS_MANAGED_WEAKREF
    refuse |= Py_TPFLAGS_MANAGED_WEAKREF;
#endif
    PyObject *subclasses = PyObject_CallMethod(arg, "__subclasses__", NULL);
    if (subclasses == NULL) return NULL;
    int has_subclasses = PyList_GET_SIZE(subclasses) > 0;
    Py_DECREF(subclasses);
    if ((t->tp_flags & need) != need || (t->tp_flags & refuse) || has_subclasses ||
        t->tp_base != &PyBaseObject_Type || t->tp_dictoffset != 0 ||
        t->tp_weaklistoffset != 0 || t->tp_itemsize != 0 || t->tp_del != NULL ||
        t->tp_finalize != NULL || t->tp_members == NULL)
        Py_RETURN_FALSE;
    t->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
    t->tp_free = PyObject_Free;
    t->tp_dealloc = untracked_dealloc;
    t->tp_traverse = NULL;
    t->tp_clear = NULL;
    PyType_Modified(t);
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

/* watchdog_ticks() -> int: the watchdog's count of ticks (tests). */
static PyObject *watchdog_ticks(PyObject *mod, PyObject *unused) {
    (void)mod; (void)unused;
    return PyLong_FromUnsignedLong(atomic_load(&held_ticks));
}

/* calls_held() -> bool: whether an export call holds the GIL with the watchdog ticking. */
static PyObject *calls_held(PyObject *mod, PyObject *unused) {
    (void)mod; (void)unused;
    return PyBool_FromLong(atomic_load(&held_calls) > 0);
}

/* configure_watchdog(increment_epoch, engine, tick_seconds) -> bool: starts the thread
 * once; whether it runs. */
static PyObject *configure_watchdog(PyObject *mod, PyObject *args) {
    unsigned long long fn, engine;
    double tick;
    (void)mod;
    if (!PyArg_ParseTuple(args, "KKd", &fn, &engine, &tick)) return NULL;
    if (watchdog_started) Py_RETURN_TRUE;
    if (!fn || !engine || !(tick > 0)) {
        PyErr_SetString(PyExc_ValueError, "bad watchdog arguments");
        return NULL;
    }
    p_increment_epoch = (wasmtime_engine_increment_epoch_fn)(uintptr_t)fn;
    p_engine = (void *)(uintptr_t)engine;
    tick_ns = (long)(tick * 1e9);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&thread, &attr, watchdog_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) Py_RETURN_FALSE;  /* no watchdog: a call releases the GIL, as before */
    watchdog_started = 1;
    Py_RETURN_TRUE;
}

/* ---------------------------------------------------------------- Caller */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    wasmtime_context_t *ctx;
    const wasmtime_func_t *func;
    size_t count;
    int wide;
    PyObject *armed;   /* list [epoch count when armed | None] */
    PyObject *epoch;   /* list [ticker count] */
    PyObject *arm;     /* callable () -> None */
    PyObject *failure; /* callable (err: int | None) -> BaseException */
    wasm_trap_t **trap_slot; /* the ctypes c_void_p the failure path reads */
    PyObject *keep;    /* objects owning ctx/func memory */
    long long last;    /* the raw result of the last call ``each`` made */
    unsigned long ticks_seen; /* the watchdog's count when this caller last armed */
    wasmtime_val_raw_t vals[1];
} Caller;

/* One export call: 0 with *out set, or -1 with the call's exception set.  With the
 * watchdog running the GIL is kept across the call (releasing and retaking it cost more
 * than a no-op guest call): the call counts as held, so the watchdog advances the epoch
 * meanwhile, and the deadline is re-armed when either the Python ticker's count or the
 * watchdog's moved since this caller last armed (``ticks_seen``: read per call, a field of
 * the caller costs less than the instance's ``armed[1]`` int). */
static int caller_call(Caller *self, long long *out) {
    int held = watchdog_started;
    if (held) atomic_fetch_add(&held_calls, 1);
    unsigned long ticks = held ? atomic_load(&held_ticks) : 0;
    if (PyList_GET_ITEM(self->armed, 0) != PyList_GET_ITEM(self->epoch, 0) ||
        (held && ticks != self->ticks_seen)) {
        PyObject *r = PyObject_CallNoArgs(self->arm);
        PyObject *at = NULL;
        if (r != NULL) at = held ? PyLong_FromUnsignedLong(ticks) : Py_NewRef(Py_None);
        Py_XDECREF(r);
        if (at == NULL || PyList_SetItem(self->armed, 1, at) < 0) {
            if (held) atomic_fetch_sub(&held_calls, 1);
            return -1;
        }
        self->ticks_seen = ticks;
    }
    wasm_trap_t *trap = NULL;
    wasmtime_error_t *err;
    self->vals[0].i64 = 0;
    if (held) {
        int outer = in_held_call;  /* a host function may call another export */
        in_held_call = 1;
        err = p_call(self->ctx, self->func, self->vals, self->count, &trap);
        in_held_call = outer;
        atomic_fetch_sub(&held_calls, 1);
    } else {
        Py_BEGIN_ALLOW_THREADS
        err = p_call(self->ctx, self->func, self->vals, self->count, &trap);
        Py_END_ALLOW_THREADS
    }
    if (err != NULL || trap != NULL) {
        *self->trap_slot = trap;
        PyObject *e = err ? PyLong_FromVoidPtr(err) : Py_NewRef(Py_None);
        if (e == NULL) return -1;
        PyObject *exc = PyObject_CallOneArg(self->failure, e);
        Py_DECREF(e);
        if (exc == NULL) return -1;
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
        return -1;
    }
    if (self->count == 0) *out = 0;
    else *out = self->wide ? (long long)self->vals[0].i64 : (long long)self->vals[0].i32;
    return 0;
}

static int caller_invoke(Caller *self, long long *out) { return caller_call(self, out); }

static PyObject *caller_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    (void)args;
    if (PyVectorcall_NARGS(nargsf) != 0 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "an export caller takes no arguments");
        return NULL;
    }
    long long value;
    if (caller_invoke((Caller *)self_, &value) < 0) return NULL;
    return PyLong_FromLongLong(value);
}

/* Caller.each(ctx, names, out, start, ok_codes) -> int: calls the export once per node
 * name of ``names`` from index ``start``, with ``ctx.node_name`` set to it, appending each
 * raw result to ``out``.  It returns the index after the last node called: len(names), or
 * earlier, right after a call that left ``ctx.dirty`` true (results the Python side reads
 * and resets) or whose status code (the low word) is not in the ``ok_codes`` bit mask.  A
 * call that only logged (``ctx.dirty`` is LOGGED, see the klog case below) has its host
 * byte count reset here, as CallContext.reset_results would.  A trap raises the caller's
 * exception; ``out`` then holds the results of the nodes before it.  With ``high`` true
 * each result is appended as its signed high word (a Score's score) and the whole raw
 * value of the last call is kept in ``last``. */
static PyObject *caller_loop(Caller *self, PyObject *ctx, PyObject *names, PyObject *out,
                             Py_ssize_t start, unsigned long long ok_codes, int high);

static PyObject *caller_each(Caller *self, PyObject *args) {
    PyObject *ctx, *names, *out;
    Py_ssize_t start;
    unsigned long long ok_codes;
    int high = 0;
    if (!PyArg_ParseTuple(args, "OO!O!nK|p", &ctx, &PyList_Type, &names, &PyList_Type, &out,
                          &start, &ok_codes, &high))
        return NULL;
    return caller_loop(self, ctx, names, out, start, ok_codes, high);
}

static PyObject *caller_loop(Caller *self, PyObject *ctx, PyObject *names, PyObject *out,
                             Py_ssize_t start, unsigned long long ok_codes, int high) {
    Py_ssize_t n = PyList_GET_SIZE(names), i;
    int fast = ctx_type != NULL && Py_TYPE(ctx) == ctx_type;  /* a CallContext: slots */
    for (i = start < 0 ? 0 : start; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        if (fast) slot_put(ctx, ctx_off[C_NODE_NAME], Py_NewRef(name));
        else if (PyObject_SetAttr(ctx, s_node_name, name) < 0) return NULL;
        long long value;
        if (caller_call(self, &value) < 0) return NULL;
        self->last = value;
        PyObject *v = PyLong_FromLongLong(high ? value >> 32 : value);
        if (v == NULL) return NULL;
        int rc = PyList_Append(out, v);
        Py_DECREF(v);
        if (rc < 0) return NULL;
        PyObject *dirty = fast ? Py_XNewRef(SLOT(ctx, ctx_off[C_DIRTY]))
                               : PyObject_GetAttr(ctx, s_dirty);
        if (dirty == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_AttributeError, "dirty");
            return NULL;
        }
        int logged = dirty == s_logged;
        int clean = dirty == Py_False;
        Py_DECREF(dirty);
        if (logged) {
            if (fast) {
                slot_put(ctx, ctx_off[C_USED], Py_NewRef(s_zero));
                slot_put(ctx, ctx_off[C_DIRTY], Py_NewRef(Py_False));
            } else if (PyObject_SetAttr(ctx, s_used, s_zero) < 0 ||
                       PyObject_SetAttr(ctx, s_dirty, Py_False) < 0) {
                return NULL;
            }
        } else if (!clean) {
            return PyLong_FromSsize_t(i + 1);
        }
        uint32_t code = (uint32_t)value;
        if (code >= 64 || !((ok_codes >> code) & 1)) return PyLong_FromSsize_t(i + 1);
    }
    return PyLong_FromSsize_t(i);
}

static PyMemberDef caller_members[] = {
    {"last", T_LONGLONG, offsetof(Caller, last), READONLY, "raw result of each's last call"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef caller_methods[] = {
    {"each", (PyCFunction)caller_each, METH_VARARGS,
     "each(ctx, names, out, start, ok_codes, high=False) -> next index: a call per node"},
    {NULL, NULL, 0, NULL},
};

static int caller_traverse(Caller *self, visitproc visit, void *arg) {
    Py_VISIT(self->armed); Py_VISIT(self->epoch); Py_VISIT(self->arm);
    Py_VISIT(self->failure); Py_VISIT(self->keep);
    return 0;
}

static int caller_clear(Caller *self) {
    Py_CLEAR(self->armed); Py_CLEAR(self->epoch); Py_CLEAR(self->arm);
    Py_CLEAR(self->failure); Py_CLEAR(self->keep);
    return 0;
}

static void caller_dealloc(Caller *self) {
    PyObject_GC_UnTrack(self);
    caller_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *caller_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    unsigned long long ctx, func, trap_slot;
    Py_ssize_t count;
    int wide;
    PyObject *armed, *epoch, *arm, *failure, *keep;
    (void)kw;
    if (p_call == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "wasmsched.wasm._native is not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "KKnpO!O!OOKO", &ctx, &func, &count, &wide, &PyList_Type,
                          &armed, &PyList_Type, &epoch, &arm, &failure, &trap_slot, &keep))
        return NULL;
    if (PyList_GET_SIZE(armed) < 2 || PyList_GET_SIZE(epoch) < 1 || count < 0 || count > 1) {
        PyErr_SetString(PyExc_ValueError, "bad caller arguments");
        return NULL;
    }
    Caller *self = (Caller *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = caller_vectorcall;
    self->ctx = (wasmtime_context_t *)(uintptr_t)ctx;
    self->func = (const wasmtime_func_t *)(uintptr_t)func;
    self->count = (size_t)count;
    self->wide = wide;
    self->armed = Py_NewRef(armed);
    self->epoch = Py_NewRef(epoch);
    self->arm = Py_NewRef(arm);
    self->failure = Py_NewRef(failure);
    self->trap_slot = (wasm_trap_t **)(uintptr_t)trap_slot;
    self->keep = Py_NewRef(keep);
    self->ticks_seen = ~0UL;  /* arm on the first held call */
    return (PyObject *)self;
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wasmsched.wasm._native.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Caller(ctx, func, count, wide, armed, epoch, arm, failure, trap_slot, keep)",
    .tp_new = caller_new,
    .tp_methods = caller_methods,
    .tp_members = caller_members,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_traverse = (traverseproc)caller_traverse,
    .tp_clear = (inquiry)caller_clear,
    .tp_dealloc = (destructor)caller_dealloc,
};

/* ---------------------------------------------------------------- Host */

enum { KIND_PYTHON = 0, KIND_NODE_NAME = 1, KIND_LOG_GATE = 2, KIND_LOG = 3 };

typedef struct {
    PyObject_HEAD
    PyObject *impl;
    int nparams;
    unsigned wide_mask;  /* bit i: parameter i is i64 */
    int result;          /* 0 none, 1 i32, 2 i64 */
    int kind;
    PyObject *label;     /* str */
    PyObject *trap_for;  /* (label, exc) -> trap address */
    PyObject *overrun;   /* () -> exception */
    PyObject *armed;
    PyObject *epoch;
    long long allowed;
    PyObject *state;     /* CallContext (node name) or PluginEnv (log gate) */
    /* what the klog case last looked up: the pod and its uid, the logger and its level
     * cache (logging.Logger._cache: one dict for the logger's life, cleared in place) */
    PyObject *last_pod, *last_uid, *last_logger, *last_levels;
    wasmtime_context_t *mem_ctx;
    const wasmtime_memory_t *mem;
    uint8_t *mem_base;
    size_t mem_size;
} Host;

/* A trap for the pending Python exception (cleared), through trap_for. */
static wasm_trap_t *trap_from_error(Host *h) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (value == NULL) value = Py_NewRef(Py_None);
    PyObject *r = PyObject_CallFunctionObjArgs(h->trap_for, h->label, value, NULL);
    Py_DECREF(value);
    wasm_trap_t *trap = NULL;
    if (r != NULL) {
        trap = (wasm_trap_t *)PyLong_AsVoidPtr(r);
        Py_DECREF(r);
    }
    if (PyErr_Occurred()) PyErr_Clear();
    if (trap == NULL) {
        static const char msg[] = "wasmsched: host function failed";
        trap = p_trap_new(msg, sizeof msg - 1);
    }
    return trap;
}

/* Non-zero when the call's deadline passed during host work (see _fastpath: _callback):
 * by the watchdog's count since the call armed (armed[1]: a held call) or by the Python
 * ticker's (armed[0]). */
static int overran(Host *h) {
    PyObject *at = PyList_GET_ITEM(h->armed, 1);
    if (at != Py_None && in_held_call) {
        unsigned long t = PyLong_AsUnsignedLong(at);
        if (t == (unsigned long)-1 && PyErr_Occurred()) PyErr_Clear();
        else if ((long long)(atomic_load(&held_ticks) - t) > h->allowed) return 1;
    }
    PyObject *start = PyList_GET_ITEM(h->armed, 0);
    if (start == Py_None) return 0;
    long long s = PyLong_AsLongLong(start);
    long long now = PyLong_AsLongLong(PyList_GET_ITEM(h->epoch, 0));
    if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return now - s > h->allowed;
}

static wasm_trap_t *overrun_trap(Host *h) {
    PyObject *exc = PyObject_CallNoArgs(h->overrun);
    if (exc == NULL) return trap_from_error(h);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return trap_from_error(h);
}

static void put_result(Host *h, wasmtime_val_raw_t *args, long long r) {
    if (h->result == 2) {
        args[0].i64 = (int64_t)r;
    } else if (h->result == 1) {
        memset(&args[0], 0, 8);
        args[0].i32 = (int32_t)(uint32_t)r;
    }
}

/* 1: handled natively with *out set; 0: not handled (run the Python implementation);
 * -1: a Python error is set. */
static int node_name_fast(Host *h, wasmtime_val_raw_t *args, long long *out) {
    uint32_t buf = (uint32_t)args[0].i32, limit = (uint32_t)args[1].i32;
    PyObject *name = ctx_type != NULL && Py_TYPE(h->state) == ctx_type
                         ? Py_XNewRef(SLOT(h->state, ctx_off[C_NODE_NAME]))
                         : PyObject_GetAttr(h->state, s_node_name);
    if (name == NULL) return PyErr_Occurred() ? -1 : 0;  /* an unset slot: Python's case */
    Py_ssize_t n;
    const char *data = PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, &n) : NULL;
    if (data == NULL) { Py_DECREF(name); PyErr_Clear(); return 0; }
    if (n == 0 || (size_t)n > limit) { Py_DECREF(name); *out = n; return 1; }
    size_t end = (size_t)buf + (size_t)n;
    if (h->mem_base == NULL) { Py_DECREF(name); return 0; }
    if (end > h->mem_size) h->mem_size = p_mem_size(h->mem_ctx, h->mem);
    if (end > h->mem_size) { Py_DECREF(name); return 0; }
    memcpy(h->mem_base + buf, data, (size_t)n);
    Py_DECREF(name);
    *out = n;
    return 1;
}

static int log_gate(Host *h, wasmtime_val_raw_t *args) {
    int32_t severity = args[0].i32;
    PyObject *threshold = PyObject_GetAttr(h->state, s_severity);
    if (threshold == NULL) return -1;
    long t = PyLong_AsLong(threshold);
    Py_DECREF(threshold);
    if (t == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return severity < t ? 1 : 0;
}


#include "klog.h"

static wasm_trap_t *host_trampoline(void *env, wasmtime_caller_t *caller,
                                    wasmtime_val_raw_t *args, size_t nargs) {
    Host *h = (Host *)env;
    (void)caller; (void)nargs;
    int ensure = !in_held_call;
    PyGILState_STATE gil = ensure ? PyGILState_Ensure() : PyGILState_LOCKED;
    wasm_trap_t *trap = NULL;
    long long value = 0;
    int done = 0;
    if (h->kind == KIND_NODE_NAME) done = node_name_fast(h, args, &value);
    else if (h->kind == KIND_LOG_GATE) done = log_gate(h, args);
    else if (h->kind == KIND_LOG) done = log_fast(h, args);
    if (done < 0) { trap = trap_from_error(h); goto out; }
    if (!done) {
        PyObject *argv[16];
        int i;
        for (i = 0; i < h->nparams; i++) {
            argv[i] = (h->wide_mask >> i) & 1
                          ? PyLong_FromUnsignedLongLong((uint64_t)args[i].i64)
                          : PyLong_FromUnsignedLong((uint32_t)args[i].i32);
            if (argv[i] == NULL) break;
        }
        PyObject *r = NULL;
        if (i == h->nparams) r = PyObject_Vectorcall(h->impl, argv, (size_t)h->nparams, NULL);
        for (int j = 0; j < i; j++) Py_DECREF(argv[j]);
        if (r == NULL) { trap = trap_from_error(h); goto out; }
        if (h->result && r != Py_None) {
            /* truncated to the result type, as the ctypes path masks */
            value = (long long)PyLong_AsUnsignedLongLongMask(r);
            if (PyErr_Occurred()) { Py_DECREF(r); trap = trap_from_error(h); goto out; }
        }
        Py_DECREF(r);
    }
    if (overran(h)) { trap = overrun_trap(h); goto out; }
    put_result(h, args, value);
out:
    if (ensure) PyGILState_Release(gil);
    return trap;
}

static int host_traverse(Host *self, visitproc visit, void *arg) {
    Py_VISIT(self->impl); Py_VISIT(self->label); Py_VISIT(self->trap_for);
    Py_VISIT(self->overrun); Py_VISIT(self->armed); Py_VISIT(self->epoch);
    Py_VISIT(self->state); Py_VISIT(self->last_pod); Py_VISIT(self->last_uid);
    Py_VISIT(self->last_logger); Py_VISIT(self->last_levels);
    return 0;
}

static int host_clear(Host *self) {
    Py_CLEAR(self->impl); Py_CLEAR(self->label); Py_CLEAR(self->trap_for);
    Py_CLEAR(self->overrun); Py_CLEAR(self->armed); Py_CLEAR(self->epoch);
    Py_CLEAR(self->state); Py_CLEAR(self->last_pod); Py_CLEAR(self->last_uid);
    Py_CLEAR(self->last_logger); Py_CLEAR(self->last_levels);
    return 0;
}

static void host_dealloc(Host *self) {
    PyObject_GC_UnTrack(self);
    host_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *host_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *impl, *label, *trap_for, *overrun, *armed, *epoch, *state;
    int nparams, result, kind;
    unsigned int wide_mask;
    long long allowed;
    (void)kw;
    if (p_call == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "wasmsched.wasm._native is not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OiIiiUOOO!O!LO", &impl, &nparams, &wide_mask, &result,
                          &kind, &label, &trap_for, &overrun, &PyList_Type, &armed,
                          &PyList_Type, &epoch, &allowed, &state))
        return NULL;
    if (nparams < 0 || nparams > 16 || result < 0 || result > 2 || kind < 0 || kind > 3 ||
        PyList_GET_SIZE(armed) < 2 || PyList_GET_SIZE(epoch) < 1) {
        PyErr_SetString(PyExc_ValueError, "bad host function arguments");
        return NULL;
    }
    if ((kind == KIND_NODE_NAME && (nparams != 2 || result != 1 || wide_mask)) ||
        (kind == KIND_LOG_GATE && (nparams < 1 || result != 0 || (wide_mask & 1))) ||
        (kind == KIND_LOG && ((nparams != 3 && nparams != 5) || result != 0 || wide_mask))) {
        PyErr_SetString(PyExc_ValueError, "host function signature does not fit its kind");
        return NULL;
    }
    Host *self = (Host *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->impl = Py_NewRef(impl);
    self->nparams = nparams;
    self->wide_mask = wide_mask;
    self->result = result;
    self->kind = kind;
    self->label = Py_NewRef(label);
    self->trap_for = Py_NewRef(trap_for);
    self->overrun = Py_NewRef(overrun);
    self->armed = Py_NewRef(armed);
    self->epoch = Py_NewRef(epoch);
    self->allowed = allowed;
    self->state = Py_NewRef(state);
    return (PyObject *)self;
}

static PyObject *host_set_memory(Host *self, PyObject *args) {
    unsigned long long ctx, mem, base;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "KKKn", &ctx, &mem, &base, &size)) return NULL;
    self->mem_ctx = (wasmtime_context_t *)(uintptr_t)ctx;
    self->mem = (const wasmtime_memory_t *)(uintptr_t)mem;
    self->mem_base = (uint8_t *)(uintptr_t)base;
    self->mem_size = (size_t)size;
    Py_RETURN_NONE;
}

static PyObject *host_detach(Host *self, PyObject *unused) {
    (void)unused;
    self->mem_base = NULL;
    self->mem_size = 0;
    self->mem = NULL;
    Py_RETURN_NONE;
}

static PyObject *host_env(Host *self, PyObject *unused) {
    (void)unused;
    return PyLong_FromVoidPtr(self);
}

static PyMethodDef host_methods[] = {
    {"set_memory", (PyCFunction)host_set_memory, METH_VARARGS,
     "set_memory(ctx, memory, base, size): the instance memory the native cases write"},
    {"detach", (PyCFunction)host_detach, METH_NOARGS, "forget the memory (instance closed)"},
    {"env", (PyCFunction)host_env, METH_NOARGS, "the env pointer for wasmtime_func_new_unchecked"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HostType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wasmsched.wasm._native.Host",
    .tp_basicsize = sizeof(Host),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Host(impl, nparams, wide_mask, result, kind, label, trap_for, overrun, "
              "armed, epoch, allowed, state)",
    .tp_new = host_new,
    .tp_methods = host_methods,
    .tp_traverse = (traverseproc)host_traverse,
    .tp_clear = (inquiry)host_clear,
    .tp_dealloc = (destructor)host_dealloc,
};

#include "hot.h"

/* ---------------------------------------------------------------- module */

static PyObject *configure(PyObject *mod, PyObject *args) {
    unsigned long long call, trap_new, mem_size;
    (void)mod;
    if (!PyArg_ParseTuple(args, "KKK", &call, &trap_new, &mem_size)) return NULL;
    if (!call || !trap_new || !mem_size) {
        PyErr_SetString(PyExc_ValueError, "null wasmtime function address");
        return NULL;
    }
    p_call = (wasmtime_func_call_unchecked_fn)(uintptr_t)call;
    p_trap_new = (wasmtime_trap_new_fn)(uintptr_t)trap_new;
    p_mem_size = (wasmtime_memory_data_size_fn)(uintptr_t)mem_size;
    Py_RETURN_NONE;
}

static PyObject *configure_logs(PyObject *mod, PyObject *args) {
    PyObject *cls, *ctx_cls, *env_cls;
    Py_ssize_t roff[R_N], coff[C_N], eoff[E_N];
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!O!O!LLLLL", &PyType_Type, &cls, &PyType_Type, &ctx_cls,
                          &PyType_Type, &env_cls, &lim_record, &lim_call, &lim_cycle,
                          &lim_logs, &lim_log_bytes))
        return NULL;
    for (int i = 0; i < R_N; i++) if (slot_offset(cls, rec_names[i], &roff[i]) < 0) return NULL;
    for (int i = 0; i < C_N; i++) if (slot_offset(ctx_cls, ctx_names[i], &coff[i]) < 0) return NULL;
    for (int i = 0; i < E_N; i++) if (slot_offset(env_cls, env_names[i], &eoff[i]) < 0) return NULL;
    memcpy(rec_off, roff, sizeof roff);
    memcpy(ctx_off, coff, sizeof coff);
    memcpy(env_off, eoff, sizeof eoff);
    Py_XSETREF(p_record_cls, Py_NewRef(cls));
    Py_XSETREF(ctx_type, (PyTypeObject *)Py_NewRef(ctx_cls));
    Py_XSETREF(env_type, (PyTypeObject *)Py_NewRef(env_cls));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"untrack_class", untrack_class, METH_O,
     "untrack_class(cls) -> bool: instances unknown to the cyclic collector (records)"},
    {"watchdog_ticks", watchdog_ticks, METH_NOARGS, "watchdog_ticks() -> int: its count"},
    {"calls_held", calls_held, METH_NOARGS,
     "calls_held() -> bool: an export call holds the GIL, the watchdog ticking for it"},
    {"configure_watchdog", configure_watchdog, METH_VARARGS,
     "configure_watchdog(increment_epoch, engine, tick_seconds) -> bool: the epoch of held calls"},
    {"configure_hot", configure_hot, METH_VARARGS,
     "configure_hot(GuestPool, Guest, CallLock, NodeInfo): slots the compiled calls read"},
    {"configure_logs", configure_logs, METH_VARARGS,
     "configure_logs(LogRecord, CallContext, PluginEnv, record, call, cycle, retained, "
     "retained_bytes)"},
    {"configure", configure, METH_VARARGS,
     "configure(call_unchecked, trap_new, memory_data_size): wasmtime function addresses"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "wasmsched.wasm._native",
    "The compiled call path to wasmtime's C API.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    pthread_atfork(NULL, NULL, watchdog_after_fork);
    if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&HostType) < 0 ||
        PyType_Ready(&HotType) < 0 || hot_init_names() < 0)
        return NULL;
    s_node_name = PyUnicode_InternFromString("node_name");
    s_severity = PyUnicode_InternFromString("severity");
    s_dirty = PyUnicode_InternFromString("dirty");
    s_used = PyUnicode_InternFromString("used");
    s_logged = PyLong_FromLong(2);
    s_zero = PyLong_FromLong(0);
    s_env = PyUnicode_InternFromString("env");
    s_pod = PyUnicode_InternFromString("pod");
    s_uid = PyUnicode_InternFromString("uid");
    s_cycle_uid = PyUnicode_InternFromString("cycle_uid");
    s_cycle_used = PyUnicode_InternFromString("cycle_used");
    s_trim_logs = PyUnicode_InternFromString("_trim_logs");
    s_cache = PyUnicode_InternFromString("_cache");
    s_show = PyUnicode_InternFromString("show");
    for (int i = 0; i < 5; i++)
        if ((level_keys[i] = PyLong_FromLong(10 * (i + 1))) == NULL) return NULL;
    if (!s_env || !s_pod || !s_uid || !s_cycle_uid || !s_cycle_used || !s_trim_logs ||
        !s_cache || !s_show)
        return NULL;
    if (s_node_name == NULL || s_severity == NULL || s_dirty == NULL || s_used == NULL ||
        s_logged == NULL || s_zero == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Caller", (PyObject *)&CallerType) < 0 ||
        PyModule_AddObjectRef(m, "Host", (PyObject *)&HostType) < 0 ||
        PyModule_AddObjectRef(m, "Hot", (PyObject *)&HotType) < 0 ||
        PyModule_AddObject(m, "TRAMPOLINE", PyLong_FromVoidPtr((void *)host_trampoline)) < 0 ||
        PyModule_AddObjectRef(m, "LOGGED", s_logged) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
