"""Message tables of meta/v1: ObjectMeta, ListMeta, OwnerReference, LabelSelector.

Field numbers from k8s.io/apimachinery pkg/apis/meta/v1/generated.proto, pointer-ness from
pkg/apis/meta/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.schema import OPT, _Message, b, i64, mss, rm, rs, s, t

_OWNER_REFERENCE = _Message(
    "OwnerReference",
    s("kind", 1), s("name", 3), s("uid", 4), s("apiVersion", 5),
    b("controller", 6, OPT), b("blockOwnerDeletion", 7, OPT),
)  # fmt: skip

_OBJECT_META = _Message(
    "ObjectMeta",
    s("name", 1), s("generateName", 2), s("namespace", 3), s("selfLink", 4), s("uid", 5),
    s("resourceVersion", 6), i64("generation", 7), t("creationTimestamp", 8),
    t("deletionTimestamp", 9, OPT), i64("deletionGracePeriodSeconds", 10, OPT),
    mss("labels", 11), mss("annotations", 12), rm("ownerReferences", 13, _OWNER_REFERENCE),
    rs("finalizers", 14), s("zz_deprecatedClusterName", 15),
)  # fmt: skip

_LIST_META = _Message(
    "ListMeta",
    s("selfLink", 1), s("resourceVersion", 2), s("continue", 3),
    i64("remainingItemCount", 4, OPT),
)  # fmt: skip

_LABEL_SELECTOR_REQUIREMENT = _Message(
    "LabelSelectorRequirement", s("key", 1), s("operator", 2), rs("values", 3)
)
_LABEL_SELECTOR = _Message(
    "LabelSelector", mss("matchLabels", 1), rm("matchExpressions", 2, _LABEL_SELECTOR_REQUIREMENT)
)
