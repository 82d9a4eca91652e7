"""TFLite flatbuffer -> :class:`nnopt.ir.Graph`, with the ``tflite`` package.

Subgraph 0 is the model; resource variables and CALL_ONCE's init subgraphs become
persistent state (:mod:`.variables`). Every user mistake (not a file, not TFLite, truncated or
corrupt, an unknown operator or dtype, control flow) raises a typed
:class:`~nnopt.errors.NnoptError` naming the problem, never a raw exception. Each
operator's options are read by its definition (:mod:`nnopt.ops`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from ..cdefs import DType
from ..errors import ModelError, NnoptError, UnsupportedError
from ..ir import NUMPY_DTYPE, Expansion, Graph, NoOptions, Op, Quant, Tensor
from ..ops import DEFINITIONS, supported_list
from ..paths import shipped_models_dir
from . import control_flow, densify, float16, mediapipe, shapes, validate, variables
from .onnx import load_onnx_bytes, looks_like_onnx

_TENSOR_TYPES: dict[int, DType] = {
    0: DType.FLOAT32, 2: DType.INT32, 3: DType.UINT8, 4: DType.INT64, 6: DType.BOOL,
    7: DType.INT16, 9: DType.INT8, 10: DType.FLOAT64, 15: DType.UINT32,
}
_TENSOR_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}


def model_name(path: Path) -> str:
    """A C identifier from the file name: ``vww_96_int8.tflite`` -> ``vww_96_int8``."""
    return c_identifier(path.stem)


def c_identifier(name: str) -> str:
    """``name`` as a C identifier (the generated symbols' prefix): ``v0.1`` -> ``v0_1``."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return name if name and not name[0].isdigit() else f"m_{name}"


#: ``unsupported=`` of :func:`load_model`: refuse operators nnopt has no definition for
#: (the commands' contract), or import them as generic ops for planning studies.
UNSUPPORTED_MODES = ("refuse", "plan")


def load_model(path: str | Path,
               input_shapes: Mapping[str, tuple[int, ...]] | None = None,
               unsupported: str = "refuse",
               input_values: Mapping[str, tuple[float, ...]] | None = None) -> Graph:
    """Read a model file (.tflite, or ONNX recognised by content) into a verified Graph.

    ``input_shapes`` fixes dynamic input dimensions (``--input-shape``): ONNX's, and a
    .tflite model's shape signature (the shapes then propagate: :mod:`.shapes`).
    ``input_values`` pins ONNX inputs to a value (``--input-value``).

    ``unsupported="plan"`` (library use only, for planning studies such as
    benchmarks/bench_planner.py; TFLite files): an operator without an nnopt definition
    is imported as a generic op, its inputs and outputs with the shapes and dtypes of the
    file and no traits (not an alias, not in place, not element-wise, no options), so the
    planner can plan the graph with ``check_kernels=False``; nothing can run it."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError as err:
        raise ModelError(f"model file not found: {p}", hint=_missing_hint(p)) from err
    except OSError as err:
        raise ModelError(f"cannot read model file {p}: {err.strerror}") from err
    return load_model_bytes(data, model_name(p), source=str(p), input_shapes=input_shapes,
                            unsupported=unsupported, input_values=input_values)


def _missing_hint(p: Path) -> str:
    """Where to look instead: a shipped model of that name, else the shipped folder."""
    shipped = shipped_models_dir()
    if (shipped / p.name).is_file():
        return f"a model of that name ships with nnopt: {shipped / p.name}"
    where = "" if p.is_absolute() else f" (relative paths start at {Path.cwd()})"
    return f"check the path{where}; models shipped with nnopt are in {shipped}"


def load_model_bytes(data: bytes, name: str = "model", source: str = "<bytes>",
                     input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                     unsupported: str = "refuse",
                     input_values: Mapping[str, tuple[float, ...]] | None = None) -> Graph:
    """:func:`load_model` of the file's bytes."""
    if unsupported not in UNSUPPORTED_MODES:
        raise ModelError(f"unknown unsupported-operator mode {unsupported!r}",
                         hint="use " + " or ".join(UNSUPPORTED_MODES))
    name = c_identifier(name)  # e.g. a file stem with a dot (oww_hey_rhasspy_v0.1)
    if len(data) < 8 or data[4:8] != b"TFL3":
        if looks_like_onnx(data):
            return load_onnx_bytes(data, name, source, input_shapes, input_values)
        raise ModelError(
            f"{source} is neither a TFLite model (no 'TFL3' file identifier) nor an ONNX "
            "model",
            hint="pass a .tflite flatbuffer (e.g. from tf.lite.TFLiteConverter) or an ONNX "
            "file (e.g. from torch.onnx.export)",
        )
    if input_values:
        raise NnoptError("--input-value applies to ONNX models only",
                         hint="a .tflite model's inputs are fed at run time")
    try:
        validate.check_flatbuffer(data, source)
        graph = _parse(data, name, source, generic=unsupported == "plan",
                       input_shapes=input_shapes or {})
    except NnoptError:
        raise
    except Exception as err:  # the flatbuffer reader fails in many ways on corrupt input
        raise ModelError(
            f"{source} is corrupt or truncated ({type(err).__name__}: {err})",
            hint="re-export the model; check that the file was copied completely",
        ) from err
    try:
        graph.verify()
    except NnoptError as err:
        raise ModelError(f"{source} is not a valid model graph: {err.message}") from err
    validate.check_quantization(graph, source)
    return graph


def _empty_constants(tensors: list[Tensor], ops: Sequence[Op], inputs: Sequence[int]) -> None:
    """A tensor of zero elements that no op writes and that is no input is a constant
    (its buffer is empty: the converter writes a RESHAPE to a scalar with the shape
    operand ``[]``, an empty axes list so): its data is the empty byte string."""
    written = {t for op in ops for t in op.outputs} | set(inputs)
    for i, t in enumerate(tensors):
        if (t.data is None and not t.variable and t.shape and t.num_elements == 0
                and i not in written):
            tensors[i] = replace(t, data=b"")


def _opcode_name(model: Any, op: Any) -> str:
    code_obj = model.OperatorCodes(op.OpcodeIndex())
    code = max(code_obj.BuiltinCode(), code_obj.DeprecatedBuiltinCode())
    if code == tflite.BuiltinOperator.CUSTOM:
        custom = code_obj.CustomCode()
        name = custom.decode(errors="replace") if custom else "?"
        d = DEFINITIONS.get(name)
        # a custom op nnopt knows goes by its custom code (TFLM's resolver's name)
        return name if d is not None and d.custom else f"CUSTOM({name})"
    return str(BUILTIN_OPCODE2NAME.get(code, f"BUILTIN_{code}"))


def _parse(data: bytes, name: str, source: str, generic: bool = False,
           input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    model = tflite.Model.GetRootAsModel(data, 0)
    if model.SubgraphsLength() < 1:
        raise ModelError(f"{source} has no subgraph")
    signatures: dict[int, tuple[int, ...]] = {}
    main = _read_subgraph(model, data, source, 0, generic, signatures)
    if input_shapes or signatures:  # the graph at the shapes of this run (frontend.shapes)
        shapes.resolve(main.tensors, main.ops, main.inputs, signatures, input_shapes or {},
                       source)
    if main.unknown:
        listing = "; ".join(f"{name} (op {', '.join(map(str, idx[:5]))}"
                            f"{', …' if len(idx) > 5 else ''})"
                            for name, idx in main.unknown.items())
        raise UnsupportedError(
            f"{source} uses operators nnopt does not support: {listing}",
            hint=f"supported operators: {supported_list()}",
        )
    tensors, ops = main.tensors, main.ops
    expansions = _expansions(main)
    if model.SubgraphsLength() > 1 or main.resources:
        # subgraph k > 0 runs only from an op of subgraph 0: IF is inlined, then
        # CALL_ONCE and the resource variables resolve into state
        def read(k: int) -> variables.Subgraph:
            return _read_subgraph(model, data, source, k, True)

        n = model.SubgraphsLength()
        tensors, ops = variables.resolve(control_flow.inline_control_flow(main, read, n, source),
                                         read, n, source)
    return Graph(name, tuple(tensors), tuple(ops), main.inputs, main.outputs,
                 expansions=expansions)


def _expansions(sub: variables.Subgraph) -> tuple[Expansion, ...]:
    return sub.expansions


def _read_subgraph(model: Any, data: bytes, source: str, index: int, generic: bool,
                   signatures: dict[int, tuple[int, ...]] | None = None
                   ) -> variables.Subgraph:
    """Subgraph ``index`` as read: tensors (a resource handle as a placeholder), ops with
    their options, and the operators without a definition (generic ops with ``generic``,
    else listed in ``unknown``). The shape signatures with a dynamic (-1) dimension go
    into ``signatures`` (subgraph 0: frontend.shapes); other subgraphs refuse them."""
    sg = model.Subgraphs(index)
    where = "" if index == 0 else f"subgraph {index}: "
    tensors: list[Tensor] = []
    resources: set[int] = set()
    widened: list[int] = []  # float16 constants, expanded (frontend.float16)
    half_values: list[int] = []  # float16 without data: DENSIFY outputs (else refused)
    sparse: dict[int, tuple[int, int]] = {}  # densified constants: (file bytes, dense bytes)
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        tname = (t.Name() or b"").decode(errors="replace")
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        if t.Type() == tflite.TensorType.RESOURCE:
            # VAR_HANDLE's output: which variable; frontend.variables replaces it
            resources.add(i)
            tensors.append(Tensor(i, tname, shape, DType.INT32))
            continue
        half = t.Type() == tflite.TensorType.FLOAT16
        if t.Type() not in _TENSOR_TYPES and not half:
            raise UnsupportedError(
                f"{where}tensor {i} ({tname}) has type "
                f"{_TENSOR_TYPE_NAMES.get(t.Type(), t.Type())}",
                hint="supported types: " + ", ".join(d.name for d in _TENSOR_TYPES.values()),
            )
        sig = tuple(int(d) for d in t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() \
            else ()
        if any(d < 0 for d in sig):
            if signatures is not None:
                signatures[i] = sig
            elif any(d < 0 for d in sig[1:]):
                raise UnsupportedError(f"{where}tensor {i} ({tname}) has a dynamic shape",
                                       hint="nnopt fixes dynamic shapes in subgraph 0 "
                                       "only (--input-shape); export the model with fixed "
                                       "shapes")
        q = t.Quantization()
        quant = None
        if q is not None and q.ScaleLength() > 0:
            zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,)
            quant = Quant(tuple(float(s) for s in q.ScaleAsNumpy()), zps, q.QuantizedDimension())
        buf = model.Buffers(t.Buffer()) if t.Buffer() < model.BuffersLength() else None
        const: bytes | None = None
        if buf is not None:
            if buf.DataLength() > 0:
                const = buf.DataAsNumpy().tobytes()
            elif buf.Offset() > 1:
                start, size = int(buf.Offset()), int(buf.Size())
                if start + size > len(data):
                    raise ModelError(f"{source}: buffer of tensor {i} lies beyond end of file")
                const = data[start:start + size]
        variable = bool(t.IsVariable())
        if const is not None and t.Sparsity() is not None:  # frontend.densify
            dt = np.dtype("<f2") if half else np.dtype(NUMPY_DTYPE[_TENSOR_TYPES[t.Type()]])
            sp = densify.read(t.Sparsity())
            dense = densify.densify(np.frombuffer(const, dtype=dt), shape, sp,
                                    f"{source}: {where}tensor {i} ({tname})")
            sparse[i] = (len(const) + sp.index_bytes, dense.nbytes)
            const = dense.tobytes()
        if half:
            if variable:
                raise float16.refuse_activation(where, i, tname)
            if const is None:
                half_values.append(i)
                tensors.append(Tensor(i, tname, shape, DType.FLOAT32))
                continue
            widened.append(i)
            tensors.append(Tensor(i, tname, shape, DType.FLOAT32, None,
                                  float16.widen(const)))
            continue
        if variable:
            # State kept across invocations (SVDF, LSTM). TFLM allocates it in its
            # persistent region and sets it at allocation (ResetVariableTensors: the zero
            # point for int8, else 0), whatever buffer the file gives it.
            const = None
        tensors.append(Tensor(i, tname, shape, _TENSOR_TYPES[t.Type()], quant, const,
                              variable))

    ops: list[Op] = []
    unknown: dict[str, list[int]] = {}
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        opcode = _opcode_name(model, op)
        definition = DEFINITIONS.get(opcode)
        ins = tuple(int(x) for x in op.InputsAsNumpy()) if op.InputsLength() else ()
        outs = tuple(int(x) for x in op.OutputsAsNumpy()) if op.OutputsLength() else ()
        if opcode == f"CUSTOM({mediapipe.CUSTOM_CODE})":  # onto TRANSPOSE_CONV
            raw = op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b""
            ops.append(mediapipe.lower(k, ins, outs, raw, tensors, where, source))
            continue
        if opcode == densify.OPCODE:  # folded below (frontend.densify)
            ops.append(Op(k, opcode, ins, outs, NoOptions()))
            continue
        if definition is None:
            structural = variables.read_structural(opcode, op, k, index, source)
            if structural is not None:  # VAR_HANDLE, CALL_ONCE, IF, WHILE
                ops.append(Op(k, opcode, ins, outs, structural))
            elif generic:  # no definition: a generic op (docstring of load_model)
                ops.append(Op(k, opcode, ins, outs, NoOptions()))
            else:
                unknown.setdefault(opcode, []).append(k)
            continue
        options = definition.read_options(op)
        ops.append(Op(k, opcode, ins, outs, options))
    inputs = tuple(int(x) for x in sg.InputsAsNumpy()) if sg.InputsLength() else ()
    outputs = tuple(int(x) for x in sg.OutputsAsNumpy()) if sg.OutputsLength() else ()
    _empty_constants(tensors, ops, inputs)
    n_ops = len(ops)
    ops, moved = densify.fold(tensors, ops, list(sparse), where, source)
    for t in half_values:  # a float16 DENSIFY output is a (widened) constant now
        if t not in moved:
            raise float16.refuse_activation(where, t, tensors[t].name)
        widened.append(t)
    ops, half = float16.fold_dequantize(tensors, ops, widened, where, source)
    if len(ops) != n_ops:
        ops = [replace(op, index=k) for k, op in enumerate(ops)]
    densified = densify.expansion(moved, {t: b for t, (b, _) in sparse.items()},
                                  {t: d for t, (_, d) in sparse.items()})
    return variables.Subgraph(index, tensors, ops, frozenset(resources), inputs, outputs,
                              unknown, tuple(e for e in (densified, half) if e is not None))
