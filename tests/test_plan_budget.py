"""Planner at scale (issue 18): the interval structure behind first fit, the arena lower
bound, the planning time budget, progress reporting and --quiet."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import model_path
from nnopt.cli import main
from nnopt.commands.progress_line import ProgressLine
from nnopt.errors import PlanError
from nnopt.frontend.tflite import load_model
from nnopt.passes import arena
from nnopt.passes.arena import (
    STRATEGIES,
    Overlap,
    arena_lower_bound,
    plan_arena,
    verify_offsets,
)
from nnopt.passes.lifetimes import Buffer
from nnopt.passes.plan_budget import PlanBudget
from nnopt.planner import PlanOptions, plan_model
from nnopt.report.text import budget_note

ALIGN = 16


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def brute_first_fit(order: list[Buffer], overlaps: list[Overlap]) -> dict[str, int]:
    """Reference first fit: every placed buffer tested against the new one (quadratic)."""
    perms = {(o.src, o.dst): o for o in overlaps}
    placed: list[tuple[Buffer, int]] = []
    out: dict[str, int] = {}
    for b in order:
        size = _align(b.size)
        busy = sorted(iv for o, off in placed if o.first <= b.last and b.first <= o.last
                      if (iv := arena._busy(o, off, _align(o.size), b, size, perms, ALIGN)))
        cur = 0
        for lo, hi in busy:
            if cur + size <= lo:
                break
            cur = max(cur, _align(hi))
        out[b.key] = cur
        placed.append((b, cur))
    return out


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[Buffer], list[Overlap]]:
    n = draw(st.integers(1, 40))
    steps = draw(st.integers(1, 25))
    bufs = []
    for k in range(n):
        first = draw(st.integers(0, steps - 1))
        last = draw(st.integers(first, min(steps - 1, first + draw(st.integers(0, 10)))))
        bufs.append(Buffer(f"t{k}", k, draw(st.integers(1, 700)), first, last))
    overlaps = []
    seen: set[frozenset[str]] = set()
    for a in bufs:  # an op's dying input and its output, as passes.inplace_ops makes them
        for b in bufs:
            pair = frozenset((a.key, b.key))
            if a is not b and a.last == b.first and pair not in seen and draw(st.booleans()):
                seen.add(pair)
                fwd = draw(st.one_of(st.none(), st.integers(-800, 800)))
                bwd = draw(st.one_of(st.none(), st.integers(-800, 800)))
                overlaps.append(Overlap(a.key, b.key, a.last, a.last, fwd, bwd, "test"))
    return bufs, overlaps


@settings(max_examples=60, deadline=None)
@given(problems(), st.randoms(use_true_random=False))
def test_indexed_first_fit_matches_brute_force(prob: tuple[list[Buffer], list[Overlap]],
                                               rnd: object) -> None:
    bufs, overlaps = prob
    order = list(bufs)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    want = brute_first_fit(order, overlaps)
    assert arena._first_fit(order, ALIGN, overlaps) == want
    # re-placing from any prefix of known offsets gives the same layout
    k = len(order) // 2
    perms = {(o.src, o.dst): o for o in overlaps}
    assert arena._first_fit_from(order, ALIGN, perms, start=k, known=want) == want
    # with a limit: the same layout, or None exactly when some buffer ends above it
    top = max(want[b.key] + _align(b.size) for b in order)
    assert arena._first_fit_from(order, ALIGN, perms, limit=top) == want
    if top > 0:
        assert arena._first_fit_from(order, ALIGN, perms, limit=top - 1) is None


@settings(max_examples=60, deadline=None)
@given(problems(), st.lists(st.integers(0, 60), min_size=40, max_size=40))
def test_verifier_agrees_with_pairwise_check(prob: tuple[list[Buffer], list[Overlap]],
                                             slots: list[int]) -> None:
    bufs, overlaps = prob
    offsets = {b.key: slots[i] * ALIGN for i, b in enumerate(bufs)}
    perms = {(o.src, o.dst): o for o in overlaps}
    ordered = sorted(bufs, key=lambda b: offsets[b.key])
    bad = False
    for i, a in enumerate(ordered):  # every pair, the lower offset first
        for b in ordered[i + 1:]:
            lo_a, lo_b = offsets[a.key], offsets[b.key]
            if (a.first <= b.last and b.first <= a.last and lo_b < lo_a + a.size
                    and lo_a < lo_b + b.size
                    and not arena._permitted(a, b, offsets, perms)):
                bad = True
    size = max(offsets[b.key] + b.size for b in bufs)
    if bad:
        with pytest.raises(PlanError, match="overlap"):
            verify_offsets(bufs, offsets, ALIGN, size, overlaps)
    else:
        verify_offsets(bufs, offsets, ALIGN, size, overlaps)


@settings(max_examples=60, deadline=None)
@given(problems())
def test_lower_bound_holds_for_every_strategy(prob: tuple[list[Buffer], list[Overlap]]
                                              ) -> None:
    bufs, overlaps = prob
    bound = arena_lower_bound(bufs, ALIGN, overlaps)
    assert bound > 0
    for name in STRATEGIES:
        try:  # verified layouts only (random permissions can make a strategy's fail)
            plan = plan_arena(bufs, align=ALIGN, strategies=(name,), overlaps=overlaps)
        except PlanError:
            continue
        assert plan.arena_bytes >= bound, name
    if not overlaps:
        assert bound == arena.aligned_live_peak(bufs, ALIGN)


def reference_hill_climb(bufs: list[Buffer], overlaps: list[Overlap],
                         iterations: int = 400, seed: int = 0) -> dict[str, int]:
    """Hill climbing as first written: every swap's order placed again from scratch
    (brute-force first fit), kept when the arena does not grow."""
    import random

    def size_of(offs: dict[str, int]) -> int:
        return max(offs[b.key] + _align(b.size) for b in bufs)

    starts = [sorted(bufs, key=lambda b: (-b.size, b.key)),
              sorted(bufs, key=lambda b: (b.first, -b.size, b.key)),
              sorted(bufs, key=lambda b: (-(b.size * (b.last - b.first + 1)), b.key))]
    best_order: list[Buffer] = []
    best_offs: dict[str, int] = {}
    best = -1
    for s in starts:
        offs = brute_first_fit(s, overlaps)
        if best < 0 or size_of(offs) < best:
            best, best_order, best_offs = size_of(offs), list(s), offs
    bound = arena.aligned_live_peak(bufs, ALIGN) if not overlaps else 0
    rng = random.Random(seed)
    n = len(best_order)
    for _ in range(iterations):
        if best <= bound:
            break
        i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        cand = list(best_order)
        cand[i], cand[j] = cand[j], cand[i]
        offs = brute_first_fit(cand, overlaps)
        if size_of(offs) <= best:
            best, best_order, best_offs = size_of(offs), cand, offs
    return best_offs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_hill_climbing_equals_replanning_every_swap(prob: tuple[list[Buffer], list[Overlap]]
                                                   ) -> None:
    """Re-placing only what a swap changes (issue 18) takes the decisions of placing
    every swapped order from scratch: the same offsets."""
    bufs, overlaps = prob
    if len(bufs) < 2:
        return
    assert arena.hill_climb(bufs, ALIGN, overlaps, iterations=150) == \
        reference_hill_climb(bufs, overlaps, iterations=150)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_time_neighbours_are_the_lifetimes_that_meet(prob: tuple[list[Buffer], list[Overlap]]
                                                     ) -> None:
    from nnopt.passes.intervals import time_neighbours

    bufs, _ = prob
    near = time_neighbours(bufs, lambda b: (b.first, b.last))
    for b, mine in zip(bufs, near, strict=True):
        want = {o.key for o in bufs if o is not b and o.first <= b.last and b.first <= o.last}
        assert sorted(o.key for o in mine) == sorted(want)


def test_hill_climbing_stops_at_the_budget() -> None:
    bufs = [Buffer(f"t{k}", k, 16 * (1 + (k * 7) % 13), k % 9, k % 9 + 1 + k % 4)
            for k in range(60)]
    budget = PlanBudget(0.0)
    plan = plan_arena(bufs, align=ALIGN, budget=budget)
    full = plan_arena(bufs, align=ALIGN)
    assert set(plan.candidates) == {"greedy_by_size"} != set(full.candidates)
    assert budget.exhausted == ["arena strategies"]
    verify_offsets(bufs, plan.offsets, ALIGN, plan.arena_bytes)


def test_tiny_budget_gives_a_valid_plan_no_worse_than_classic() -> None:
    graph = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    tiny = plan_model(graph, PlanOptions(inplace_ops="auto", tiling="auto",
                                         plan_budget_s=0.0)).plan
    classic = plan_model(graph, PlanOptions(plan_budget_s=0.0)).plan
    assert tiny.planning_time_budget["exhausted"]
    assert tiny.arena_bytes <= classic.arena_bytes
    # every buffer in the arena, aligned (plan_arena verified the layout itself)
    assert all(b.offset % 16 == 0 and b.offset + b.size <= tiny.arena_bytes
               for b in tiny.buffers)
    roomy = plan_model(graph, PlanOptions(inplace_ops="auto", tiling="auto")).plan
    assert roomy.planning_time_budget == {"seconds": 30.0, "exhausted": []}
    assert roomy.arena_bytes <= tiny.arena_bytes


def test_budget_exhaustion_in_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    out = tmp_path / "r.json"
    rc = main(["optimize", str(model_path("mlperf_tiny/vww_96_int8.tflite")), "--table",
               "none", "--swap", "off", "--plan-budget", "0", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "plan budget (0 s of work) exhausted in" in text
    import json

    doc = json.loads(out.read_text())
    assert doc["planning_time_budget"]["seconds"] == 0.0
    assert doc["planning_time_budget"]["exhausted"]


def test_progress_goes_to_the_callback() -> None:
    graph = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    seen: list[tuple[str, int, int]] = []
    plan_model(graph, PlanOptions(inplace_ops="auto", tiling="auto",
                                  progress=lambda s, d, t: seen.append((s, d, t))))
    stages = [s for s, _, _ in seen]
    assert stages[0] == "order search"
    assert "in-place candidates" in stages
    assert all(0 <= d <= t for _, d, t in seen)


class _Tty(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_line_redraws_only_on_a_terminal() -> None:
    term = _Tty(True)
    line = ProgressLine("planning 571 ops", term, interval_s=0.0)
    line("in-place candidates", 40, 123)
    line("in-place candidates", 41, 123)
    assert term.getvalue().count("\r") == 2
    assert "nnopt: planning 571 ops ... in-place candidates 41/123" in term.getvalue()
    line.close()
    assert term.getvalue().endswith("\r")
    pipe = _Tty(False)
    ProgressLine("planning 5 ops", pipe)("order search", 0, 1)
    assert pipe.getvalue() == ""


def test_quiet_silences_progress(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(model_path("tflm/hello_world_int8.tflite"))
    args = ["optimize", model, "--table", "none", "--swap", "off"]
    assert main(args) == 0
    assert "nnopt: planning" in capsys.readouterr().err
    assert main([*args, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "arena" in captured.out
    assert main(args) == 0  # a later command without --quiet talks again
    assert "nnopt: planning" in capsys.readouterr().err


def test_negative_plan_budget_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["optimize", str(model_path("tflm/hello_world_int8.tflite")),
               "--plan-budget", "-1"])
    assert rc == 64  # a usage error
    err = capsys.readouterr().err
    assert "--plan-budget must not be negative" in err and "Traceback" not in err


def test_default_plan_never_above_the_classic_one_when_searches_finish() -> None:
    """conv_ae_b: in-place operators and tiling do not get its arena below the live peak,
    and a TRANSPOSE_CONV scratch at the peak made the default plan 480 B larger than the
    classic one (whose scratch-free variant avoids it). The classic plan is kept, and
    the report says why."""
    g = load_model(model_path("families/conv_ae_b.tflite"))
    classic = plan_model(g, PlanOptions(inplace_ops="off", tiling="off")).plan
    default = plan_model(g, PlanOptions(inplace_ops="auto", tiling="auto")).plan
    assert default.arena_bytes <= classic.arena_bytes
    assert default.planning_time_budget.get("fallback") == "classic"
    assert not default.planning_time_budget.get("exhausted")
    assert "classic plan (--inplace-ops off --tiling off) is smaller" in budget_note(default)


def test_fallback_reports_the_planning_time_of_both_plans(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """conv_ae_b plans by default, then classic, and keeps the classic plan: its
    ``planning_seconds`` is the time of both plans, not of the classic one alone. A
    clock that advances one second per reading: the default plan's own readings and the
    classic plan's lie between plan_model's first and last (6 readings: 5 s), where the
    classic plan alone spans 1 s."""
    import nnopt.planner as planner

    g = load_model(model_path("families/conv_ae_b.tflite"))
    ticks = iter(range(1000))
    monkeypatch.setattr(planner.time, "perf_counter", lambda: float(next(ticks)))
    default = plan_model(g, PlanOptions(inplace_ops="auto", tiling="auto")).plan
    assert default.planning_time_budget.get("fallback") == "classic"
    assert default.planning_seconds == 5.0
