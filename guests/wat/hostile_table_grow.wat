;; Hostile guest (issue 14 item 6): `filter` grows its table by 0x10000000 elements (2 GiB
;; of slots) in one instruction; the host's table limit must refuse (grow returns -1), and
;; then the guest traps. If the growth succeeded, `filter` would return Success.
(module $hostile_table_grow
  (table 1 funcref)
  (memory (export "memory") 1)
  (func (export "filter") (result i32)
    (if (i32.eq (table.grow (ref.null func) (i32.const 0x10000000)) (i32.const -1))
      (then unreachable))
    (i32.const 0))
)
