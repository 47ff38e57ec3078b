/*
 * Test guest reproducing upstream's examples/imagelocality (upstream's
 * scheduler/plugin/plugin_test.go): kube-scheduler's ImageLocality score from nodeList and nodeImageStates.
 */
#include "guest.h"

#define MB (1024LL * 1024LL)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)
#define MAX_NODE_SCORE 100

static gbuf_t pod_buf, name_buf, list_buf, states_buf;
static int pod_cached;
static int32_t total_nodes = -1; /* cached node count for the cycle */

typedef struct {
    char *name;
    uint32_t name_len;
    int64_t size;
    int64_t num_nodes;
} image_state_t;

static image_state_t *images;
static uint32_t image_count;

static span_t current_pod(void) {
    if (!pod_cached) {
        guest_read(&pod_buf, k8s_current_pod);
        pod_cached = 1;
    }
    return gbuf_span(&pod_buf);
}

int main(void) { return 0; }

GUEST_EXPORT("prefilter") int32_t prefilter(void) {
    pod_cached = 0;
    total_nodes = -1;
    return CODE_SUCCESS;
}

/* Parses {"image": {"Size": n, "NumNodes": n, "Nodes": ...}, ...} (keys matched without
 * case, as Go's encoding/json does); null means no images. */
static void load_image_states(span_t json) {
    for (uint32_t i = 0; i < image_count; i++) free(images[i].name);
    image_count = 0;
    json_t j;
    json_init(&j, json);
    span_t key;
    int r = json_obj_start(&j);
    while (r == 1 && (r = json_obj_next(&j, &key)) == 1) {
        images = realloc(images, (image_count + 1) * sizeof *images);
        image_state_t *img = &images[image_count++];
        img->name = malloc(key.n ? key.n : 1);
        memcpy(img->name, key.p, key.n);
        img->name_len = key.n;
        img->size = img->num_nodes = 0;
        int rs = json_obj_start(&j);
        span_t field;
        while (rs == 1 && (rs = json_obj_next(&j, &field)) == 1) {
            if (span_eq_nocase(field, "size")) rs = json_int(&j, &img->size) ? -1 : 1;
            else if (span_eq_nocase(field, "numnodes")) rs = json_int(&j, &img->num_nodes) ? -1 : 1;
            else rs = json_skip(&j) ? -1 : 1;
        }
        if (rs < 0) r = -1;
    }
    if (r < 0) guest_panic("bad nodeImageStates");
}

static const image_state_t *find_image(span_t name) {
    for (uint32_t i = 0; i < image_count; i++) {
        span_t s = {(const uint8_t *)images[i].name, images[i].name_len};
        if (span_eq(s, name)) return &images[i];
    }
    return NULL;
}

/* The CRI name of an image: ":latest" is added when the name has no tag. */
static void normalized_image(sb_t *b, span_t image) {
    int colon = -1, slash = -1;
    for (uint32_t i = 0; i < image.n; i++) {
        if (image.p[i] == ':') colon = (int)i;
        if (image.p[i] == '/') slash = (int)i;
    }
    b->n = 0;
    sb_span(b, image);
    if (colon <= slash) sb_str(b, ":latest");
}

/* Sums the scaled sizes of the images of `field` containers, counting the containers. */
static int64_t sum_images(span_t spec, uint32_t field, uint32_t *containers) {
    int64_t sum = 0;
    sb_t name = {0};
    pb_iter_t it = pb_iter(spec);
    pb_field_t f;
    int r;
    while ((r = pb_next(&it, &f)) == 1) {
        if (f.field != field || f.wire != PB_LEN) continue;
        (*containers)++;
        normalized_image(&name, pb_string(f.bytes, CONTAINER_IMAGE));
        const image_state_t *img = find_image(sb_as_span(&name));
        if (img) {
            double spread = (double)img->num_nodes / (double)total_nodes;
            sum += (int64_t)((double)img->size * spread);
        }
    }
    if (r < 0) guest_panic("malformed pod");
    free(name.p);
    return sum;
}

GUEST_EXPORT("score") int64_t score(void) {
    span_t node = guest_read(&name_buf, k8s_current_node_name);
    if (total_nodes < 0) {
        span_t list = guest_read(&list_buf, k8s_node_list);
        total_nodes = (int32_t)pb_count(list, NODELIST_ITEMS);
    }
    if (total_nodes == 0) {
        total_nodes = -1;
        set_reason("failed to list nodes");
        return (int64_t)pack_hi_lo(0, CODE_ERROR);
    }
    load_image_states(guest_read_named(&states_buf, k8s_node_image_states, node));
    span_t spec = {0, 0};
    pod_spec(current_pod(), &spec);
    uint32_t containers = 0;
    int64_t sum = sum_images(spec, SPEC_INIT_CONTAINERS, &containers);
    sum += sum_images(spec, SPEC_CONTAINERS, &containers);
    int64_t max_threshold = MAX_CONTAINER_THRESHOLD * (int64_t)containers;
    if (sum < MIN_THRESHOLD) sum = MIN_THRESHOLD;
    else if (sum > max_threshold) sum = max_threshold;
    int64_t score = MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD);
    return (int64_t)pack_hi_lo((int32_t)score, CODE_SUCCESS);
}
