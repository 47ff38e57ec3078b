;; Test guest: `_start` prints "panic!" to stdout then traps, so instantiation fails.
(module $panic_on_start
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "\10\00\00\00\06\00\00\00")
  (data (i32.const 16) "panic!")
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    unreachable)
  (func (export "filter") (result i32) (i32.const 0))
)
