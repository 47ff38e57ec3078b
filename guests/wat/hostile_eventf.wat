;; Hostile guest (issue 14 item 5): `filter` records events in an endless loop; the host
;; must stop it at its per-call event limit, and keep none of a failed call's events.
(module $hostile_eventf
  (import "k8s.io/scheduler" "handle.eventrecorder.eventf"
    (func $eventf (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"Eventtype\":\"Normal\",\"Reason\":\"Spam\",\"Note\":\"again\"}")
  (func (export "filter") (result i32)
    (loop $spam
      (call $eventf (i32.const 0) (i32.const 53))
      (br $spam))
    (i32.const 0))
)
