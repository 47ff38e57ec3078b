;; Test guest: NormalizeScore without Score (upstream refuses it).
(module $scoreextensions_without_score
  (memory (export "memory") 1 1)
  (func (export "normalizescore") (result i32) (i32.const 0))
)
