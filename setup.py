"""Optional compiled extensions: wasmsched.wasm._native (native/_native.c) and
wasmsched.api.protobuf._decode (native/_protodecode.c, the live client's protobuf decoder;
without it the client speaks JSON).

It includes only Python's headers and our own declarations of wasmtime's C API
(native/wasmtime_decls.h) and links nothing: the wasmtime functions are resolved at run
time from the library wasmtime-py loads. A failed build (no compiler, no Python headers)
does not fail the install: wasmsched then uses its ctypes path.
"""

from __future__ import annotations

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any build failure leaves the ctypes path
            print(f"warning: wasmsched.wasm._native not built ({exc}); using ctypes")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"warning: {ext.name} not built ({exc}); using ctypes")


setup(
    ext_modules=[
        Extension(
            "wasmsched.wasm._native",
            sources=["native/_native.c"],
            include_dirs=["native"],
            depends=["native/hot.h", "native/klog.h", "native/wasmtime_decls.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "wasmsched.api.protobuf._decode",
            sources=["native/_protodecode.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
