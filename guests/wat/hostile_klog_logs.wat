;; Hostile guest (issue 14 item 3): `filter` logs a structured message with 32 MiB of
;; key/value pairs (untouched memory: NUL bytes, i.e. millions of empty strings).
(module $hostile_klog_logs
  (import "k8s.io/klog" "logs"
    (func $logs (param i32 i32 i32 i32 i32)))
  (memory (export "memory") 514)
  (data (i32.const 0) "hello")
  (func (export "filter") (result i32)
    (call $logs (i32.const 0) (i32.const 0) (i32.const 5) (i32.const 64) (i32.const 0x2000000))
    (i32.const 0))
)
