;; Test guest template: every export hands the same payload to one host import, so tests
;; can check how the host decodes given bytes. Tests substitute the payload (the data
;; segment at 1024) and its length ($len); as committed, the payload is empty.
;;   enqueue     -> result.cluster_events(payload)
;;   prefilter   -> result.node_names(payload), returns 0
;;   filter      -> klog.logs(0, "hello", kvs = payload), returns 0
;;   score       -> klog.log(0, payload), returns 0
;;   postfilter  -> result.nominated_node_name(payload), returns (mode 1, code 0)
;;   permit      -> result.status_reason(payload), returns (code 2, timeout 0)
;;   prebind     -> handle.eventrecorder.eventf(payload), returns 0
;;   bind        -> result.status_reason with an out-of-bounds pointer, returns 1
(module $result_bytes
  (import "k8s.io/scheduler" "result.cluster_events" (func $cluster_events (param i32 i32)))
  (import "k8s.io/scheduler" "result.node_names" (func $node_names (param i32 i32)))
  (import "k8s.io/scheduler" "result.nominated_node_name" (func $nominated (param i32 i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))
  (import "k8s.io/scheduler" "handle.eventrecorder.eventf" (func $eventf (param i32 i32)))
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (import "k8s.io/klog" "logs" (func $logs (param i32 i32 i32 i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "hello")
  (data (i32.const 1024) "")
  (global $len i32 (i32.const 0))
  (func (export "enqueue")
    (call $cluster_events (i32.const 1024) (global.get $len)))
  (func (export "prefilter") (result i32)
    (call $node_names (i32.const 1024) (global.get $len))
    (i32.const 0))
  (func (export "filter") (result i32)
    (call $logs (i32.const 0) (i32.const 0) (i32.const 5) (i32.const 1024) (global.get $len))
    (i32.const 0))
  (func (export "score") (result i64)
    (call $log (i32.const 0) (i32.const 1024) (global.get $len))
    (i64.const 0))
  (func (export "postfilter") (result i64)
    (call $nominated (i32.const 1024) (global.get $len))
    (i64.shl (i64.const 1) (i64.const 32)))
  (func (export "permit") (result i64)
    (call $status_reason (i32.const 1024) (global.get $len))
    (i64.shl (i64.const 2) (i64.const 32)))
  (func (export "prebind") (result i32)
    (call $eventf (i32.const 1024) (global.get $len))
    (i32.const 0))
  (func (export "bind") (result i32)
    (call $status_reason (i32.const 65530) (i32.const 100))
    (i32.const 1))
)
