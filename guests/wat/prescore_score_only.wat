;; Test guest: PreScore + Score without prefilter; score is 7 with status Success.
(module $prescore_score_only
  (memory (export "memory") 1 1)
  (func (export "prescore") (result i32) (i32.const 0))
  (func (export "score") (result i64) (i64.shl (i64.const 7) (i64.const 32)))
)
