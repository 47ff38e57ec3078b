/* The few declarations of wasmtime's C API (v50) that _native.c uses, written from
 * wasmtime's crates/c-api/include/wasmtime/func.h (wasmtime_func_call_unchecked,
 * wasmtime_func_unchecked_callback_t), memory.h (wasmtime_memory_data_size) and
 * wasm.h / trap.h (wasmtime_trap_new). The header files are not shipped in the PyPI
 * wheel, and nothing is linked at build time: the function addresses are resolved at
 * run time from the _libwasmtime shared library that wasmtime-py loads, and passed in by
 * wasmsched.wasm._fastpath. Every handle type is opaque here: only pointers are passed. */
#ifndef WASMSCHED_WASMTIME_DECLS_H
#define WASMSCHED_WASMTIME_DECLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_caller wasmtime_caller_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasm_trap_t wasm_trap_t;
typedef struct wasmtime_func wasmtime_func_t;      /* used by pointer only */
typedef struct wasmtime_memory wasmtime_memory_t;  /* used by pointer only */

/* val.h: wasmtime_val_raw_t is a 16-byte union (i32, i64, f32, f64, v128, anyref,
 * externref, funcref); the i32 and i64 members sit at offset 0, little-endian. */
typedef union wasmtime_val_raw {
    int32_t i32;
    int64_t i64;
    uint8_t v128[16];
} wasmtime_val_raw_t;

typedef wasmtime_error_t *(*wasmtime_func_call_unchecked_fn)(
    wasmtime_context_t *store, const wasmtime_func_t *func,
    wasmtime_val_raw_t *args_and_results, size_t args_and_results_len, wasm_trap_t **trap);

typedef wasm_trap_t *(*wasmtime_func_unchecked_callback_t)(
    void *env, wasmtime_caller_t *caller, wasmtime_val_raw_t *args_and_results,
    size_t num_args_and_results);

typedef wasm_trap_t *(*wasmtime_trap_new_fn)(const char *msg, size_t msg_len);

typedef size_t (*wasmtime_memory_data_size_fn)(const wasmtime_context_t *store,
                                                const wasmtime_memory_t *memory);

#endif
