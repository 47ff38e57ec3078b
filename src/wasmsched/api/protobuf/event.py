"""Message tables of events.k8s.io/v1 Event (encoded only: the scheduler's event POST).

Field numbers from k8s.io/api events/v1/generated.proto, pointer-ness from events/v1/types.go
(series and related are pointers; the deprecated fields are written zero, as
generated.pb.go: Event.MarshalToSizedBuffer writes them).
"""

from __future__ import annotations

from wasmsched.api.protobuf.binding import _OBJECT_REFERENCE
from wasmsched.api.protobuf.meta import _OBJECT_META
from wasmsched.api.protobuf.schema import OPT, _Message, i32, m, mt, s, t

_EVENT_SOURCE = _Message("EventSource", s("component", 1), s("host", 2))
_EVENT_SERIES = _Message("EventSeries", i32("count", 1), mt("lastObservedTime", 2))

_EVENT = _Message(
    "Event",
    m("metadata", 1, _OBJECT_META), mt("eventTime", 2), m("series", 3, _EVENT_SERIES, OPT),
    s("reportingController", 4), s("reportingInstance", 5), s("action", 6), s("reason", 7),
    m("regarding", 8, _OBJECT_REFERENCE), m("related", 9, _OBJECT_REFERENCE, OPT),
    s("note", 10), s("type", 11), m("deprecatedSource", 12, _EVENT_SOURCE),
    t("deprecatedFirstTimestamp", 13), t("deprecatedLastTimestamp", 14),
    i32("deprecatedCount", 15),
)  # fmt: skip
