"""``--emit tflite``: the model TFLM runs in the smallest arena, never a worse one.

Candidates, each measured with the stock interpreter (:mod:`nnopt.tflm.interpreter`):

- ``offline plan``: nnopt's order and nnopt's offsets in ``OfflineMemoryAllocation``;
- ``offline plan, file order``: the file's order with nnopt's offsets;
- ``reordered``: nnopt's order alone, TFLM's own planner placing the tensors (the
  fallback where TFLM's kernel scratch, fitted around fixed offsets, makes an offline
  plan larger than TFLM's greedy planner gets on the new order).

The one with the smallest arena whose outputs (two invocations of seeded random inputs)
are byte-identical with the original's wins; ties go to the earlier in that list. When
every candidate needs more than the original, or none runs bit-exact, nothing is written
and the result says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import NnoptError
from . import interpreter
from .offline import OfflinePlan, plan_offline, read_model, rewrite

OFFLINE = "offline plan"
OFFLINE_FILE_ORDER = "offline plan, file order"
REORDERED = "reordered"
ORIGINAL = "original"


@dataclass(frozen=True)
class TflmEmit:
    """What ``--emit tflite`` measured and wrote."""

    path: Path | None  # None: nothing written (see ``notes``)
    arena_before: int  # TFLM's arena for the original model (host interpreter)
    arena_after: int  # for the written model (== before when nothing was written)
    chosen: str  # OFFLINE, OFFLINE_FILE_ORDER, REORDERED, or ORIGINAL (none written)
    candidates: dict[str, int]  # candidate -> TFLM's arena (bytes); absent: did not run
    planned_head: int  # nnopt's offline plan: bytes of TFLM's head it fixes
    peak_file: int  # live-sum peak under TFLM's lifetimes, file order
    peak: int  # and in nnopt's order
    reordered: bool  # nnopt's order differs from the file's
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"path": None if self.path is None else str(self.path),
                "tflm_arena_bytes_before": self.arena_before,
                "tflm_arena_bytes_after": self.arena_after, "chosen": self.chosen,
                "candidates": dict(self.candidates), "offline_plan_head_bytes":
                self.planned_head, "peak_file_bytes": self.peak_file,
                "peak_bytes": self.peak, "reordered": self.reordered,
                "notes": list(self.notes)}

    def lines(self) -> list[str]:
        """What ``nnopt optimize`` prints."""
        ratio = self.arena_after / self.arena_before if self.arena_before else 1.0
        out = [f"TFLM arena (tflite-micro interpreter, host): {self.arena_before:,} B before, "
               f"{self.arena_after:,} B after ({ratio:.2f}x; {self.chosen})"]
        out += [f"  {n}" for n in self.notes]
        return out


def emit_tflite(data: bytes, name: str, out_dir: Path, *,
                time_budget_s: float = 10.0) -> TflmEmit:
    """Plan ``data`` for TFLM, measure the candidates, write ``out_dir/<name>_nnopt.tflite``
    unless none is at least as good as the original."""
    model = read_model(data)
    plan = plan_offline(model, time_budget_s=time_budget_s)
    built: dict[str, bytes] = {OFFLINE: rewrite(data, plan.order, plan.offsets)}
    if plan.reordered:
        file_plan = plan_offline(model, reorder=False)
        built[OFFLINE_FILE_ORDER] = rewrite(data, None, file_plan.offsets)
        built[REORDERED] = rewrite(data, plan.order, None)
    before = interpreter.min_arena(data)
    steps = interpreter.random_inputs(data)
    expected = interpreter.outputs(data, before, steps)
    if expected is None:
        raise NnoptError("the tflite-micro interpreter loads the model but fails to run it",
                         hint="run it with tflite_micro.runtime.Interpreter to see why")
    notes: list[str] = []
    arenas: dict[str, int] = {}
    for kind, blob in built.items():
        try:
            arena = interpreter.min_arena(blob)
        except Exception as e:  # an NnoptError: TFLM refuses it at any size
            notes.append(f"{kind}: TFLM does not load it ({e})")
            continue
        arenas[kind] = arena
        got = interpreter.outputs(blob, arena, steps)
        if got is None or got != expected:
            notes.append(f"{kind}: outputs differ from the original's: not used")
            del arenas[kind]
    best = min(arenas, key=lambda k: (arenas[k], list(built).index(k)), default=None)
    notes += _explain(plan, arenas, before, best)
    if best is None or arenas[best] > before:
        return _result(None, before, before, ORIGINAL, arenas, plan, notes)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}_nnopt.tflite"
    path.write_bytes(built[best])
    return _result(path, before, arenas[best], best, arenas, plan, notes)


def _explain(plan: OfflinePlan, arenas: dict[str, int], before: int,
             best: str | None) -> list[str]:
    notes: list[str] = []
    off = arenas.get(OFFLINE)
    if off is not None and best is not None and best != OFFLINE and arenas[best] < off:
        notes.append(f"nnopt's offline plan needs {off:,} B in TFLM (its tensors "
                     f"{plan.arena_bytes:,} B, with TFLM's own state and kernel scratch "
                     f"fitted around them): {best} needs less ({arenas[best]:,} B)")
    if best is None:
        notes.append("no candidate ran bit-exact with the original: nothing written")
    elif arenas[best] > before:
        notes.append(f"every candidate needs more than the original ({arenas[best]:,} B > "
                     f"{before:,} B: TFLM's greedy planner already does better on this "
                     "model): nothing written")
    elif arenas[best] == before:
        notes.append("no smaller arena than the original's (its plan is already at "
                     "what TFLM needs): written, no worse")
    if not plan.reordered:
        notes.append("nnopt's order is the file's (no order needs less)")
    return notes


def _result(path: Path | None, before: int, after: int, chosen: str,
            arenas: dict[str, int], plan: OfflinePlan, notes: list[str]) -> TflmEmit:
    return TflmEmit(path=path, arena_before=before, arena_after=after, chosen=chosen,
                    candidates=arenas, planned_head=plan.arena_bytes,
                    peak_file=plan.peak_file, peak=plan.peak, reordered=plan.reordered,
                    notes=tuple(notes))
