;; Hostile guest (issue 14 item 4): `filter` logs one 64 MiB message.
(module $hostile_klog_log
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1025)
  (func (export "filter") (result i32)
    (call $log (i32.const 0) (i32.const 0) (i32.const 0x4000000))
    (i32.const 0))
)
