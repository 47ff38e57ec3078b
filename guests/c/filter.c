/*
 * Test guest reproducing upstream's guest/testdata/filter (upstream's guest/testdata).
 *
 * argv[1] selects the mode: "filter", "preFilter", "postFilter", "preFilterExtensions";
 * anything else is noop mode, which only reads every parameter.
 */
#include "guest.h"

enum { MODE_NOOP, MODE_FILTER, MODE_PREFILTER, MODE_POSTFILTER, MODE_PREFILTER_EXT };

static int mode;
static gbuf_t pod_buf, node_buf, name_buf, target_buf, map_buf;
static int pod_cached; /* the pod is read once per cycle, reset by prefilter */

static span_t current_pod(void) {
    if (!pod_cached) {
        guest_read(&pod_buf, k8s_current_pod);
        pod_cached = 1;
    }
    return gbuf_span(&pod_buf);
}

static span_t current_node_name(void) { return guest_read(&name_buf, k8s_current_node_name); }

/* The node named by currentNodeName, fetched from the snapshot via k8s.io/api.node. */
static span_t current_node(void) {
    return guest_read_named(&node_buf, k8s_node, current_node_name());
}

int main(void) {
    guest_read_args();
    const char *m = guest_mode();
    if (!strcmp(m, "filter")) mode = MODE_FILTER;
    else if (!strcmp(m, "preFilter")) mode = MODE_PREFILTER;
    else if (!strcmp(m, "postFilter")) mode = MODE_POSTFILTER;
    else if (!strcmp(m, "preFilterExtensions")) mode = MODE_PREFILTER_EXT;
    return 0;
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    pod_cached = 0;
    span_t node_name = pod_node_name(current_pod());
    if (mode == MODE_PREFILTER && node_name.n) {
        /* result.node_names: NUL-terminated list */
        sb_t b = {0};
        sb_span(&b, node_name);
        sb_char(&b, 0);
        k8s_node_names(b.p, b.n);
        free(b.p);
    }
    return CODE_SUCCESS;
}

GUEST_EXPORT("filter") int32_t filter(void) {
    span_t spec_node = pod_node_name(current_pod());
    if (mode != MODE_FILTER) {
        (void)current_node();
        return CODE_SUCCESS;
    }
    if (spec_node.n == 0) return CODE_SUCCESS;
    if (current_node_name().n == 0) {
        set_reason("could not get current node name");
        return CODE_ERROR;
    }
    span_t node_name = obj_meta(current_node(), META_NAME);
    if (span_eq(spec_node, node_name)) return CODE_SUCCESS;
    sb_t b = {0};
    sb_span(&b, spec_node);
    sb_str(&b, " != ");
    sb_span(&b, node_name);
    set_reason_sb(&b);
    free(b.p);
    return CODE_UNSCHEDULABLE;
}

/* The code recorded for `node` in the nodeToStatusMap JSON object, or -1 when absent. */
static int64_t status_of(span_t map, span_t node) {
    json_t j;
    json_init(&j, map);
    int r = json_obj_start(&j);
    if (r < 0) guest_panic("bad nodeToStatusMap");
    span_t key;
    while (r && (r = json_obj_next(&j, &key)) == 1) {
        int64_t code;
        if (json_int(&j, &code)) guest_panic("bad nodeToStatusMap");
        if (span_eq(key, node)) return code;
    }
    if (r < 0) guest_panic("bad nodeToStatusMap");
    return -1;
}

GUEST_EXPORT("postfilter") int64_t postfilter(void) {
    span_t spec_node = pod_node_name(current_pod());
    span_t map = guest_read(&map_buf, k8s_node_to_status_map);
    if (mode != MODE_POSTFILTER) return 0;
    k8s_nominated_node_name((const char *)spec_node.p, spec_node.n);
    if (spec_node.n && status_of(map, spec_node) == CODE_SUCCESS)
        return (int64_t)pack_hi_lo(1 /* ModeOverride */, CODE_SUCCESS);
    sb_t b = {0};
    sb_span(&b, spec_node);
    sb_str(&b, " is unschedulable");
    set_reason_sb(&b);
    free(b.p);
    return (int64_t)pack_hi_lo(0 /* ModeNoop */, CODE_UNSCHEDULABLE_AND_UNRESOLVABLE);
}

/* AddPod/RemovePod: Error iff the node is "bad". */
static int32_t pod_change(void) {
    (void)current_pod();
    span_t node = current_node_name();
    span_t target = guest_read(&target_buf, k8s_target_pod);
    if (mode != MODE_PREFILTER_EXT || !span_eq_cstr(node, "bad")) return CODE_SUCCESS;
    sb_t b = {0};
    sb_str(&b, "Node name is ");
    sb_span(&b, node);
    sb_str(&b, " and PodInfo name is ");
    sb_span(&b, obj_meta(target, META_NAME));
    set_reason_sb(&b);
    free(b.p);
    return CODE_ERROR;
}

GUEST_EXPORT("addpod") int32_t addpod(void) { return pod_change(); }
GUEST_EXPORT("removepod") int32_t removepod(void) { return pod_change(); }
