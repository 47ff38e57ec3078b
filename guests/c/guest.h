/*
 * guest.h: a tiny, test-only guest "SDK" for wasmsched's conformance guests.
 *
 * It declares the host imports of the kube-scheduler-wasm-extension ABI (upstream's
 * scheduler/plugin/host.go and guest/internal/imports) and the helpers the test guests share: the
 * buf/limit read protocol, a minimal protobuf field walker, a minimal JSON reader, string
 * building, status packing and TinyGo-style panics ("panic: <msg>\n" on stdout, then a
 * trap). Everything is static inline so each guest only links what it uses, and a host
 * import only appears in a guest that calls it.
 */
#ifndef WASMSCHED_GUEST_H
#define WASMSCHED_GUEST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/api.h>

#define GUEST_EXPORT(name) __attribute__((export_name(name)))
#define GUEST_IMPORT(module, name) __attribute__((import_module(module), import_name(name)))

/* ---- host imports -------------------------------------------------------------- */

/* k8s.io/api */
GUEST_IMPORT("k8s.io/api", "node")
uint32_t k8s_node(const char *name, uint32_t name_len, uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/api", "nodeList")
uint32_t k8s_node_list(uint8_t *buf, uint32_t limit);

/* k8s.io/klog */
GUEST_IMPORT("k8s.io/klog", "log")
void klog_log(int32_t severity, const char *msg, uint32_t msg_len);
GUEST_IMPORT("k8s.io/klog", "logs")
void klog_logs(int32_t severity, const char *msg, uint32_t msg_len, const char *kvs,
               uint32_t kvs_len);
GUEST_IMPORT("k8s.io/klog", "severity")
int32_t klog_severity(void);

/* k8s.io/scheduler getters (buf/limit protocol) */
GUEST_IMPORT("k8s.io/scheduler", "get_config")
uint32_t k8s_get_config(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "currentPod")
uint32_t k8s_current_pod(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "targetPod")
uint32_t k8s_target_pod(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "currentNodeName")
uint32_t k8s_current_node_name(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "filteredNodeList")
uint32_t k8s_filtered_node_list(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "nodeToStatusMap")
uint32_t k8s_node_to_status_map(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "nodeScoreList")
uint32_t k8s_node_score_list(uint8_t *buf, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "nodeImageStates")
uint32_t k8s_node_image_states(const char *name, uint32_t name_len, uint8_t *buf,
                               uint32_t limit);

/* k8s.io/scheduler result setters */
GUEST_IMPORT("k8s.io/scheduler", "result.status_reason")
void k8s_status_reason(const char *p, uint32_t n);
GUEST_IMPORT("k8s.io/scheduler", "result.node_names")
void k8s_node_names(const char *p, uint32_t n);
GUEST_IMPORT("k8s.io/scheduler", "result.nominated_node_name")
void k8s_nominated_node_name(const char *p, uint32_t n);
GUEST_IMPORT("k8s.io/scheduler", "result.cluster_events")
void k8s_cluster_events(const void *p, uint32_t n);
GUEST_IMPORT("k8s.io/scheduler", "result.normalized_score_list")
void k8s_normalized_score_list(const char *p, uint32_t n);

/* k8s.io/scheduler framework.Handle functions */
GUEST_IMPORT("k8s.io/scheduler", "handle.eventrecorder.eventf")
void k8s_eventf(const char *p, uint32_t n);
GUEST_IMPORT("k8s.io/scheduler", "handle.reject_waiting_pod")
void k8s_reject_waiting_pod(const char *uid, uint32_t uid_len, uint8_t *out, uint32_t limit);
GUEST_IMPORT("k8s.io/scheduler", "handle.get_waiting_pod")
void k8s_get_waiting_pod(const char *uid, uint32_t uid_len, uint8_t *out, uint32_t limit);

/* ---- status codes and packing -------------------------------------------------- */

enum {
    CODE_SUCCESS = 0,
    CODE_ERROR = 1,
    CODE_UNSCHEDULABLE = 2,
    CODE_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
    CODE_WAIT = 4,
    CODE_SKIP = 5,
};

/* score/postfilter: high word = score or nominating mode, low word = status code. */
static inline uint64_t pack_hi_lo(int32_t hi, int32_t lo) {
    return ((uint64_t)(uint32_t)hi << 32) | (uint64_t)(uint32_t)lo;
}

/* permit: high word = status code, low word = timeout in milliseconds (unsigned). */
static inline uint64_t pack_permit(int32_t code, uint32_t timeout_ms) {
    return ((uint64_t)(uint32_t)code << 32) | (uint64_t)timeout_ms;
}

/* ---- byte spans ---------------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    uint32_t n;
} span_t;

static inline span_t span_cstr(const char *s) {
    span_t r = {(const uint8_t *)s, (uint32_t)strlen(s)};
    return r;
}

static inline int span_eq(span_t a, span_t b) {
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

static inline int span_eq_cstr(span_t a, const char *s) { return span_eq(a, span_cstr(s)); }

/* ---- stdout, panics ------------------------------------------------------------ */

static inline void guest_stdout(const void *p, uint32_t n) {
    __wasi_ciovec_t iov = {(const uint8_t *)p, n};
    __wasi_size_t written;
    (void)__wasi_fd_write(1, &iov, 1, &written);
}

/* Like a TinyGo panic: "panic: <msg>\n" on stdout, then a trap. */
__attribute__((noreturn)) static inline void guest_panic_span(span_t msg) {
    guest_stdout("panic: ", 7);
    guest_stdout(msg.p, msg.n);
    guest_stdout("\n", 1);
    __builtin_trap();
}

__attribute__((noreturn)) static inline void guest_panic(const char *msg) {
    guest_panic_span(span_cstr(msg));
}

/* ---- string building ----------------------------------------------------------- */

typedef struct {
    char *p;
    uint32_t n;
    uint32_t cap;
} sb_t;

static inline void sb_reserve(sb_t *b, uint32_t extra) {
    if (b->n + extra <= b->cap) return;
    uint32_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) guest_panic("out of memory");
    b->cap = cap;
}

