"""The ``wasmsched`` command line."""

from wasmsched.cli.app import app, main

__all__ = ["app", "main"]
