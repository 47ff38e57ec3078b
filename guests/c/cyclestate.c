/*
 * Test guest reproducing upstream's guest/testdata/cyclestate (upstream's
 * scheduler/plugin/plugin_test.go): exports all 15 hooks, which succeed but panic when the guest-side cycle state
 * is incoherent, i.e. when the host does not run a cycle's hooks on one instance in order.
 *
 * Like the TinyGo SDK, prefilter starts a new cycle: it resets the cycle state and reads
 * the pod once; later hooks use that cached pod (and check the host still sends the same
 * bytes). argv ["x", "0"|"1"|"2"] selects how many cluster events enqueue returns.
 */
#include "guest.h"

static uint32_t events[4];
static uint32_t event_count;

static gbuf_t pod_buf;
static uint8_t *cycle_pod; /* the pod cached at prefilter; NULL before the first cycle */
static uint32_t cycle_pod_len;

/* The cycle state: which keys exist and which values were added to them. */
static int prefilter_state, prefilter_filter;
static int prescore_state, prescore_score, prescore_ext;
static int prebind_state, prebind_bind;

int main(void) {
    guest_read_args();
    if (g_argc == 2) {
        const char *count = g_argv[1];
        if (!strcmp(count, "1")) {
            uint32_t e[] = {RES_PERSISTENT_VOLUME, ACTION_DELETE};
            memcpy(events, e, sizeof e);
            event_count = 1;
        } else if (!strcmp(count, "2")) {
            uint32_t e[] = {RES_NODE, ACTION_ADD, RES_PERSISTENT_VOLUME, ACTION_DELETE};
            memcpy(events, e, sizeof e);
            event_count = 2;
        } else if (strcmp(count, "0") != 0) {
            guest_panic("unsupported count");
        }
    }
    return 0;
}

GUEST_EXPORT("enqueue") void enqueue(void) { send_cluster_events(events, event_count); }

/* Panics with msg unless the pod was cached in this cycle and the host still sends it. */
static void must_cached_pod(const char *msg) {
    if (!cycle_pod) guest_panic(msg);
    span_t now = guest_read(&pod_buf, k8s_current_pod);
    span_t cached = {cycle_pod, cycle_pod_len};
    if (!span_eq(now, cached)) guest_panic("pod changed within the cycle");
}

static void must_not_score_state(void) {
    if (prescore_state) guest_panic("didn't reset score state on pre-filter");
}

static void must_filter_state(void) {
    if (!prefilter_state) guest_panic("didn't propagate state from pre-filter");
    if (!prefilter_filter) guest_panic("filter value lost propagating from pre-filter");
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    /* new cycle: reset state and re-read the pod, as the SDK does */
    prefilter_state = prefilter_filter = 0;
    prescore_state = prescore_score = prescore_ext = 0;
    prebind_state = prebind_bind = 0;
    free(cycle_pod);
    cycle_pod = NULL;
    span_t pod = guest_read(&pod_buf, k8s_current_pod);
    span_t spec;
    /* Upstream compares spec pointers: a pod without spec (nil == nil) fails here. */
    if (!pod_spec(pod, &spec)) guest_panic("didn't reset pod on pre-filter");
    cycle_pod = malloc(pod.n ? pod.n : 1);
    memcpy(cycle_pod, pod.p, pod.n);
    cycle_pod_len = pod.n;
    must_not_score_state();
    if (prefilter_state) guest_panic("didn't reset filter state on pre-filter");
    prefilter_state = 1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("filter") int32_t filter(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    must_not_score_state();
    if (!prefilter_state) guest_panic("didn't propagate filter state from pre-filter");
    prefilter_filter = 1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("postfilter") int64_t postfilter(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    must_not_score_state();
    if (!prefilter_state) guest_panic("didn't propagate state from pre-filter");
    if (!prefilter_filter) guest_panic("filter value lost propagating from filter");
    return 0;
}

static int32_t pod_change(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    if (!prefilter_state) guest_panic("didn't propagate state from pre-filter");
    return CODE_SUCCESS;
}

GUEST_EXPORT("addpod") int32_t addpod(void) { return pod_change(); }
GUEST_EXPORT("removepod") int32_t removepod(void) { return pod_change(); }

GUEST_EXPORT("prescore") int32_t prescore(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    must_filter_state();
    if (prescore_state) guest_panic("didn't reset score state on pre-score");
    prescore_state = 1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("score") int64_t score(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    must_filter_state();
    if (!prescore_state) guest_panic("didn't propagate score state from pre-score");
    prescore_score = 1;
    return 0;
}

GUEST_EXPORT("normalizescore") int32_t normalizescore(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    must_filter_state();
    if (!prescore_state) guest_panic("didn't propagate score state from pre-score");
    if (!prescore_score) guest_panic("score value lost propagating from score-extensions");
    prescore_ext = 1;
    k8s_normalized_score_list("null", 4); /* a nil map: scores unchanged */
    return CODE_SUCCESS;
}

GUEST_EXPORT("reserve") int32_t reserve(void) { return CODE_SUCCESS; }

GUEST_EXPORT("unreserve") void unreserve(void) { must_filter_state(); }

GUEST_EXPORT("permit") int64_t permit(void) {
    must_filter_state();
    return 0;
}

GUEST_EXPORT("prebind") int32_t prebind(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    if (prebind_state) guest_panic("didn't reset pre-bind state on pre-bind");
    prebind_state = 1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("bind") int32_t bind(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    if (!prebind_state) guest_panic("didn't propagate pre-bind state from pre-bind");
    prebind_bind = 1;
    return CODE_SUCCESS;
}

GUEST_EXPORT("postbind") void postbind(void) {
    must_cached_pod("didn't cache pod from pre-filter");
    if (!prebind_state) guest_panic("didn't propagate pre-bind state from pre-bind");
    if (!prebind_bind) guest_panic("bind value lost propagating from bind");
}
