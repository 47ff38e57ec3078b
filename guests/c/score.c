/*
 * Test guest reproducing upstream's guest/testdata/score (upstream's guest/testdata).
 *
 * argv[1]: "score" (100 when the node is the pod's spec.nodeName, else 0), "preScore"
 * (status code = number of filtered nodes), "scoreExtensions" (every score x100);
 * anything else is noop mode, which reads every parameter and sends a null score map.
 */
#include "guest.h"

enum { MODE_NOOP, MODE_SCORE, MODE_PRESCORE, MODE_SCORE_EXT };

static int mode;
static gbuf_t pod_buf, name_buf, list_buf, scores_buf;
static int pod_cached;

static span_t current_pod(void) {
    if (!pod_cached) {
        guest_read(&pod_buf, k8s_current_pod);
        pod_cached = 1;
    }
    return gbuf_span(&pod_buf);
}

int main(void) {
    guest_read_args();
    const char *m = guest_mode();
    if (!strcmp(m, "score")) mode = MODE_SCORE;
    else if (!strcmp(m, "preScore")) mode = MODE_PRESCORE;
    else if (!strcmp(m, "scoreExtensions")) mode = MODE_SCORE_EXT;
    return 0;
}

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    pod_cached = 0;
    return CODE_SUCCESS;
}

GUEST_EXPORT("prescore") int32_t prescore(void) {
    (void)current_pod();
    json_t j;
    json_init(&j, guest_read(&list_buf, k8s_filtered_node_list));
    int32_t count = 0;
    int r = json_arr_start(&j);
    while (r == 1 && (r = json_arr_next(&j)) == 1) {
        span_t name;
        if (json_string(&j, &name)) guest_panic("bad filteredNodeList");
        count++;
    }
    if (r < 0) guest_panic("bad filteredNodeList");
    return mode == MODE_PRESCORE ? count : CODE_SUCCESS;
}

GUEST_EXPORT("score") int64_t score(void) {
    span_t spec_node = pod_node_name(current_pod());
    span_t node = guest_read(&name_buf, k8s_current_node_name);
    int32_t score = mode == MODE_SCORE && span_eq(node, spec_node) ? 100 : 0;
    return (int64_t)pack_hi_lo(score, CODE_SUCCESS);
}

GUEST_EXPORT("normalizescore") int32_t normalizescore(void) {
    (void)current_pod();
    span_t scores = guest_read(&scores_buf, k8s_node_score_list);
    if (mode != MODE_SCORE_EXT) {
        k8s_normalized_score_list("null", 4);
        return CODE_SUCCESS;
    }
    json_t j;
    json_init(&j, scores);
    sb_t out = {0};
    sb_char(&out, '{');
    int r = json_obj_start(&j);
    span_t key;
    int first = 1;
    while (r == 1 && (r = json_obj_next(&j, &key)) == 1) {
        int64_t v;
        if (json_int(&j, &v)) guest_panic("bad nodeScoreList");
        if (!first) sb_char(&out, ',');
        first = 0;
        sb_json_str(&out, key);
        sb_char(&out, ':');
        sb_int(&out, v * 100);
    }
    if (r < 0) guest_panic("bad nodeScoreList");
    sb_char(&out, '}');
    k8s_normalized_score_list(out.p, out.n);
    free(out.p);
    return CODE_SUCCESS;
}
