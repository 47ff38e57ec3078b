;; Test guest: exports memory only, so it implements no extension point.
(module $not_plugin
  (memory (export "memory") 1 1)
)
