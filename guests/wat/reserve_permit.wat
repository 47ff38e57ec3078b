;; Test guest: Reserve + Permit only, a combination upstream's mask table refuses (RP).
;; Permit answers Wait with a 1500 ms timeout; reserve succeeds.
(module $reserve_permit
  (memory (export "memory") 1 1)
  (func (export "reserve") (result i32) (i32.const 0))
  (func (export "unreserve"))
  (func (export "permit") (result i64)
    ;; status 4 (Wait) in the high word, 1500 ms in the low word
    (i64.or (i64.shl (i64.const 4) (i64.const 32)) (i64.const 1500)))
)