static inline void sb_bytes(sb_t *b, const void *p, uint32_t n) {
    sb_reserve(b, n);
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static inline void sb_span(sb_t *b, span_t s) { sb_bytes(b, s.p, s.n); }
static inline void sb_str(sb_t *b, const char *s) { sb_bytes(b, s, (uint32_t)strlen(s)); }
static inline void sb_char(sb_t *b, char c) { sb_bytes(b, &c, 1); }

static inline void sb_int(sb_t *b, int64_t v) {
    char tmp[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    sb_bytes(b, tmp + i, (uint32_t)(24 - i));
}

/* A JSON string literal with Go's encoding/json escaping of the characters that matter. */
static inline void sb_json_str(sb_t *b, span_t s) {
    static const char hex[] = "0123456789abcdef";
    sb_char(b, '"');
    for (uint32_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (c == '"' || c == '\\') {
            sb_char(b, '\\');
            sb_char(b, (char)c);
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sb_bytes(b, esc, 6);
        } else {
            sb_char(b, (char)c);
        }
    }
    sb_char(b, '"');
}

static inline span_t sb_as_span(const sb_t *b) {
    span_t r = {(const uint8_t *)b->p, b->n};
    return r;
}

/* ---- status reasons ------------------------------------------------------------ */

static inline void set_reason_span(span_t s) { k8s_status_reason((const char *)s.p, s.n); }
static inline void set_reason(const char *s) { set_reason_span(span_cstr(s)); }
static inline void set_reason_sb(const sb_t *b) { k8s_status_reason(b->p, b->n); }

/* ---- the buf/limit read protocol ----------------------------------------------- */

/* Like the TinyGo SDK: a 2048-byte buffer, grown to exactly the needed size when the
 * host answers with a larger length, then read again. */
#define GUEST_READ_BUF_LIMIT 2048

typedef struct {
    uint8_t *p;
    uint32_t n;
    uint32_t cap;
} gbuf_t;

typedef uint32_t (*getter_t)(uint8_t *buf, uint32_t limit);
typedef uint32_t (*named_getter_t)(const char *name, uint32_t name_len, uint8_t *buf,
                                   uint32_t limit);

static inline void gbuf_grow(gbuf_t *b, uint32_t need) {
    if (b->cap >= need && b->p) return;
    free(b->p);
    b->cap = need < GUEST_READ_BUF_LIMIT ? GUEST_READ_BUF_LIMIT : need;
    b->p = malloc(b->cap);
    if (!b->p) guest_panic("out of memory");
}

static inline span_t gbuf_span(const gbuf_t *b) {
    span_t r = {b->p, b->n};
    return r;
}

static inline span_t guest_read(gbuf_t *b, getter_t get) {
    gbuf_grow(b, GUEST_READ_BUF_LIMIT);
    uint32_t n = get(b->p, b->cap);
    if (n > b->cap) {
        gbuf_grow(b, n);
        uint32_t again = get(b->p, b->cap);
        if (again != n) guest_panic("value changed between two reads");
    }
    b->n = n;
    return gbuf_span(b);
}

static inline span_t guest_read_named(gbuf_t *b, named_getter_t get, span_t name) {
    gbuf_grow(b, GUEST_READ_BUF_LIMIT);
    uint32_t n = get((const char *)name.p, name.n, b->p, b->cap);
    if (n > b->cap) {
        gbuf_grow(b, n);
        uint32_t again = get((const char *)name.p, name.n, b->p, b->cap);
        if (again != n) guest_panic("value changed between two reads");
    }
    b->n = n;
    return gbuf_span(b);
}

/* ---- argv ---------------------------------------------------------------------- */

static int g_argc;
static char **g_argv;

/* Reads WASI argv (the plugin's Args). Call from main, i.e. inside _start. */
static inline void guest_read_args(void) {
    __wasi_size_t argc = 0, size = 0;
    if (__wasi_args_sizes_get(&argc, &size) != 0) guest_panic("args_sizes_get failed");
    g_argc = (int)argc;
    g_argv = calloc(argc + 1, sizeof(char *));
    char *buf = malloc(size ? size : 1);
    if (!g_argv || !buf) guest_panic("out of memory");
    if (argc && __wasi_args_get((uint8_t **)g_argv, (uint8_t *)buf) != 0)
        guest_panic("args_get failed");
}

/* argv[1] when exactly two args were given (upstream's test guests' convention), else "". */
static inline const char *guest_mode(void) { return g_argc == 2 ? g_argv[1] : ""; }

/* ---- protobuf ------------------------------------------------------------------ */

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_SGROUP = 3, PB_EGROUP = 4, PB_I32 = 5 };

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} pb_iter_t;

