"""TFLM's offline memory plan, made by nnopt's passes, carried inside the .tflite.

The format (TFLM's ``tensorflow/lite/micro/docs/memory_management.md``, "Offline planned
tensor allocations", read by ``AllocationInfoBuilder::GetOfflinePlannedOffsets`` in
``tensorflow/lite/micro/micro_allocation_info.cc``): a model metadata entry named
``OfflineMemoryAllocation`` whose buffer holds int32 words ``[version, subgraphs, n,
offset(tensor 0), ..., offset(tensor n-1)]``, the tensors of every subgraph concatenated
in subgraph order (``n`` must equal their total count, else TFLM refuses the model), each
offset a byte offset from the start of TFLM's head (non-persistent) section, or -1
(``kOnlinePlannedBuffer``) for a tensor TFLM plans itself. TFLM's greedy planner
(``memory_planner/greedy_memory_planner.cc``) keeps offline offsets fixed and fits the
online buffers (kernels' scratch requested in Prepare, the tensors left at -1) around them.

TFLM's rules, which the plan follows (``micro_allocation_info.cc``,
``AllocationInfoBuilder::InitializeAllocationInfo`` and ``MarkAllocationLifetimes``):

- a tensor needs a buffer when it has no data in the flatbuffer, is not a variable and has
  a non-zero size; variables are persistent (left at -1, as TFLM then allocates them);
- a subgraph input lives from before the first operator, a subgraph output until after
  the last; every other tensor from its producer to its last reader, inclusive: an
  operator's inputs and outputs are live together, so no operator writes over its input
  (TFLM's kernels, RESHAPE included, get buffers of their own; nnopt's aliases, views,
  in-place writes and max-pool fusion are nnopt-only and not used here);
- subgraphs other than the first (IF / WHILE bodies, CALL_ONCE initialisers) run nested
  inside their operator's lifetime: their tensors are left at -1 and TFLM places them
  online around subgraph 0's fixed buffers, with their own lifetimes.

The order is nnopt's: the same scheduler as for generated C
(:func:`nnopt.passes.schedule.schedule`), on the problem TFLM's lifetimes define, then the
offsets of :func:`nnopt.passes.arena.plan_arena` (verified: no two live buffers overlap).
Operators with side effects outside their tensors (resource variables, control flow,
custom operators, variable tensors) keep their relative order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import ModelError
from ..passes.arena import plan_arena
from ..passes.lifetimes import Buffer
from ..passes.schedule import ScheduleProblem, peak_of, schedule

#: The metadata name TFLM looks for (``kOfflineMemAllocMetadata``, micro_allocation_info.cc).
METADATA_NAME = "OfflineMemoryAllocation"
#: "allocate at runtime" (``kOnlinePlannedBuffer``).
ONLINE = -1
#: TFLM aligns arena buffers to 16 bytes (``MicroArenaBufferAlignment()``,
#: tensorflow/lite/micro/micro_arena_constants.h): offline offsets are multiples of it.
ALIGN = 16

# tflite TensorType -> bytes per element as TFLM counts them (TfLiteTypeSizeOf); the types
# missing (STRING, RESOURCE, VARIANT, packed 4/2-bit) are left to TFLM's online planner.
_ELEMENT_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16,
                  12: 8, 15: 4, 16: 2, 18: 2}
# Builtin operators whose effect is not only on their tensors: kept in file order.
_ORDERED_OPS = frozenset({31, 32, 118, 119, 129, 142, 143, 144})  # CALL, CUSTOM, IF, WHILE,
# CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE


def schema() -> Any:
    """The flatbuffer object API of the .tflite schema (the ``tflite-micro`` package ships
    the generated bindings with ``ModelT``; the ``tflite`` package has readers only)."""
    try:
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated
    except ImportError as e:  # pragma: no cover - tflite-micro is installed with nnopt[dev]
        raise ModelError("writing a .tflite for TFLM needs the tflite-micro package",
                         hint="pip install tflite-micro") from e
    return schema_py_generated


def read_model(data: bytes) -> Any:
    """The model as a mutable ``ModelT`` object tree."""
    try:
        return schema().ModelT.InitFromPackedBuf(bytearray(data), 0)
    except Exception as e:  # a corrupt flatbuffer raises anything from struct to Index
        raise ModelError(f"not a readable .tflite flatbuffer ({type(e).__name__}: {e})",
                         hint="pass a model written by the TFLite converter") from e


@dataclass(frozen=True)
class OfflinePlan:
    """nnopt's plan of a model for TFLM."""

    order: tuple[int, ...]  # subgraph 0's operators, file indices in execution order
    offsets: tuple[int, ...]  # one per tensor of every subgraph, concatenated; -1 online
    arena_bytes: int  # the planned head: end of the last offline buffer
    peak_file: int  # live-sum peak of subgraph 0 in file order (TFLM's lifetimes)
    peak: int  # and in ``order``
    planned_tensors: int  # tensors given an offset
    strategy: str  # the arena strategy that won

    @property
    def reordered(self) -> bool:
        return self.order != tuple(range(len(self.order)))


