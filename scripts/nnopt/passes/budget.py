"""One planning time budget for every search of a plan, and where progress goes.

The searches (order search, in-place candidates, tiling candidates, arena strategies
and hill climbing) each ask :meth:`PlanBudget.expired` between their steps; past the
deadline a search keeps the best result found so far and names itself with
:meth:`PlanBudget.exhaust`, which the Plan records (``planning_time_budget``) and the
report shows. Progress is reported through the ``progress`` callback
(``stage, done, total``) the caller passes in: passes never print.

The budget is the only mutable thing a pass receives, and it only ever learns which
searches were cut short; what a pass returns still depends only on its inputs and
on how much time it was given.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Default of ``--plan-budget`` (seconds for all the searches of one plan).
DEFAULT_PLAN_BUDGET_S = 30.0

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``, e.g. ``("in-place candidates", 40, 123)``."""


@dataclass
class PlanBudget:
    """A deadline ``seconds`` from creation (None: unlimited) and a progress sink."""

    seconds: float | None = DEFAULT_PLAN_BUDGET_S
    progress: Progress | None = None
    clock: Callable[[], float] = time.monotonic
    exhausted: list[str] = field(default_factory=list)  # stages cut short, in order

    def __post_init__(self) -> None:
        self._deadline = (None if self.seconds is None
                          else self.clock() + max(self.seconds, 0.0))

    def remaining(self) -> float:
        """Seconds left (``inf`` without a limit, 0 when over)."""
        if self._deadline is None:
            return float("inf")
        return max(0.0, self._deadline - self.clock())

    def expired(self) -> bool:
        return self._deadline is not None and self.clock() >= self._deadline

    def exhaust(self, stage: str) -> None:
        """Record that ``stage`` stopped at the deadline with its best result so far."""
        if stage not in self.exhausted:
            self.exhausted.append(stage)

    def step(self, stage: str, done: int, total: int) -> None:
        """Report how far ``stage`` is (``done`` of ``total``) to the callback."""
        if self.progress is not None:
            self.progress(stage, done, total)

    def fresh(self) -> PlanBudget:
        """A new budget of the same length, without progress (the classic fallback)."""
        return PlanBudget(self.seconds, None, self.clock)
