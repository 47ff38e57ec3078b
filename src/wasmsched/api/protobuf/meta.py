"""Message tables of meta/v1: ObjectMeta, ListMeta, OwnerReference, LabelSelector.

Field numbers from k8s.io/apimachinery pkg/apis/meta/v1/generated.proto, pointer-ness from
pkg/apis/meta/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.schema import (
    DECODED,
    KEEP,
    OMITZERO,
    OPT,
    _Message,
    b,
    i32,
    i64,
    m,
    mss,
    raw_json,
    rm,
    rs,
    s,
    t,
)

_OWNER_REFERENCE = _Message(
    "OwnerReference",
    s("kind", 1, KEEP), s("name", 3, KEEP), s("uid", 4, KEEP), s("apiVersion", 5, KEEP),
    b("controller", 6, OPT), b("blockOwnerDeletion", 7, OPT),
)  # fmt: skip

# Decoded only: the encoder leaves managedFields out (see the package docstring).
_MANAGED_FIELDS_ENTRY = _Message(
    "ManagedFieldsEntry",
    s("manager", 1), s("operation", 2), s("apiVersion", 3), t("time", 4, OPT),
    s("fieldsType", 6), raw_json("fieldsV1", 7), s("subresource", 8),
)  # fmt: skip

_OBJECT_META = _Message(
    "ObjectMeta",
    s("name", 1), s("generateName", 2), s("namespace", 3), s("selfLink", 4), s("uid", 5),
    s("resourceVersion", 6), i64("generation", 7), t("creationTimestamp", 8, OMITZERO),
    t("deletionTimestamp", 9, OPT), i64("deletionGracePeriodSeconds", 10, OPT),
    mss("labels", 11), mss("annotations", 12), rm("ownerReferences", 13, _OWNER_REFERENCE),
    rs("finalizers", 14), s("zz_deprecatedClusterName", 15),
    rm("managedFields", 17, _MANAGED_FIELDS_ENTRY, DECODED),
)  # fmt: skip

_LIST_META = _Message(
    "ListMeta",
    s("selfLink", 1), s("resourceVersion", 2), s("continue", 3),
    i64("remainingItemCount", 4, OPT),
)  # fmt: skip

_LABEL_SELECTOR_REQUIREMENT = _Message(
    "LabelSelectorRequirement", s("key", 1, KEEP), s("operator", 2, KEEP), rs("values", 3)
)
_LABEL_SELECTOR = _Message(
    "LabelSelector", mss("matchLabels", 1), rm("matchExpressions", 2, _LABEL_SELECTOR_REQUIREMENT)
)

# metav1.Status, decoded only: the body of an error answer and of a watch ERROR event.
_STATUS_CAUSE = _Message("StatusCause", s("reason", 1), s("message", 2), s("field", 3))
_STATUS_DETAILS = _Message(
    "StatusDetails",
    s("name", 1), s("group", 2), s("kind", 3), rm("causes", 4, _STATUS_CAUSE),
    i32("retryAfterSeconds", 5), s("uid", 6),
)  # fmt: skip
_STATUS = _Message(
    "Status",
    m("metadata", 1, _LIST_META), s("status", 2), s("message", 3), s("reason", 4),
    m("details", 5, _STATUS_DETAILS, OPT), i32("code", 6),
)  # fmt: skip
