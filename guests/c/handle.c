/*
 * Test guest reproducing upstream's guest/testdata/handle (upstream's guest/testdata), with a
 * working getWaitingPod (upstream's traps, issue #144).
 *
 * argv[1] "rejectWaitingPod": filter rejects the waiting pod with the current pod's UID
 * and answers Skip "UID is <uid>" when the host reports a rejection, else Success.
 * "getWaitingPod": filter fetches the waiting pod with the current pod's UID; none gives
 * Error "No waiting pod found for UID: <uid>", a pod with that UID gives Success, any
 * other answer gives Error.
 */
#include "guest.h"

static const char *mode = "";
static gbuf_t pod_buf, waiting_buf;

int main(void) {
    guest_read_args();
    mode = guest_mode();
    return 0;
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) { return CODE_SUCCESS; }

static int32_t fail(const char *prefix, span_t uid, int32_t code) {
    sb_t b = {0};
    sb_str(&b, prefix);
    sb_span(&b, uid);
    set_reason_sb(&b);
    free(b.p);
    return code;
}

static int32_t reject_waiting_pod(span_t uid) {
    uint64_t rejected = 0;
    k8s_reject_waiting_pod((const char *)uid.p, uid.n, (uint8_t *)&rejected, 8);
    return rejected == 1 ? fail("UID is ", uid, CODE_SKIP) : CODE_SUCCESS;
}

/* The host writes the pod's protobuf bytes without their length and zeroes the rest of
 * the buffer. Field number 0 is invalid, so a 0x00 key byte marks the end. */
static uint32_t message_length(const uint8_t *p, uint32_t cap) {
    pb_iter_t it = {p, p + cap};
    pb_field_t f;
    const uint8_t *end = p;
    while (it.p < it.end && *it.p != 0 && pb_next(&it, &f) == 1) end = it.p;
    return (uint32_t)(end - p);
}

/* handle.get_waiting_pod into waiting_buf, following wasmsched's documented answers: 8 zero
 * bytes for none; the pod, zero-padded; or ff ff ff ff + the needed u32 length, after
 * which the guest grows its buffer and asks again. Returns 0 for none, else 1. */
static int fetch_waiting_pod(span_t uid, span_t *pod) {
    static const uint8_t none[8], too_small[4] = {0xff, 0xff, 0xff, 0xff};
    gbuf_grow(&waiting_buf, GUEST_READ_BUF_LIMIT);
    for (int attempt = 0; attempt < 2; attempt++) {
        memset(waiting_buf.p, 0xee, waiting_buf.cap); /* detect bytes left unwritten */
        k8s_get_waiting_pod((const char *)uid.p, uid.n, waiting_buf.p, waiting_buf.cap);
        if (!memcmp(waiting_buf.p, none, 8)) return 0;
        if (memcmp(waiting_buf.p, too_small, 4) != 0) {
            pod->p = waiting_buf.p;
            pod->n = message_length(waiting_buf.p, waiting_buf.cap);
            if (pod->n < waiting_buf.cap && waiting_buf.p[pod->n] != 0)
                guest_panic("waiting pod not zero-terminated");
            return 1;
        }
        uint32_t need;
        memcpy(&need, waiting_buf.p + 4, 4);
        gbuf_grow(&waiting_buf, need + 1);
    }
    guest_panic("waiting pod did not fit twice");
}

static int32_t get_waiting_pod(span_t uid) {
    span_t pod;
    if (!fetch_waiting_pod(uid, &pod)) return fail("No waiting pod found for UID: ", uid, CODE_ERROR);
    span_t got = obj_meta(pod, META_UID);
    if (!span_eq(got, uid)) return fail("waiting pod has a different UID: ", got, CODE_ERROR);
    return CODE_SUCCESS;
}

GUEST_EXPORT("filter") int32_t filter(void) {
    span_t uid = obj_meta(guest_read(&pod_buf, k8s_current_pod), META_UID);
    if (!strcmp(mode, "rejectWaitingPod")) return reject_waiting_pod(uid);
    if (!strcmp(mode, "getWaitingPod")) return get_waiting_pod(uid);
    return CODE_SUCCESS;
}
