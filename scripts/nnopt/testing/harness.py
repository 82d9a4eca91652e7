"""Run a model on both sides: the tflite-micro interpreter (oracle) and nnopt.

Both return the outputs and every intermediate tensor, keyed by tensor index, so a
test can find the first op where the two disagree (a saturated softmax at the end of
a network would hide a wrong kernel if only the final output were compared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import tflite

from ..frontend.tflite import load_model_bytes
from ..inputs import random_inputs as random_inputs_for
from ..ir import NUMPY_DTYPE, Graph
from ..planner import PlanOptions, plan_model
from ..runner import run_planned


def run_tflm(model: bytes, inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray],
                                                                 dict[int, np.ndarray]]:
    """Outputs and all tensors from the tflite-micro Python interpreter."""
    from tflite_micro.python.tflite_micro import runtime

    graph = load_model_bytes(model)
    # Preserving every tensor needs room for all of them at once (plus TFLM's own state).
    arena = sum(t.nbytes + 64 for t in graph.tensors if not t.is_constant) + (1 << 20)
    interp = runtime.Interpreter.from_bytes(
        model, arena_size=arena,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    outputs = [np.array(interp.get_output(i)) for i in range(len(graph.outputs))]
    tensors: dict[int, np.ndarray] = {}
    # subgraph 0's own tensors only: an inlined IF's or WHILE's are nnopt's, not TFLM's
    sg0 = tflite.Model.GetRootAsModel(model, 0).Subgraphs(0)
    for t in graph.tensors[:sg0.TensorsLength()]:
        # a resource handle (VAR_HANDLE's output): TFLM's GetTensor crashes on it
        if t.is_constant or sg0.Tensors(t.index).Type() == tflite.TensorType.RESOURCE:
            continue
        try:
            got: Any = interp.GetTensor(t.index, 0)
        except Exception:  # tensors TFLM did not keep
            continue
        data = got.get("tensor_data") if isinstance(got, dict) else got
        if isinstance(data, np.ndarray | np.generic):  # one-element tensors are scalars
            tensors[t.index] = np.array(data).reshape(t.shape)
    return outputs, tensors


def run_litert(model: bytes, inputs: Sequence[np.ndarray], *, invocations: int = 1,
               reference: bool = True) -> list[list[np.ndarray]]:
    """The outputs of each of ``invocations`` runs of the full TFLite runtime
    (``ai-edge-litert``, a test-only oracle for the models TFLM refuses: float16 weights,
    MediaPipe's custom operator) on the same ``inputs``: with ``reference`` its
    reference kernels (``BUILTIN_REF``: no delegate, no optimised kernel), else its
    default (the XNNPACK delegate, the only one of LiteRT's that runs MediaPipe's
    Convolution2DTransposeBias). An input of another shape than stored resizes it
    (a dynamic model run at ``--input-shape``)."""
    from ai_edge_litert import interpreter as litert

    kind = litert.OpResolverType.BUILTIN_REF if reference else litert.OpResolverType.AUTO
    it = litert.Interpreter(model_content=model, experimental_op_resolver_type=kind)
    for d, x in zip(it.get_input_details(), inputs, strict=True):
        if tuple(d["shape"]) != np.shape(x):  # a dynamic input run at another size
            it.resize_tensor_input(d["index"], list(np.shape(x)))
    it.allocate_tensors()
    out: list[list[np.ndarray]] = []
    for _ in range(invocations):
        for d, x in zip(it.get_input_details(), inputs, strict=True):
            it.set_tensor(d["index"], np.asarray(x))
        it.invoke()
        out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
    return out


def _as_array(graph: Graph, t: int, data: bytes) -> np.ndarray:
    tensor = graph.tensors[t]
    return np.frombuffer(data, dtype=NUMPY_DTYPE[tensor.dtype]).reshape(tensor.shape)


def run_nnopt(model: bytes, inputs: Sequence[np.ndarray], *, target: str = "host",
              sanitize: bool = False, options: PlanOptions | None = None,
              board: Any = None, input_values: Mapping[str, tuple[float, ...]] | None = None
              ) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
    """Outputs and every traced tensor from nnopt's generated code (``input_values``: ONNX
    inputs pinned at build time, as --input-value)."""
    graph = load_model_bytes(model, input_values=input_values)
    opts = options or PlanOptions()
    if board is not None and opts.board is None:
        opts = replace(opts, board=board)
    planned = plan_model(graph, opts, source_bytes=model)
    res = run_planned(planned, [np.ascontiguousarray(x).tobytes() for x in inputs],
                      target=target, board=board, trace=True, sanitize=sanitize)  # type: ignore[arg-type]
    g = planned.graph
    outs = [_as_array(g, t, d) for t, d in zip(g.outputs, res.outputs, strict=True)]
    trace = {t: _as_array(g, t, d) for t, d in res.trace.items()}
    return outs, trace


def random_inputs(model: bytes, seed: int = 0) -> list[np.ndarray]:
    """Random inputs of the right shape and dtype for a serialised model."""
    return random_inputs_for(load_model_bytes(model), seed)


def run_tflm_invocations(model: bytes, steps: Sequence[Sequence[np.ndarray]]
                         ) -> list[list[np.ndarray]]:
    """The outputs of each of ``len(steps)`` invocations of one tflite-micro interpreter
    (``steps[k]``: invocation k's inputs), its variable tensors carried from one to the
    next as TFLM carries them."""
    from tflite_micro.python.tflite_micro import runtime

    graph = load_model_bytes(model)
    arena = sum(t.nbytes + 64 for t in graph.tensors if not t.is_constant) + (1 << 20)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    out: list[list[np.ndarray]] = []
    for inputs in steps:
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        interp.invoke()
        out.append([np.array(interp.get_output(i)) for i in range(len(graph.outputs))])
    return out


def run_nnopt_invocations(model: bytes, steps: Sequence[Sequence[np.ndarray]], *,
                          target: str = "host", options: PlanOptions | None = None,
                          board: Any = None, allocator: str = "static",
                          input_values: Mapping[str, tuple[float, ...]] | None = None
                          ) -> list[list[np.ndarray]]:
    """The outputs of each invocation of nnopt's generated code run ``len(steps)`` times
    in one process (the inputs k tensors back to back: :func:`nnopt.runner.run_planned`)."""
    graph = load_model_bytes(model, input_values=input_values)
    opts = options or PlanOptions()
    if board is not None and opts.board is None:
        opts = replace(opts, board=board)
    planned = plan_model(graph, opts, source_bytes=model)
    g = planned.graph
    data = [b"".join(np.ascontiguousarray(step[i]).tobytes() for step in steps)
            for i in range(len(g.inputs))]
    res = run_planned(planned, data, target=target, board=board,  # type: ignore[arg-type]
                      allocator=allocator)
    k = len(steps)
    outs: list[list[np.ndarray]] = [[] for _ in range(k)]
    for t, blob in zip(g.outputs, res.outputs, strict=True):
        n = g.tensors[t].nbytes
        for j in range(k):
            outs[j].append(_as_array(g, t, blob[j * n:(j + 1) * n]))
    return outs
