;; Test guest: `prescore` print "panic!" to stdout, then trap.
;; Companion exports (needed for a loadable plugin) trap without output.
(module $panic_on_prescore
  ;; fd_write(stdout, iovs, 1, nwritten): the only import.
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  ;; iovec {buf=16, len=6} at 0, "panic!" at 16, nwritten at 8.
  (data (i32.const 0) "\10\00\00\00\06\00\00\00")
  (data (i32.const 16) "panic!")
  (func $panic
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    unreachable)
  (func (export "prescore") (result i32) (call $panic) (i32.const 0))
  (func (export "score") (result i64) unreachable)
)
