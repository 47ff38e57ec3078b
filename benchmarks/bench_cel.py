"""Which CEL library from PyPI evaluates DRA device selectors: compile and eval cost, side by side.

One run measures each candidate on the same selector and the same 2000 devices (input
given per evaluation as plain Python data, as a device is handed to the allocator):

* ``cel-expr-python`` (Google's cel-cpp runtime, type-checked; what wasmsched.api.cel uses)
* ``common-expression-language`` (the Rust cel-interpreter crate's bindings)
* ``cel-python`` (pure Python)
* ``wasmsched.api.cel`` itself: the chosen library plus kube's environment and functions,
  per device through :meth:`DeviceSelector.matches` (quantity and semver as kube values)

Two selectors: ``plain`` (driver and two attribute lookups, which every candidate can run)
and ``dra`` (plus a capacity ``quantity`` comparison, which needs custom member functions;
cel-python is left out of it: its custom functions take another calling convention).

    python benchmarks/bench_cel.py            # needs the three libraries installed
    python benchmarks/bench_cel.py --devices 500

Measured 2026-12-04 on the shared 2-core machine (load average 5-9; two runs, us):

| library                              | compile | eval, input per call | eval, input once |
|--------------------------------------|---------|----------------------|------------------|
| cel-expr-python 0.1.3 (cel-cpp)      | 250-375 | 9-14                 | 3.6-5.9          |
| common-expression-language 0.10.0    | 105-205 | 26-42                | 2.4-4.8          |
| cel-python 0.5.0                     | 650-680 | 590-670              | -                |
| wasmsched.api.cel, plain / dra       | 330-500 | -                    | 5.1-6.5 / 12.8-14.5 |

With the input converted once per device the two native libraries cost the same; the
Rust binding's own per-call conversion is 3x cel-cpp's. The choice is by capability:
cel-expr-python type-checks as cel-go does (compile errors, not runtime ones), and carries
cel.bind, optionals, the strings extension, sets, two-variable comprehensions, RE2
``matches``, overflow errors and code-point ``size()``; the Rust binding has none of the
first five (and prints Python exceptions of custom functions to stderr); cel-python is
100x slower. wasmsched.api.cel's activation is built once per device (DeviceInput).

Compile is the mean of 20 compiles of the same text (no cache); eval the mean per device
over 3 passes, once with the input converted at each evaluation and once with it converted
once per device (cel-expr-python's ``Activation``, the Rust binding's ``Context``). Results are checked against the expected matches before timing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

PLAIN = (
    'device.driver == "gpu.example.com"'
    ' && device.attributes["gpu.example.com"].model == "a100"'
    ' && device.attributes["gpu.example.com"].index > 2'
)
DRA = PLAIN + ' && device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("20Gi"))'


def _devices(n: int) -> list[dict[str, Any]]:
    return [
        {
            "driver": "gpu.example.com",
            "model": "a100" if i % 2 else "h100",
            "index": i % 8,
            "memory": ("40Gi", "16Gi")[i % 3 == 0],
        }
        for i in range(n)
    ]


def _expected(devices: list[dict[str, Any]], with_memory: bool) -> list[bool]:
    return [
        d["model"] == "a100" and d["index"] > 2 and (not with_memory or d["memory"] == "40Gi")
        for d in devices
    ]


def _time(
    name: str,
    selector: str,
    compile_fn: Callable[[str], Any],
    inputs: list[Any],
    eval_fn: Callable[[Any, Any], Any],
    expected: list[bool],
) -> None:
    start = time.perf_counter()
    for _ in range(20):
        program = compile_fn(selector)
    compile_us = (time.perf_counter() - start) / 20 * 1e6
    got = [bool(eval_fn(program, d)) for d in inputs]
    assert got == expected, (name, got[:8], expected[:8])
    start = time.perf_counter()
    for _ in range(3):
        for d in inputs:
            eval_fn(program, d)
    eval_us = (time.perf_counter() - start) / (3 * len(inputs)) * 1e6
    print(f"{name:34s} compile {compile_us:8.1f} us   eval {eval_us:7.2f} us/device")


def _quantity_bytes(text: str) -> int:
    return int(text[:-2]) << 30


def _plain_input(d: dict[str, Any]) -> dict[str, Any]:
    """The device as plain data; a quantity is a map of its byte count."""
    return {
        "device": {
            "driver": d["driver"],
            "attributes": {"gpu.example.com": {"model": d["model"], "index": d["index"]}},
            "capacity": {"gpu.example.com": {"memory": {"v": _quantity_bytes(d["memory"])}}},
        }
    }


def bench_cel_expr_python(selector: str, devices: list[dict[str, Any]], exp: list[bool]) -> None:
    from cel_expr_python import cel

    t = cel.Type
    quantity_t = t.Map(t.STRING, t.INT)
    functions = [
        cel.FunctionDecl(
            "quantity",
            [cel.Overload("q", quantity_t, [t.STRING], impl=lambda s: {"v": _quantity_bytes(s)})],
        ),
        cel.FunctionDecl(
            "isGreaterThan",
            [
                cel.Overload(
                    "gt",
                    t.BOOL,
                    [quantity_t, quantity_t],
                    is_member=True,
                    impl=lambda a, b: a["v"] > b["v"],
                )
            ],
        ),
    ]
    env = cel.NewEnv(variables={"device": t.DYN}, functions=functions)
    inputs = [_plain_input(d) for d in devices]
    _time(
        "cel-expr-python 0.1.3 (cel-cpp)",
        selector,
        env.compile,
        inputs,
        lambda p, d: p.eval(data=d).value(),
        exp,
    )
    prepared = [env.Activation(data=d) for d in inputs]
    _time(
        "  same, Activation built once",
        selector,
        env.compile,
        prepared,
        lambda p, a: p.eval(a).value(),
        exp,
    )


def bench_common_expression_language(
    selector: str, devices: list[dict[str, Any]], exp: list[bool]
) -> None:
    import cel

    functions = {
        "quantity": lambda s: {"v": _quantity_bytes(s)},
        "isGreaterThan": lambda a, b: a["v"] > b["v"],
    }
    inputs = [_plain_input(d) for d in devices]
    _time(
        "common-expression-language 0.10.0",
        selector,
        cel.compile,
        inputs,
        lambda p, d: p.execute(cel.Context(variables=d, functions=functions)),
        exp,
    )
    prepared = [cel.Context(variables=d, functions=functions) for d in inputs]
    _time(
        "  same, Context built once",
        selector,
        cel.compile,
        prepared,
        lambda p, c: p.execute(c),
        exp,
    )


def bench_cel_python(selector: str, devices: list[dict[str, Any]], exp: list[bool]) -> None:
    import celpy

    env = celpy.Environment()
    inputs = [
        {
            "device": celpy.json_to_cel(
                {
                    "driver": d["driver"],
                    "attributes": {"gpu.example.com": {"model": d["model"], "index": d["index"]}},
                }
            )
        }
        for d in devices
    ]
    _time(
        "cel-python 0.5.0 (pure Python)",
        selector,
        lambda e: env.program(env.compile(e)),
        inputs,
        lambda p, d: p.evaluate(d),
        exp,
    )


def bench_wasmsched(selector: str, devices: list[dict[str, Any]], exp: list[bool]) -> None:
    from wasmsched.api.cel import device_input
    from wasmsched.api.cel.environment import compile_expression
    from wasmsched.api.cel.selector import DeviceSelector

    inputs = [
        device_input(
            d["driver"],
            {"model": {"string": d["model"]}, "index": {"int": d["index"]}},
            {"memory": {"value": d["memory"]}},
        )
        for d in devices
    ]
    _time(
        "wasmsched.api.cel (cel-expr-python)",
        selector,
        lambda e: DeviceSelector(e, compile_expression(e)),
        inputs,
        lambda s, d: s.matches(d),
        exp,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2000)
    args = parser.parse_args()
    devices = _devices(args.devices)
    for name, selector, with_memory in (("plain", PLAIN, False), ("dra", DRA, True)):
        print(f"-- {name}: {selector}")
        exp = _expected(devices, with_memory)
        bench_cel_expr_python(selector, devices, exp)
        bench_common_expression_language(selector, devices, exp)
        if not with_memory:
            bench_cel_python(selector, devices, exp)
        bench_wasmsched(selector, devices, exp)


if __name__ == "__main__":
    main()
