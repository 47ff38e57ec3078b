"""The ``wasmsched`` command line."""

from wasmsched.cli import replay as _replay  # noqa: F401  (registers replay and import)
from wasmsched.cli import whatif as _whatif  # noqa: F401  (registers capacity, diff, sweep)
from wasmsched.cli.app import app, main

__all__ = ["app", "main"]
