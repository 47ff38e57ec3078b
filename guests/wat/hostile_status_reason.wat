;; Hostile guest (issue 14 item 9): `filter` sets a 128 MiB status reason and rejects.
(module $hostile_status_reason
  (import "k8s.io/scheduler" "result.status_reason"
    (func $status_reason (param i32 i32)))
  (memory (export "memory") 2049)
  (func (export "filter") (result i32)
    (call $status_reason (i32.const 0) (i32.const 0x8000000))
    (i32.const 2))
)
