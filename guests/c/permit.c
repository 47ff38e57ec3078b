/*
 * Test guest reproducing upstream's guest/testdata/permit (upstream's guest/testdata).
 *
 * Node "bad": Error "name is bad"; node "wait": Wait "name is wait" with a 10 s timeout;
 * any other node: Success with timeout 0.
 */
#include "guest.h"

static gbuf_t name_buf;

int main(void) { return 0; }

GUEST_EXPORT("prefilter") int32_t prefilter(void) { return CODE_SUCCESS; }

GUEST_EXPORT("permit") int64_t permit(void) {
    span_t node = guest_read(&name_buf, k8s_current_node_name);
    if (span_eq_cstr(node, "bad")) {
        set_reason("name is bad");
        return (int64_t)pack_permit(CODE_ERROR, 0);
    }
    if (span_eq_cstr(node, "wait")) {
        set_reason("name is wait");
        return (int64_t)pack_permit(CODE_WAIT, 10000);
    }
    return (int64_t)pack_permit(CODE_SUCCESS, 0);
}
