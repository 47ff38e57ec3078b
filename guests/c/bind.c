/*
 * Test guest reproducing upstream's guest/testdata/bind (upstream's guest/testdata).
 *
 * argv[1] "preBind" / "bind": that hook fails with Error "name is <node>" on node "bad";
 * "postBind": postbind panics "name is bad" on node "bad". Other hooks succeed.
 */
#include "guest.h"

static const char *mode = "";
static gbuf_t pod_buf, name_buf;

int main(void) {
    guest_read_args();
    mode = guest_mode();
    return 0;
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) { return CODE_SUCCESS; }

/* Error with "name is <node>" when this hook is the selected mode and the node is bad. */
static int32_t check(const char *hook) {
    (void)guest_read(&pod_buf, k8s_current_pod);
    span_t node = guest_read(&name_buf, k8s_current_node_name);
    if (strcmp(mode, hook) || !span_eq_cstr(node, "bad")) return CODE_SUCCESS;
    sb_t b = {0};
    sb_str(&b, "name is ");
    sb_span(&b, node);
    set_reason_sb(&b);
    free(b.p);
    return CODE_ERROR;
}

GUEST_EXPORT("prebind") int32_t prebind(void) { return check("preBind"); }
GUEST_EXPORT("bind") int32_t bind(void) { return check("bind"); }

GUEST_EXPORT("postbind") void postbind(void) {
    if (check("postBind") != CODE_SUCCESS) guest_panic("name is bad");
}
