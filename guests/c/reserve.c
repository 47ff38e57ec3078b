/*
 * Test guest reproducing upstream's guest/testdata/reserve (upstream's guest/testdata).
 *
 * reserve stores the key <node name><pod spec.nodeName> in the guest's cycle state and
 * fails with Error "name is bad" on node "bad"; unreserve deletes that key and panics
 * "unreserve failed" when it is missing (a new cycle began, or another instance runs it).
 */
#include "guest.h"

static gbuf_t pod_buf, name_buf;
static sb_t reserved; /* the cycle state's only key, valid when has_key */
static int has_key;

int main(void) { return 0; }

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    has_key = 0; /* cycle state is reset at each new cycle */
    return CODE_SUCCESS;
}

static void make_key(sb_t *b) {
    span_t pod = guest_read(&pod_buf, k8s_current_pod);
    b->n = 0;
    sb_span(b, guest_read(&name_buf, k8s_current_node_name));
    sb_span(b, pod_node_name(pod));
}

GUEST_EXPORT("reserve") int32_t reserve(void) {
    make_key(&reserved);
    has_key = 1;
    if (span_eq_cstr(gbuf_span(&name_buf), "bad")) {
        set_reason("name is bad");
        return CODE_ERROR;
    }
    return CODE_SUCCESS;
}

GUEST_EXPORT("unreserve") void unreserve(void) {
    sb_t key = {0};
    make_key(&key);
    if (!has_key || !span_eq(sb_as_span(&key), sb_as_span(&reserved))) guest_panic("unreserve failed");
    has_key = 0;
    free(key.p);
}
