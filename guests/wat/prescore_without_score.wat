;; Test guest: PreScore without Score (upstream refuses it: score must be exported).
(module $prescore_without_score
  (memory (export "memory") 1 1)
  (func (export "prescore") (result i32) (i32.const 0))
)