def tensor_bytes(tensor: Any) -> int | None:
    """The bytes TFLM allocates for a tensor (elements x element size), None for a type
    nnopt leaves to TFLM."""
    size = _ELEMENT_BYTES.get(int(tensor.type))
    if size is None:
        return None
    shape = [] if tensor.shape is None else [int(d) for d in tensor.shape]
    if any(d < 0 for d in shape):
        return None  # dynamic: TFLM sizes it at runtime
    return size * int(np.prod(shape, dtype=np.int64))


def _is_constant(model: Any, tensor: Any) -> bool:
    b = model.buffers[tensor.buffer] if 0 < tensor.buffer < len(model.buffers) else None
    return b is not None and ((b.data is not None and len(b.data) > 0) or (b.offset or 0) > 1)


def _problem(model: Any) -> tuple[ScheduleProblem, dict[int, int]]:
    """Subgraph 0 as the scheduler sees it under TFLM's rules, and the tensors to plan
    (tensor index -> bytes). Tensors TFLM plans itself stay in the problem at size 0 (they
    still order their producer before their readers)."""
    sg = model.subgraphs[0]
    sized: dict[int, int] = {}
    live: set[int] = set()  # non-constant tensors: dependencies
    for i, t in enumerate(sg.tensors):
        if _is_constant(model, t):
            continue
        live.add(i)
        n = tensor_bytes(t)
        if not t.isVariable and n:
            sized[i] = n
    codes = model.operatorCodes
    op_in: list[tuple[int, ...]] = []
    op_out: list[tuple[int, ...]] = []
    ordered: list[int] = []
    for k, op in enumerate(sg.operators or []):
        ins = [int(t) for t in (op.inputs if op.inputs is not None else []) if t >= 0]
        outs = [int(t) for t in (op.outputs if op.outputs is not None else []) if t >= 0]
        code = codes[op.opcodeIndex]
        builtin = max(int(code.builtinCode), int(code.deprecatedBuiltinCode))
        touches_state = any(sg.tensors[t].isVariable for t in ins + outs)
        if builtin in _ORDERED_OPS or touches_state or (op.intermediates is not None
                                                        and len(op.intermediates)):
            ordered.append(k)
        op_in.append(tuple(dict.fromkeys(t for t in ins if t in live)))
        op_out.append(tuple(dict.fromkeys(t for t in outs if t in live)))
    sizes = {t: sized.get(t, 0) for t in live}
    token = len(sg.tensors)
    for a, b in pairwise(ordered):  # zero-byte order tokens
        op_out[a] = (*op_out[a], token)
        op_in[b] = (*op_in[b], token)
        sizes[token] = 0
        token += 1
    inputs = [int(t) for t in (sg.inputs if sg.inputs is not None else []) if t in live]
    outputs = [int(t) for t in (sg.outputs if sg.outputs is not None else []) if t in live]
    problem = ScheduleProblem(n_ops=len(op_in), op_inputs=tuple(op_in),
                              op_outputs=tuple(op_out), sizes=sizes,
                              graph_inputs=frozenset(inputs), graph_outputs=frozenset(outputs))
    return problem, sized


def _buffers(problem: ScheduleProblem, sized: dict[int, int],
             order: Sequence[int]) -> list[Buffer]:
    """Buffers with TFLM's lifetimes in the positions of ``order``."""
    n = len(order)
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def touch(t: int, i: int) -> None:
        if t in sized:
            first[t] = min(first.get(t, i), i)
            last[t] = max(last.get(t, i), i)

    for t in problem.graph_inputs:
        touch(t, 0)
    for i, k in enumerate(order):
        for t in (*problem.op_inputs[k], *problem.op_outputs[k]):
            touch(t, i)
    for t in problem.graph_outputs:
        touch(t, max(n - 1, 0))
    for k in range(problem.n_ops):  # read but never written: present from the start
        for t in problem.op_inputs[k]:
            if t in first and not any(t in problem.op_outputs[j] for j in range(problem.n_ops)):
                first[t] = 0
    return [Buffer(f"t{t}", t, sized[t], first[t], last[t]) for t in sorted(first)]


