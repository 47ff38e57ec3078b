;; Test guest: `permit` return values read from exported mutable globals,
;; which tests set (e.g. to INT32_MIN/MAX) to check exact round trips.
;; flag_global = 1 makes unreserve/postbind trap. Companion exports trap.
(module $permit_from_global
  (memory (export "memory") 1 1)
  (global $status_code (export "status_code_global") (mut i32) (i32.const 0))
  (global $score (export "score_global") (mut i32) (i32.const 0))
  (global $nominating_mode (export "nominating_mode_global") (mut i32) (i32.const 0))
  (global $timeout (export "timeout_global") (mut i32) (i32.const 0))
  (global $flag (export "flag_global") (mut i32) (i32.const 0))
  (func (export "permit") (result i64)
    (i64.or (i64.shl (i64.extend_i32_s (global.get $status_code)) (i64.const 32))
           (i64.extend_i32_u (global.get $timeout))))
)
