"""The simulated clock: nothing sleeps, the simulation's loop moves time to the next thing
that is due."""

from __future__ import annotations

__all__ = ["SimClock"]


class SimClock:
    """Simulated seconds since the run started; ``t`` is set by the loop that owns it."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def now(self) -> float:
        return self.t