def plan_offline(model: Any, *, reorder: bool = True, time_budget_s: float = 10.0
                 ) -> OfflinePlan:
    """nnopt's order (``reorder``; else the file's) and arena offsets for ``model``
    (a ``ModelT``) under TFLM's rules."""
    if not model.subgraphs:
        raise ModelError("the model has no subgraph", hint="pass a complete .tflite model")
    problem, sized = _problem(model)
    file_order = tuple(range(problem.n_ops))
    order = file_order
    if reorder and problem.n_ops > 1:
        order = tuple(schedule(problem, strategy="optimal", time_budget_s=time_budget_s).order)
    buffers = _buffers(problem, sized, order)
    arena = plan_arena(buffers, align=ALIGN)
    offsets: list[int] = []
    for s, sg in enumerate(model.subgraphs):
        for i in range(len(sg.tensors or [])):
            off = arena.offsets.get(f"t{i}") if s == 0 else None
            offsets.append(ONLINE if off is None else int(off))
    return OfflinePlan(order=order, offsets=tuple(offsets), arena_bytes=arena.arena_bytes,
                       peak_file=peak_of(problem, file_order), peak=peak_of(problem, order),
                       planned_tensors=len(buffers), strategy=arena.strategy)


def offline_words(model: Any, offsets: Sequence[int]) -> np.ndarray:
    """The metadata buffer's int32 words: version 1 (the version TFLM's docs describe;
    TFLM ignores words 0 and 1), the subgraph count, the offset count, the offsets."""
    return np.array([1, len(model.subgraphs), len(offsets), *offsets], dtype="<i4")


def rewrite(data: bytes, order: Sequence[int] | None, offsets: Sequence[int] | None) -> bytes:
    """``data`` with subgraph 0's operators in ``order`` (None: as they are) and, with
    ``offsets``, the ``OfflineMemoryAllocation`` metadata holding them (an existing one is
    replaced; without ``offsets`` an existing one is dropped, as it would not match the
    new order). Everything else is kept: tensors, buffers, other metadata, signatures,
    subgraphs."""
    import flatbuffers  # type: ignore[import-untyped]

    s = schema()
    model = read_model(data)
    sg = model.subgraphs[0]
    if order is not None:
        ops = list(sg.operators or [])
        if sorted(order) != list(range(len(ops))):
            raise ModelError("the operator order is not a permutation of subgraph 0's ops",
                             hint="plan the same model that is rewritten")
        sg.operators = [ops[k] for k in order]
    kept = [m for m in (model.metadata or []) if _name(m.name) != METADATA_NAME]
    if offsets is not None:
        buf = s.BufferT()
        buf.data = np.frombuffer(offline_words(model, offsets).tobytes(), dtype=np.uint8)
        model.buffers.append(buf)
        meta = s.MetadataT()
        meta.name = METADATA_NAME
        meta.buffer = len(model.buffers) - 1
        kept.append(meta)
    model.metadata = kept or None
    for i, b in enumerate(model.buffers):
        model.buffers[i] = _aligned(b)
    builder = flatbuffers.Builder(max(1024, len(data) + 4096))
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def read_offsets(data: bytes) -> tuple[int, ...] | None:
    """The offline offsets a .tflite carries (None without the metadata)."""
    model = read_model(data)
    for m in model.metadata or []:
        if _name(m.name) == METADATA_NAME:
            words = np.frombuffer(bytes(model.buffers[m.buffer].data), dtype="<i4")
            return tuple(int(w) for w in words[3:3 + int(words[2])])
    return None


def _name(name: Any) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


@cache
def _aligned_buffer_class() -> Any:
    """``BufferT`` whose data is packed 16-byte aligned, as the TFLite converter writes
    them (the schema's ``force_align: 16`` on ``Buffer.data``, which the generated Python
    ``Pack`` does not apply): ``Builder.Prep`` pads so that the data starts aligned."""

    class Aligned(schema().BufferT):  # type: ignore[misc]
        def Pack(self, builder: Any) -> Any:
            if self.data is not None and len(self.data):
                builder.Prep(ALIGN, len(self.data))
            return super().Pack(builder)

    return Aligned


def _aligned(buffer: Any) -> Any:
    out = _aligned_buffer_class()()
    out.data, out.offset, out.size = buffer.data, buffer.offset, buffer.size
    return out
