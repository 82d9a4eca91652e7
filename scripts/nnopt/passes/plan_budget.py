"""One planning budget for every search of a plan, counted in work, and where progress
goes. (Work, not memory: the board's memory budget is :mod:`nnopt.memory_budget`.)

Each search that can change the plan counts its own deterministic unit of work
(:data:`WORK_UNITS`) and asks :meth:`PlanBudget.spend` before each step; the budget of
``seconds`` (``--plan-budget``) is mapped onto a count per search,
:data:`WORK_PER_SECOND` units per second. Past its count a search keeps the best result
found so far and names itself with :meth:`PlanBudget.exhaust`, which the Plan records
(``planning_time_budget``) and the report shows. The same model and options therefore
give the same plan on any machine under any load: what stops a search is how much it
did, never how long it took.

A clock is only a guard (:data:`GUARD_FACTOR` times ``seconds``, at least
:data:`GUARD_MIN_S`), and it is the planner's own CPU time (:func:`time.process_time`),
not the wall clock: other processes on the machine do not advance it, so load alone
never fires it (a wall-clock guard did, on 2 cores at load ~45: a 3x-budget guard hit
after 138 s for a plan that takes 18 s alone). A machine so slow that the counts have
not stopped the searches by then stops them there, and the plan says so
(``wall_clock_guard`` in ``planning_time_budget``, the JSON name kept; a line in the
report): only then does the plan depend on the machine. The order search counts
expanded states (``passes.schedule``,
``STATES_PER_SECOND``) against ``--schedule-budget`` and, mapped the same way, against
this budget.

Progress is reported through the ``progress`` callback (``stage, done, total``) the
caller passes in: passes never print. The budget is the only mutable thing a pass
receives; what a pass returns depends only on its inputs and on the work it was
allowed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Default of ``--plan-budget`` (seconds for all the searches of one plan).
DEFAULT_PLAN_BUDGET_S = 30.0

#: The unit each search counts (its stage name as the report and the plan JSON show it).
WORK_UNITS: dict[str, str] = {
    "tiling candidates": "tiling grids placed",
    "concatenation slices": "concatenations tried as views",
    "in-place candidates": "depthwise ops tried in place",
    "in-place instead of rows": "depthwise ops tried in place instead of by rows",
    "arena strategies": "arena strategies run after the first of a layout",
    "arena hill climbing": "hill-climbing swaps tried",
}

#: Units of work each search may spend per second of ``--plan-budget``: about what
#: the 2-core CI-class machine does per second of CPU on the largest shared models
#: (Debian 12, Python 3.11; mobilenet_v2 224x224: 30 strategies, 4,000 swaps, 13 + 9
#: depthwise trials in 2.8 s; NASNet-Mobile: 115 + 57 depthwise trials in 1.1 s;
#: DenseNet-121: 58 concatenations in 0.3 s; the synthetic 10,000-op graph: 400 swaps
#: of 10,000 buffers in 4.3 s), so that the default 30 s stands for a few CPU seconds
#: to a minute of searching. At the default every shared model's searches stop at
#: their own limits first, with room to spare (the largest use: 15 tiling grids, 58
#: concatenations, 115 + 57 depthwise trials, 45 strategies, 6,000 swaps, against
#: 60 / 600 / 600 + 300 / 300 / 15,000): the default budget decides none of their plans.
WORK_PER_SECOND: dict[str, int] = {
    "tiling candidates": 2,
    "concatenation slices": 20,
    "in-place candidates": 20,
    "in-place instead of rows": 10,
    "arena strategies": 10,
    "arena hill climbing": 500,
}

#: The guard clock (CPU time) stops the searches only past this many times the budget's seconds
#: (and never before :data:`GUARD_MIN_S`): a guard, not what decides the plan.
GUARD_FACTOR = 3.0
GUARD_MIN_S = 60.0

def guard_clock() -> float:
    """The guard's clock: this process's CPU time (threads included), which other
    processes' load does not advance."""
    return time.process_time()


Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``, e.g. ``("in-place candidates", 40, 123)``."""


def work_limits(seconds: float | None) -> dict[str, int] | None:
    """The count of work units each search may spend for a budget of ``seconds``
    (None: unlimited)."""
    if seconds is None:
        return None
    return {stage: int(max(seconds, 0.0) * rate) for stage, rate in WORK_PER_SECOND.items()}


@dataclass
class PlanBudget:
    """Work counts for ``seconds`` of budget (None: unlimited), a wall-clock guard, and a
    progress sink."""

    seconds: float | None = DEFAULT_PLAN_BUDGET_S
    progress: Progress | None = None
    clock: Callable[[], float] | None = None  # None: guard_clock(), read at each call
    exhausted: list[str] = field(default_factory=list)  # stages cut short, in order
    used: dict[str, int] = field(default_factory=dict)  # work units spent per stage
    guard_hit: list[str] = field(default_factory=list)  # stages the wall clock stopped

    def __post_init__(self) -> None:
        self.limits = work_limits(self.seconds)
        self._deadline = (None if self.seconds is None else self._now() + self.guard_s())

    def _now(self) -> float:
        return (self.clock or guard_clock)()

    def guard_s(self) -> float:
        """Seconds of the wall-clock guard (``inf`` without a limit)."""
        if self.seconds is None:
            return float("inf")
        return max(GUARD_FACTOR * max(self.seconds, 0.0), GUARD_MIN_S)

    def remaining(self) -> float:
        """Seconds left before the wall-clock guard (``inf`` without a limit)."""
        if self._deadline is None:
            return float("inf")
        return max(0.0, self._deadline - self._now())

    def spend(self, stage: str, units: int = 1) -> bool:
        """Spend ``units`` of ``stage``'s work: False (and ``stage`` recorded as
        exhausted) when its count is used up or the wall-clock guard has passed, then
        the search stops with its best result so far."""
        used = self.used.get(stage, 0)
        if self.limits is not None and used + units > self.limits.get(stage, 0):
            self.exhaust(stage)
            return False
        if self._deadline is not None and self._now() >= self._deadline:
            if stage not in self.guard_hit:
                self.guard_hit.append(stage)
            self.exhaust(stage)
            return False
        self.used[stage] = used + units
        return True

    def exhaust(self, stage: str) -> None:
        """Record that ``stage`` stopped at its budget with its best result so far."""
        if stage not in self.exhausted:
            self.exhausted.append(stage)

    def clock_stopped(self, stage: str) -> None:
        """Record that the time guard stopped ``stage`` (the order search's own)."""
        if stage not in self.guard_hit:
            self.guard_hit.append(stage)
        self.exhaust(stage)

    def step(self, stage: str, done: int, total: int) -> None:
        """Report how far ``stage`` is (``done`` of ``total``) to the callback."""
        if self.progress is not None:
            self.progress(stage, done, total)

    def record(self) -> dict[str, object]:
        """What the plan JSON says about the budget (``planning_time_budget``): the
        seconds, the searches cut short, and ``wall_clock_guard`` (the searches the
        guard stopped) only when it did. Deterministic unless the guard fired."""
        info: dict[str, object] = {"seconds": self.seconds, "exhausted": list(self.exhausted)}
        if self.guard_hit:
            info["wall_clock_guard"] = list(self.guard_hit)
        return info

    def fresh(self) -> PlanBudget:
        """A new budget of the same size, without progress (the classic fallback)."""
        return PlanBudget(self.seconds, None, self.clock)
