;; Test guest: `filter` grows memory 16 MiB at a time until growth fails, touching each new
;; region, then traps; the host's memory limit must stop it. `score` stays cheap so tests
;; can check the plugin still answers afterwards.
(module $memory_hog
  (memory (export "memory") 1)
  (func (export "filter") (result i32)
    (local $old i32)
    (loop $grow
      (local.set $old (memory.grow (i32.const 256)))
      (if (i32.ne (local.get $old) (i32.const -1))
        (then
          ;; write one byte in the new region so it is really committed
          (i32.store8 (i32.mul (local.get $old) (i32.const 65536)) (i32.const 1))
          (br $grow))))
    unreachable)
  (func (export "score") (result i64) (i64.const 0))
)