typedef struct {
    uint32_t field;
    uint32_t wire;
    uint64_t v;     /* varint / fixed value */
    span_t bytes;   /* length-delimited payload */
} pb_field_t;

static inline pb_iter_t pb_iter(span_t msg) {
    pb_iter_t it = {msg.p, msg.p + msg.n};
    return it;
}

static inline int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    const uint8_t *p = *pp;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) return -1;
        uint8_t c = *p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* 1: a field was read into f; 0: end of message; -1: malformed. Groups are rejected. */
static inline int pb_next(pb_iter_t *it, pb_field_t *f) {
    if (it->p >= it->end) return 0;
    uint64_t key;
    if (pb_varint(&it->p, it->end, &key)) return -1;
    f->field = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    if (f->field == 0) return -1;
    switch (f->wire) {
    case PB_VARINT:
        return pb_varint(&it->p, it->end, &f->v) ? -1 : 1;
    case PB_I64:
        if (it->end - it->p < 8) return -1;
        memcpy(&f->v, it->p, 8);
        it->p += 8;
        return 1;
    case PB_I32: {
        uint32_t v32;
        if (it->end - it->p < 4) return -1;
        memcpy(&v32, it->p, 4);
        f->v = v32;
        it->p += 4;
        return 1;
    }
    case PB_LEN: {
        uint64_t n;
        if (pb_varint(&it->p, it->end, &n)) return -1;
        if (n > (uint64_t)(it->end - it->p)) return -1;
        f->bytes.p = it->p;
        f->bytes.n = (uint32_t)n;
        it->p += n;
        return 1;
    }
    default:
        return -1;
    }
}

/* The last length-delimited occurrence of `field` (proto's "last one wins"). */
static inline int pb_find(span_t msg, uint32_t field, span_t *out) {
    pb_iter_t it = pb_iter(msg);
    pb_field_t f;
    int found = 0, r;
    while ((r = pb_next(&it, &f)) == 1) {
        if (f.field == field && f.wire == PB_LEN) {
            *out = f.bytes;
            found = 1;
        }
    }
    if (r < 0) guest_panic("malformed protobuf");
    return found;
}

/* A string field, empty when absent. */
static inline span_t pb_string(span_t msg, uint32_t field) {
    span_t s = {msg.p, 0};
    pb_find(msg, field, &s);
    return s;
}

static inline uint32_t pb_count(span_t msg, uint32_t field) {
    pb_iter_t it = pb_iter(msg);
    pb_field_t f;
    uint32_t n = 0;
    int r;
    while ((r = pb_next(&it, &f)) == 1) n += f.field == field;
    if (r < 0) guest_panic("malformed protobuf");
    return n;
}

