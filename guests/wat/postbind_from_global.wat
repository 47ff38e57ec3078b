;; Test guest: `postbind` return values read from exported mutable globals,
;; which tests set (e.g. to INT32_MIN/MAX) to check exact round trips.
;; flag_global = 1 makes unreserve/postbind trap. Companion exports trap.
(module $postbind_from_global
  (memory (export "memory") 1 1)
  (global $status_code (export "status_code_global") (mut i32) (i32.const 0))
  (global $score (export "score_global") (mut i32) (i32.const 0))
  (global $nominating_mode (export "nominating_mode_global") (mut i32) (i32.const 0))
  (global $timeout (export "timeout_global") (mut i32) (i32.const 0))
  (global $flag (export "flag_global") (mut i32) (i32.const 0))
  (func (export "postbind")
    (if (global.get $flag) (then unreachable)))
  (func (export "bind") (result i32) unreachable)
)
