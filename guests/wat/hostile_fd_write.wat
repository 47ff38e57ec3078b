;; Hostile guest (issue 14 item 1): `filter` writes 100 iovecs of 64 MiB each to stdout
;; (6.4 GB claimed over a 64 MiB memory that is never touched); `score` writes 1,000,000
;; iovecs. The host must refuse both from the iovec table alone, before copying a byte.
(module $hostile_fd_write
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1025)
  (func (export "filter") (result i32)
    (local $i i32)
    ;; iovec i at 16 + 8*i: {buf = 0, len = 64 MiB}
    (loop $fill
      (i32.store offset=20 (i32.mul (local.get $i) (i32.const 8)) (i32.const 0x4000000))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fill (i32.lt_u (local.get $i) (i32.const 100))))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 100) (i32.const 8)))
    (i32.const 0))
  (func (export "score") (result i64)
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1000000) (i32.const 8)))
    (i64.const 0))
)