/* Field numbers of k8s.io.api.core.v1 and meta.v1 messages (k8s.io/api core/v1 generated.proto). */
enum {
    OBJ_METADATA = 1,
    POD_SPEC = 2,
    META_NAME = 1,
    META_NAMESPACE = 3,
    META_UID = 5,
    META_RESOURCE_VERSION = 6,
    SPEC_CONTAINERS = 2,
    SPEC_NODE_NAME = 10,
    SPEC_INIT_CONTAINERS = 20,
    CONTAINER_IMAGE = 2,
    NODELIST_ITEMS = 2,
};

/* metadata.<field> of a Pod or Node. */
static inline span_t obj_meta(span_t obj, uint32_t field) {
    span_t meta = {obj.p, 0};
    pb_find(obj, OBJ_METADATA, &meta);
    return pb_string(meta, field);
}

static inline int pod_spec(span_t pod, span_t *spec) { return pb_find(pod, POD_SPEC, spec); }

static inline span_t pod_node_name(span_t pod) {
    span_t spec = {pod.p, 0};
    pod_spec(pod, &spec);
    return pb_string(spec, SPEC_NODE_NAME);
}

/* ---- JSON (just what the ABI's payloads need) ---------------------------------- */

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    char scratch[512]; /* unescaped strings that contained escapes */
} json_t;

static inline void json_init(json_t *j, span_t s) {
    j->p = s.p;
    j->end = s.p + s.n;
}

static inline void json_ws(json_t *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
}

static inline int json_peek(json_t *j) {
    json_ws(j);
    return j->p < j->end ? *j->p : -1;
}

static inline int json_lit(json_t *j, const char *lit) {
    uint32_t n = (uint32_t)strlen(lit);
    json_ws(j);
    if ((uint32_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return -1;
    j->p += n;
    return 0;
}

/* A string; escapes are decoded into j->scratch (ASCII \u escapes only). */
static inline int json_string(json_t *j, span_t *out) {
    if (json_peek(j) != '"') return -1;
    const uint8_t *start = ++j->p;
    int escaped = 0;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p == '\\') {
            escaped = 1;
            j->p++;
        }
        j->p++;
    }
    if (j->p >= j->end) return -1;
    const uint8_t *stop = j->p++;
    if (!escaped) {
        out->p = start;
        out->n = (uint32_t)(stop - start);
        return 0;
    }
    uint32_t n = 0;
    for (const uint8_t *q = start; q < stop && n < sizeof j->scratch; q++) {
        uint8_t c = *q;
        if (c == '\\') {
            c = *++q;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'r') c = '\r';
            else if (c == 'b') c = '\b';
            else if (c == 'f') c = '\f';
            else if (c == 'u') {
                unsigned v = 0;
                for (int k = 0; k < 4 && q + 1 < stop; k++) {
                    uint8_t h = *++q;
                    v = v * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                }
                c = (uint8_t)v;
            }
        }
        j->scratch[n++] = (char)c;
    }
    out->p = (const uint8_t *)j->scratch;
    out->n = n;
    return 0;
}

