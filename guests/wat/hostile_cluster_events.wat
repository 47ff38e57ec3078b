;; Hostile guest (issue 14 item 2): `enqueue` hands the host 128 MiB of cluster events
;; (16 million 8-byte records) from untouched memory; `filter` is harmless.
(module $hostile_cluster_events
  (import "k8s.io/scheduler" "result.cluster_events"
    (func $cluster_events (param i32 i32)))
  (memory (export "memory") 2049)
  (func (export "enqueue")
    (call $cluster_events (i32.const 0) (i32.const 0x8000000)))
  (func (export "filter") (result i32) (i32.const 0))
)
