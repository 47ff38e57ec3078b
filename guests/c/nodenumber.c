/*
 * Test guest reproducing upstream's examples/nodenumber (upstream's scheduler/plugin/plugin_test.go).
 *
 * NodeNumber favours nodes whose name ends with the same digit as the pod's name (with
 * NODENUMBER_FROM_SPEC, as in examples/advanced: the pod's spec.nodeName). PreScore logs,
 * records an event and stores the digit; Score gives 10 on a match (or when the pod has
 * no digit), else 0; guest config {"reverse": true} inverts the match. Like a plugin
 * registered with plugin.Set, every other hook is exported and succeeds.
 */
#include "guest.h"

static int reverse;
static int pod_digit = -1; /* cycle state: the pod's digit, -1 when absent */
static gbuf_t pod_buf, name_buf, config_buf;
static int pod_cached;

static span_t current_pod(void) {
    if (!pod_cached) {
        guest_read(&pod_buf, k8s_current_pod);
        pod_cached = 1;
    }
    return gbuf_span(&pod_buf);
}

static int last_digit(span_t s) {
    if (s.n == 0) return -1;
    uint8_t c = s.p[s.n - 1];
    return c >= '0' && c <= '9' ? c - '0' : -1;
}

/* Decodes {"reverse": bool}; other keys are ignored, invalid JSON panics like upstream. */
static void apply_config(span_t config) {
    json_t j;
    json_init(&j, config);
    span_t key;
    int r = json_obj_start(&j);
    while (r == 1 && (r = json_obj_next(&j, &key)) == 1) {
        if (span_eq_cstr(key, "reverse")) {
            if (json_lit(&j, "true") == 0) reverse = 1;
            else if (json_lit(&j, "false") == 0) reverse = 0;
            else r = -1;
        } else if (json_skip(&j)) {
            r = -1;
        }
    }
    if (r < 0) guest_panic("decode arg into NodeNumberArgs: invalid JSON");
}

int main(void) {
    klog_init();
    span_t config = guest_read(&config_buf, k8s_get_config);
    if (config.n) {
        apply_config(config);
        log_info("NodeNumberArgs is successfully applied");
    }
#ifdef NODENUMBER_EXIT_IN_START
    /* Like upstream's advanced binary (TinyGo without wasi-legacy): _start exits with 0. */
    __wasi_proc_exit(0);
#endif
    return 0;
}

static void log_pod(const char *msg) {
    if (g_severity > 0) return; /* the SDK skips building messages that would be dropped */
    sb_t kvs = {0};
    sb_str(&kvs, "pod");
    sb_char(&kvs, 0);
    sb_kobj(&kvs, current_pod());
    sb_char(&kvs, 0);
    log_infos(msg, &kvs);
    free(kvs.p);
}

GUEST_EXPORT("enqueue") void enqueue(void) {
    static const uint32_t events[] = {RES_NODE, ACTION_ADD};
    send_cluster_events(events, 1);
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    pod_cached = 0;
    pod_digit = -1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("prescore") int32_t prescore(void) {
    log_pod("execute PreScore on NodeNumber plugin");
    span_t pod = current_pod();
#ifdef NODENUMBER_FROM_SPEC
    int digit = last_digit(pod_node_name(pod));
#else
    int digit = last_digit(obj_meta(pod, META_NAME));
#endif
    if (digit < 0) {
        record_pod_event(pod, "PreScore", "not match lastNumber", "Skip", "");
        return CODE_SUCCESS;
    }
    record_pod_event(pod, "PreScore", "match lastNumber", "Continue", "");
    pod_digit = digit;
    return CODE_SUCCESS;
}

GUEST_EXPORT("score") int64_t score(void) {
    log_pod("execute Score on NodeNumber plugin");
    int match = 1; /* no digit on the pod matches every node */
    if (pod_digit >= 0) match = last_digit(guest_read(&name_buf, k8s_current_node_name)) == pod_digit;
    if (reverse) match = !match;
    return (int64_t)pack_hi_lo(match ? 10 : 0, CODE_SUCCESS);
}

#ifndef NODENUMBER_SCORE_ONLY
GUEST_EXPORT("filter") int32_t filter(void) { return CODE_SUCCESS; }
GUEST_EXPORT("postfilter") int64_t postfilter(void) { return 0; }
GUEST_EXPORT("addpod") int32_t addpod(void) { return CODE_SUCCESS; }
GUEST_EXPORT("removepod") int32_t removepod(void) { return CODE_SUCCESS; }
GUEST_EXPORT("normalizescore") int32_t normalizescore(void) { return CODE_SUCCESS; }
GUEST_EXPORT("reserve") int32_t reserve(void) { return CODE_SUCCESS; }
GUEST_EXPORT("unreserve") void unreserve(void) {}
GUEST_EXPORT("permit") int64_t permit(void) { return 0; }
GUEST_EXPORT("prebind") int32_t prebind(void) { return CODE_SUCCESS; }
GUEST_EXPORT("bind") int32_t bind(void) { return CODE_SUCCESS; }
GUEST_EXPORT("postbind") void postbind(void) {}
#endif