static inline int json_int(json_t *j, int64_t *out) {
    json_ws(j);
    int neg = 0;
    if (j->p < j->end && *j->p == '-') {
        neg = 1;
        j->p++;
    }
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return -1;
    uint64_t v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') v = v * 10 + (uint64_t)(*j->p++ - '0');
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static inline int json_skip(json_t *j) {
    int c = json_peek(j);
    if (c == '"') {
        span_t s;
        return json_string(j, &s);
    }
    if (c == '{' || c == '[') {
        int depth = 0;
        while (j->p < j->end) {
            c = *j->p;
            if (c == '"') {
                span_t s;
                if (json_string(j, &s)) return -1;
                continue;
            }
            j->p++;
            if (c == '{' || c == '[') depth++;
            else if ((c == '}' || c == ']') && --depth == 0) return 0;
        }
        return -1;
    }
    /* number, true, false, null */
    const uint8_t *start = j->p;
    while (j->p < j->end && *j->p != ',' && *j->p != '}' && *j->p != ']' && *j->p != ' ')
        j->p++;
    return j->p > start ? 0 : -1;
}

/* 1: an object follows ('{' consumed); 0: null; -1: anything else. */
static inline int json_obj_start(json_t *j) {
    int c = json_peek(j);
    if (c == '{') {
        j->p++;
        return 1;
    }
    return json_lit(j, "null") == 0 ? 0 : -1;
}

/* Next key of an object, positioned at its value. 1: key; 0: end ('}' consumed); -1. */
static inline int json_obj_next(json_t *j, span_t *key) {
    int c = json_peek(j);
    if (c == '}') {
        j->p++;
        return 0;
    }
    if (c == ',') j->p++;
    if (json_string(j, key) || json_lit(j, ":")) return -1;
    return 1;
}

/* 1: an array follows ('[' consumed); 0: null; -1. */
static inline int json_arr_start(json_t *j) {
    int c = json_peek(j);
    if (c == '[') {
        j->p++;
        return 1;
    }
    return json_lit(j, "null") == 0 ? 0 : -1;
}

/* 1: an element follows; 0: end (']' consumed); -1. */
static inline int json_arr_next(json_t *j) {
    int c = json_peek(j);
    if (c == ']') {
        j->p++;
        return 0;
    }
    if (c == ',') j->p++;
    return json_peek(j) < 0 ? -1 : 1;
}

static inline int span_eq_nocase(span_t a, const char *s) {
    uint32_t n = (uint32_t)strlen(s);
    if (a.n != n) return 0;
    for (uint32_t i = 0; i < n; i++)
        if ((a.p[i] | 0x20) != (s[i] | 0x20)) return 0;
    return 1;
}

/* ---- logging (klog) ------------------------------------------------------------ */

static int32_t g_severity;

/* Like the SDK's klog init: read the configured severity once, in _start. */
static inline void klog_init(void) { g_severity = klog_severity(); }

/* klog.Info: message with a trailing newline, skipped when severity > info. */
static inline void log_info(const char *msg) {
    if (g_severity > 0) return;
    sb_t b = {0};
    sb_str(&b, msg);
    if (b.n == 0 || b.p[b.n - 1] != '\n') sb_char(&b, '\n');
    klog_log(0, b.p, b.n);
    free(b.p);
}

/* klog.InfoS with NUL-terminated key/value strings. */
static inline void log_infos(const char *msg, const sb_t *kvs) {
    if (g_severity > 0) return;
    klog_logs(0, msg, (uint32_t)strlen(msg), kvs->p, kvs->n);
}

/* klog.KObj rendering: "ns/name", or "name" without a namespace. */
static inline void sb_kobj(sb_t *b, span_t obj) {
    span_t ns = obj_meta(obj, META_NAMESPACE);
    if (ns.n) {
        sb_span(b, ns);
        sb_char(b, '/');
    }
    sb_span(b, obj_meta(obj, META_NAME));
}

/* ---- events -------------------------------------------------------------------- */

static inline void sb_ref(sb_t *b, const char *kind, span_t obj) {
    sb_str(b, "{\"Kind\":");
    sb_json_str(b, span_cstr(kind));
    sb_str(b, ",\"APIVersion\":");
    sb_json_str(b, span_cstr(kind[0] ? "v1" : ""));
    sb_str(b, ",\"Name\":");
    sb_json_str(b, obj_meta(obj, META_NAME));
    sb_str(b, ",\"Namespace\":");
    sb_json_str(b, obj_meta(obj, META_NAMESPACE));
    sb_str(b, ",\"UID\":");
    sb_json_str(b, obj_meta(obj, META_UID));
    sb_str(b, ",\"ResourceVersion\":");
    sb_json_str(b, obj_meta(obj, META_RESOURCE_VERSION));
    sb_char(b, '}');
}

/* eventrecorder.Eventf(pod, nil, type, reason, action, note) as the SDK encodes it. */
static inline void record_pod_event(span_t pod, const char *type, const char *reason,
                                    const char *action, const char *note) {
    span_t none = {pod.p, 0};
    sb_t b = {0};
    sb_str(&b, "{\"RegardingReference\":");
    sb_ref(&b, "Pod", pod);
    sb_str(&b, ",\"RelatedReference\":");
    sb_ref(&b, "", none);
    sb_str(&b, ",\"Eventtype\":");
    sb_json_str(&b, span_cstr(type));
    sb_str(&b, ",\"Reason\":");
    sb_json_str(&b, span_cstr(reason));
    sb_str(&b, ",\"Action\":");
    sb_json_str(&b, span_cstr(action));
    sb_str(&b, ",\"Note\":");
    sb_json_str(&b, span_cstr(note));
    sb_char(&b, '}');
    k8s_eventf(b.p, b.n);
    free(b.p);
}

/* ---- cluster events ------------------------------------------------------------ */

enum { RES_POD = 0, RES_NODE = 1, RES_PERSISTENT_VOLUME = 2 };
enum { ACTION_ADD = 1, ACTION_DELETE = 2 };

/* Sends events as packed little-endian (resource, action) u32 pairs; wasm is LE. */
static inline void send_cluster_events(const uint32_t *pairs, uint32_t count) {
    if (count) k8s_cluster_events(pairs, count * 8);
}

#endif /* WASMSCHED_GUEST_H */
