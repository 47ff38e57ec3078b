;; NodeNumber, a Score plugin written directly in WebAssembly text.
;;
;; It speaks kube-scheduler-wasm-extension's ABI: it pulls the pod being scheduled
;; (protobuf k8s.io.api.core.v1.Pod) and the node name through host imports, and returns
;; score<<32 | status from its `score` export. A node scores 100 when the last character
;; of its name equals the last character of the pod's name (upstream's example uses 10;
;; 100 makes the effect visible next to the default plugins), else 0.
;; guestConfig "reverse" inverts the scores.
(module
  (import "k8s.io/scheduler" "currentPod" (func $current_pod (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "currentNodeName" (func $current_node_name (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "get_config" (func $get_config (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))

  ;; 16 pages: [0, 256) node name, [256, 512) config, [1024, 1 MiB) pod bytes
  (memory (export "memory") 16)
  (data (i32.const 512) "pod too large")

  (global $reverse (mut i32) (i32.const -1))  ;; -1: config not read yet

  ;; Reads a varint at $p (into global $value); returns the position after it.
  (global $value (mut i32) (i32.const 0))
  (func $varint (param $p i32) (result i32)
    (local $shift i32) (local $b i32)
    (global.set $value (i32.const 0))
    (loop $more
      (local.set $b (i32.load8_u (local.get $p)))
      (global.set $value
        (i32.or (global.get $value)
                (i32.shl (i32.and (local.get $b) (i32.const 0x7f)) (local.get $shift))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (local.set $shift (i32.add (local.get $shift) (i32.const 7)))
      (br_if $more (i32.and (local.get $b) (i32.const 0x80))))
    (local.get $p))

  ;; The last byte of the pod's metadata.name (field 1 of field 1), or -1.
  (func $pod_name_last_char (result i32)
    (local $len i32) (local $p i32) (local $end i32)
    (local.set $len (call $current_pod (i32.const 1024) (i32.const 1047552)))
    (if (i32.gt_u (local.get $len) (i32.const 1047552)) (then (return (i32.const -2))))
    (local.set $p (i32.const 1024))
    ;; Kubernetes writes metadata (tag 0x0a) first, and name (tag 0x0a) first inside it.
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x0a)) (then (return (i32.const -1))))
    (local.set $p (call $varint (i32.add (local.get $p) (i32.const 1))))
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x0a)) (then (return (i32.const -1))))
    (local.set $p (call $varint (i32.add (local.get $p) (i32.const 1))))
    (if (i32.eqz (global.get $value)) (then (return (i32.const -1))))
    (local.set $end (i32.add (local.get $p) (global.get $value)))
    (i32.load8_u (i32.sub (local.get $end) (i32.const 1))))

  (func $reverse_config (result i32)
    (local $len i32)
    (if (i32.lt_s (global.get $reverse) (i32.const 0))
      (then
        (local.set $len (call $get_config (i32.const 256) (i32.const 256)))
        ;; guestConfig "reverse" (or anything starting with 'r') inverts the scores
        (global.set $reverse
          (i32.and (i32.ne (local.get $len) (i32.const 0))
                   (i32.eq (i32.load8_u (i32.const 256)) (i32.const 0x72))))))
    (global.get $reverse))

  (func (export "score") (result i64)
    (local $pod_char i32) (local $len i32) (local $score i64)
    (local.set $pod_char (call $pod_name_last_char))
    (if (i32.eq (local.get $pod_char) (i32.const -2))
      (then
        (call $status_reason (i32.const 512) (i32.const 13))
        (return (i64.const 1))))
    (local.set $len (call $current_node_name (i32.const 0) (i32.const 256)))
    (local.set $score (i64.const 0))
    (if (i32.and (i32.gt_s (local.get $len) (i32.const 0))
                 (i32.le_u (local.get $len) (i32.const 256)))
      (then
        (if (i32.eq (i32.load8_u (i32.sub (local.get $len) (i32.const 1))) (local.get $pod_char))
          (then (local.set $score (i64.const 100))))))
    (if (call $reverse_config)
      (then (local.set $score (i64.sub (i64.const 100) (local.get $score)))))
    (i64.shl (local.get $score) (i64.const 32)))
)
