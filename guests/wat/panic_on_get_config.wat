;; Test guest: `prefilter` copies the guest config (at most 1024 bytes) to stdout, then
;; traps, so the error message proves the config reached the guest.
(module $panic_on_get_config
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "k8s.io/scheduler" "get_config"
    (func $get_config (param i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (func (export "prefilter") (result i32)
    (local $len i32)
    ;; config into [1024, 2048); a value longer than the limit is not written.
    (local.set $len (call $get_config (i32.const 1024) (i32.const 1024)))
    (if (i32.gt_u (local.get $len) (i32.const 1024))
      (then (local.set $len (i32.const 0))))
    ;; iovec {buf=1024, len} at 0, nwritten at 8
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    unreachable)
)
