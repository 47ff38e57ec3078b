;; Test guest: `filter` never returns; the host's call deadline must stop it.
(module $infinite_loop
  (memory (export "memory") 1 1)
  (global $n (mut i32) (i32.const 0))
  (func (export "filter") (result i32)
    (loop $forever
      (global.set $n (i32.add (global.get $n) (i32.const 1)))
      (br $forever))
    (i32.const 0))
  (func (export "score") (result i64) (i64.const 0))
)
