;; Hostile guest (issue 14 item 8): `filter` polls 1,000,000 subscriptions (48 MB of
;; untouched memory, events into another 32 MB).
(module $hostile_poll_oneoff
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1300)
  (func (export "filter") (result i32)
    (drop (call $poll_oneoff (i32.const 0) (i32.const 0x3000000) (i32.const 1000000)
      (i32.const 8)))
    (i32.const 0))
)
