;; Hostile guest (issue 14 item 12): `filter` rejects every node; `postfilter` nominates
;; "ghost-node", which is not in the cluster, with ModeOverride and Success.
(module $hostile_ghost_nomination
  (import "k8s.io/scheduler" "result.nominated_node_name"
    (func $nominated (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "ghost-node")
  (func (export "filter") (result i32) (i32.const 2))
  (func (export "postfilter") (result i64)
    (call $nominated (i32.const 0) (i32.const 10))
    (i64.const 0x100000000))
)
