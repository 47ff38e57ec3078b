;; Hostile guest (issue 14 item 11): `normalizescore` returns 100,000 "[" as its
;; normalized score list, which a recursive JSON decoder cannot take.
(module $hostile_normalize_nesting
  (import "k8s.io/scheduler" "result.normalized_score_list"
    (func $normalized (param i32 i32)))
  (memory (export "memory") 2)
  (func (export "score") (result i64) (i64.const 0))
  (func (export "normalizescore") (result i32)
    (memory.fill (i32.const 0) (i32.const 91) (i32.const 100000))
    (call $normalized (i32.const 0) (i32.const 100000))
    (i32.const 0))
)
