/*
 * Benchmark guest "test": does the work of a real SDK plugin. Like a full protobuf
 * unmarshal, it walks every field of the pod (once per cycle, in prefilter) and of the
 * node (in filter) recursively, copying every string, then decides like upstream's
 * filter-simple / score test guests.
 *
 * The walker has no schema: a length-delimited field that parses as a message is walked
 * as one, anything else is a string or bytes value and is copied.
 * argv[1] "count": filter answers Skip with the field counts "pod <n> node <m>".
 */
#include "guest.h"

static gbuf_t pod_buf, node_buf, name_buf;
static int pod_cached;
static int64_t pod_fields;
static int count_mode;

/* A bump arena standing in for the unmarshalled strings; reset per message. */
static uint8_t *arena;
static uint32_t arena_len, arena_cap;

static void arena_copy(span_t s) {
    if (arena_len + s.n > arena_cap) {
        arena_cap = (arena_len + s.n) * 2;
        arena = realloc(arena, arena_cap);
        if (!arena) guest_panic("out of memory");
    }
    memcpy(arena + arena_len, s.p, s.n);
    arena_len += s.n;
}

/* Fields in msg including nested messages, or -1 when msg is not a valid message. */
static int64_t walk(span_t msg, int depth) {
    if (depth > 64) return -1;
    pb_iter_t it = pb_iter(msg);
    pb_field_t f;
    int64_t count = 0;
    int r;
    while ((r = pb_next(&it, &f)) == 1) {
        count++;
        if (f.wire != PB_LEN) continue;
        int64_t nested = f.bytes.n ? walk(f.bytes, depth + 1) : 0;
        if (nested >= 0) count += nested;
        else arena_copy(f.bytes);
    }
    return r < 0 ? -1 : count;
}

static int64_t unmarshal(span_t msg) {
    arena_len = 0;
    int64_t n = walk(msg, 0);
    if (n < 0) guest_panic("malformed protobuf");
    return n;
}

static span_t current_pod(void) {
    if (!pod_cached) {
        pod_fields = unmarshal(guest_read(&pod_buf, k8s_current_pod));
        pod_cached = 1;
    }
    return gbuf_span(&pod_buf);
}

int main(void) {
    guest_read_args();
    count_mode = !strcmp(guest_mode(), "count");
    return 0;
}

GUEST_EXPORT("enqueue") void enqueue(void) {
    static const uint32_t events[] = {RES_NODE, ACTION_ADD};
    send_cluster_events(events, 1);
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    pod_cached = 0; /* a new cycle */
    (void)current_pod();
    return CODE_SUCCESS;
}

GUEST_EXPORT("filter") int32_t filter(void) {
    span_t spec_node = pod_node_name(current_pod());
    span_t name = guest_read(&name_buf, k8s_current_node_name);
    span_t node = guest_read_named(&node_buf, k8s_node, name);
    int64_t node_fields = unmarshal(node);
    if (count_mode) {
        sb_t b = {0};
        sb_str(&b, "pod ");
        sb_int(&b, pod_fields);
        sb_str(&b, " node ");
        sb_int(&b, node_fields);
        set_reason_sb(&b);
        free(b.p);
        return CODE_SKIP;
    }
    span_t node_name = obj_meta(node, META_NAME);
    if (spec_node.n == 0 || span_eq(spec_node, node_name)) return CODE_SUCCESS;
    sb_t b = {0};
    sb_span(&b, spec_node);
    sb_str(&b, " != ");
    sb_span(&b, node_name);
    set_reason_sb(&b);
    free(b.p);
    return CODE_UNSCHEDULABLE;
}

GUEST_EXPORT("score") int64_t score(void) {
    span_t spec_node = pod_node_name(current_pod());
    span_t node = guest_read(&name_buf, k8s_current_node_name);
    return (int64_t)pack_hi_lo(span_eq(node, spec_node) ? 100 : 0, CODE_SUCCESS);
}
