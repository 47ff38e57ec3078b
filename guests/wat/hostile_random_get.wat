;; Hostile guest (issue 14 item 10): `filter` asks for 256 MiB of randomness into a
;; one-page memory.
(module $hostile_random_get
  (import "wasi_snapshot_preview1" "random_get"
    (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "filter") (result i32)
    (drop (call $random_get (i32.const 0) (i32.const 0x0FFFFFFF)))
    (i32.const 0))
)
