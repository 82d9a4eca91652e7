"""Build valid .tflite flatbuffers in memory: `nnopt convert` and the tests' models.

The models load with both :func:`nnopt.frontend.tflite.load_model_bytes` and the
tflite-micro interpreter (``runtime.Interpreter.from_bytes``). Everything is written with
the ``tflite`` package's generated builder functions and a ``flatbuffers.Builder``.

:class:`ModelBuilder`: describe tensors (shape, dtype, quantisation incl. per-channel
  with axis, optional constant data) and ops (builtin name + options as an
  ``nnopt.ir`` options dataclass or a dict of flatbuffer fields; a custom op by its custom
  code and option bytes with :meth:`ModelBuilder.custom_op`), then :meth:`ModelBuilder.build`.

  >>> b = ModelBuilder()
  >>> x = b.tensor((1, 4), "int8", scale=0.5, zero_point=-3)
  >>> y = b.tensor((1, 4), "int8", scale=0.5, zero_point=-3)
  >>> _ = b.op("RELU", [x], [y])
  >>> model = b.build(inputs=[x], outputs=[y])

The one-call single-op test models (``conv2d_model`` …) and ``combine_models`` are
test helpers: ``tests/support/tflite_builder.py``.

Option dicts use the flatbuffer field names in snake_case (``stride_h``,
``fused_activation_function``, ``filter_height`` …); the IR spellings ``activation``,
``dilation_h``/``dilation_w`` and ``filter_h``/``filter_w`` are accepted too. Enum
fields take their names (``"SAME"``, ``"RELU6"``); sequences become int32 vectors.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import flatbuffers  # type: ignore[import-untyped]
import numpy as np
import tflite

from nnopt.ir import NoOptions
from nnopt.ops import DEFINITIONS

__all__ = [
    "ModelBuilder",
    "SparseLevel",
    "Sparsity",
]

# ----- type tables -----

_TENSOR_TYPE: dict[str, int] = {
    "float32": tflite.TensorType.FLOAT32,
    "float16": tflite.TensorType.FLOAT16,  # weights only (TF's float16 quantisation)
    "int32": tflite.TensorType.INT32,
    "uint8": tflite.TensorType.UINT8,
    "int64": tflite.TensorType.INT64,
    "bool": tflite.TensorType.BOOL,
    "int16": tflite.TensorType.INT16,
    "int8": tflite.TensorType.INT8,
    "float64": tflite.TensorType.FLOAT64,
    "uint32": tflite.TensorType.UINT32,
    # a resource handle (VAR_HANDLE's output: which resource variable), no data
    "resource": tflite.TensorType.RESOURCE,
}

# Arena bytes TFLM needs besides the tensors, per op (generous: node, tensor and
# allocator bookkeeping in the interpreter's arena).
_TFLM_OVERHEAD_BYTES = 8192

# Options tables of the control-flow and variable operators the front end resolves
# (nnopt.frontend.control_flow, nnopt.frontend.variables) and that so have no operator
# definition; every other operator's table is its definition's (OpDef.options).
_FRONTEND_TABLES: dict[str, str] = {
    "VAR_HANDLE": "VarHandleOptions",
    "CALL_ONCE": "CallOnceOptions",
    "IF": "IfOptions",
    "WHILE": "WhileOptions",
}


def options_table(opcode: str) -> str | None:
    """The TFLite options table an op is written with (None: it has none)."""
    d = DEFINITIONS.get(opcode)
    if d is None:
        return _FRONTEND_TABLES.get(opcode)
    return d.options.table if d.options is not None else None


_ALIASES = {
    "activation": "fused_activation_function",
    "dilation_h": "dilation_h_factor",
    "dilation_w": "dilation_w_factor",
    "filter_h": "filter_height",
    "filter_w": "filter_width",
}

_ENUM_FIELDS: dict[str, Mapping[str, int]] = {
    "padding": {"SAME": tflite.Padding.SAME, "VALID": tflite.Padding.VALID},
    "fused_activation_function": {
        k: v for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")
    },
}


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def _options_dict(opcode: str, options: Any) -> dict[str, Any]:
    """Flatbuffer fields (snake_case) of an IR options dataclass or a dict."""
    if options is None or isinstance(options, NoOptions):
        return {}
    if isinstance(options, Mapping):
        return {_ALIASES.get(str(k), str(k)): v for k, v in options.items()}
    d = DEFINITIONS.get(opcode)
    if d is not None and d.options is not None:
        return dict(d.options.write(options))
    raise TypeError(f"unsupported options object {options!r}")


# ----- the builder -----

@dataclass(frozen=True)
class _TensorSpec:
    shape: tuple[int, ...]
    dtype: str
    name: str
    scale: tuple[float, ...] | None
    zero_point: tuple[int, ...] | None
    axis: int
    data: bytes | None
    variable: bool = False
    signature: tuple[int, ...] | None = None  # shape_signature (-1: a dynamic dimension)
    sparsity: Sparsity | None = None  # data holds the non-zero values (TFLite sparsity)


@dataclass(frozen=True)
class SparseLevel:
    """One ``DimensionMetadata`` of a sparse tensor: DENSE of ``dense_size``, or
    SPARSE_CSR with ``segments`` and ``indices``, written as ``index_type`` vectors
    ("int32", "uint16" or "uint8": TFLite's SparseIndexVector)."""

    dense_size: int = 0
    segments: tuple[int, ...] | None = None
    indices: tuple[int, ...] | None = None
    index_type: str = "int32"


@dataclass(frozen=True)
class Sparsity:
    """A tensor's ``SparsityParameters`` (TFLite's sparse weight format)."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    levels: tuple[SparseLevel, ...]


@dataclass(frozen=True)
class _OpSpec:
    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: dict[str, Any]
    intermediates: tuple[int, ...] = ()
    custom_options: bytes | None = None  # a custom op's option bytes (flexbuffer)


def _dtype_name(dtype: Any) -> str:
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype.lower()
    if name not in _TENSOR_TYPE:
        raise ValueError(f"unsupported tensor dtype {dtype!r}; use one of {sorted(_TENSOR_TYPE)}")
    return name


class ModelBuilder:
    """Collects tensors and ops, then serialises them as subgraph 0 of a TFLite model,
    with the builders added by :meth:`add_subgraph` as subgraphs 1, 2, ..."""

    def __init__(self, description: str = "nnopt test model") -> None:
        self.description = description
        self._tensors: list[_TensorSpec] = []
        self._ops: list[_OpSpec] = []
        # subgraphs 1, 2, ...: (builder of its tensors and ops, inputs, outputs, name)
        self._subgraphs: list[tuple[ModelBuilder, tuple[int, ...], tuple[int, ...], str]] = []

    # -- description --

    def tensor(self, shape: Sequence[int], dtype: Any, *, name: str | None = None,
               scale: float | Sequence[float] | np.ndarray | None = None,
               zero_point: int | Sequence[int] | None = None, axis: int = 0,
               data: np.ndarray | None = None, variable: bool = False,
               signature: Sequence[int] | None = None,
               sparsity: Sparsity | None = None) -> int:
        """Add a tensor; returns its index. ``data`` makes it a constant; ``variable``
        marks it ``is_variable`` (state an op such as SVDF updates in place, kept across
        invocations; no buffer data, as TFLM's converter writes it); ``signature`` is
        its ``shape_signature`` (-1 marks a dynamic dimension, as TF's converter writes
        it for a model exported with unknown sizes; ``shape`` is then the stored one);
        ``sparsity`` makes ``data`` the non-zero values of a sparse constant of
        ``shape`` in that format (DENSIFY reads it).

        Quantisation: ``scale`` (one value or one per channel along ``axis``) and
        ``zero_point`` (default 0, broadcast to the number of scales).
        """
        dt = _dtype_name(dtype)
        shp = tuple(int(d) for d in shape)
        scales: tuple[float, ...] | None = None
        zps: tuple[int, ...] | None = None
        if scale is not None:
            scales = tuple(float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64)))
            zp = 0 if zero_point is None else zero_point
            zps = tuple(int(z) for z in np.atleast_1d(np.asarray(zp, dtype=np.int64)))
            if len(zps) == 1 and len(scales) > 1:
                zps = zps * len(scales)
            if len(zps) != len(scales):
                raise ValueError(f"{len(scales)} scales but {len(zps)} zero points")
            if len(scales) > 1 and (not 0 <= axis < len(shp) or shp[axis] != len(scales)):
                raise ValueError(f"{len(scales)} per-channel scales do not match "
                                 f"axis {axis} of shape {shp}")
        elif zero_point is not None:
            raise ValueError("zero_point given without scale")
        raw: bytes | None = None
        if variable and data is not None:
            raise ValueError("a variable tensor takes no data (TFLM sets it at allocation)")
        if data is not None:
            arr = np.asarray(data)
            if sparsity is None and tuple(arr.shape) != shp and arr.size != math.prod(shp):
                raise ValueError(f"data of shape {arr.shape} for a tensor of shape {shp}")
            raw = np.ascontiguousarray(arr, dtype=np.dtype(dt).newbyteorder("<")).tobytes()
        index = len(self._tensors)
        sig = None if signature is None else tuple(int(d) for d in signature)
        if sig is not None and len(sig) != len(shp):
            raise ValueError(f"signature {sig} for a tensor of shape {shp}")
        self._tensors.append(_TensorSpec(shp, dt, name or f"t{index}", scales, zps, axis, raw,
                                         variable, sig, sparsity))
        return index

    def const(self, array: np.ndarray, *, dtype: Any = None, name: str | None = None,
              scale: float | Sequence[float] | np.ndarray | None = None,
              zero_point: int | Sequence[int] | None = None, axis: int = 0) -> int:
        """Add a constant tensor holding ``array`` (dtype from the array unless given)."""
        arr = np.asarray(array)
        return self.tensor(arr.shape, dtype if dtype is not None else arr.dtype, name=name,
                           scale=scale, zero_point=zero_point, axis=axis, data=arr)

    def op(self, opcode: str, inputs: Sequence[int], outputs: Sequence[int],
           options: Any = None, *, intermediates: Sequence[int] = ()) -> int:
        """Add a builtin op; ``-1`` in ``inputs`` marks an absent optional input.
        ``intermediates``: the operator's intermediate tensors (as TFLite's converter
        writes for a quantised LSTM: tensors that only carry quantisation parameters)."""
        if not hasattr(tflite.BuiltinOperator, opcode):
            raise ValueError(f"unknown builtin operator {opcode!r}")
        n = len(self._tensors)
        for t in (*inputs, *outputs, *intermediates):
            if not -1 <= t < n:
                raise ValueError(f"{opcode}: tensor index {t} out of range (have {n})")
        opts = _options_dict(opcode, options)
        if opts and options_table(opcode) is None:
            raise ValueError(f"{opcode}: options given but it has no options table "
                             "(its definition's OpDef.options)")
        self._ops.append(_OpSpec(opcode, tuple(inputs), tuple(outputs), opts,
                                 tuple(intermediates)))
        return len(self._ops) - 1

    def custom_op(self, custom_code: str, inputs: Sequence[int], outputs: Sequence[int],
                  custom_options: bytes = b"") -> int:
        """Add a custom op (operator code CUSTOM with ``custom_code``, e.g.
        ``TFLite_Detection_PostProcess``) and its option bytes (the flexbuffer map TFLM's
        kernel reads); it is serialised as ``CUSTOM(<custom_code>)``."""
        if not custom_code:
            raise ValueError("a custom op needs a custom code")
        n = len(self._tensors)
        for t in (*inputs, *outputs):
            if not -1 <= t < n:
                raise ValueError(f"{custom_code}: tensor index {t} out of range (have {n})")
        self._ops.append(_OpSpec(_custom_opcode(custom_code), tuple(inputs), tuple(outputs),
                                 {}, custom_options=bytes(custom_options)))
        return len(self._ops) - 1

    def add_subgraph(self, sub: ModelBuilder, inputs: Sequence[int], outputs: Sequence[int],
                     name: str = "") -> int:
        """Add ``sub``'s tensors and ops as a further subgraph of this model (CALL_ONCE's
        init subgraph, IF's branches, WHILE's cond and body); returns its index (1 for the
        first: subgraph 0 is this builder's own). ``inputs``/``outputs`` index ``sub``'s
        tensors."""
        if sub is self or sub._subgraphs:
            raise ValueError("a subgraph is a builder of its own, without subgraphs")
        n = len(sub._tensors)
        for t in (*inputs, *outputs):
            if not 0 <= t < n:
                raise ValueError(f"subgraph {name!r}: tensor index {t} out of range (have {n})")
        self._subgraphs.append((sub, tuple(inputs), tuple(outputs),
                                name or f"subgraph{len(self._subgraphs) + 1}"))
        return len(self._subgraphs)

    # -- serialisation --

    def build(self, inputs: Sequence[int], outputs: Sequence[int], *,
              pad_for_interpreter: bool = True) -> bytes:
        """Serialise; ``inputs``/``outputs`` are the graph's input and output tensors.

        The tflite-micro interpreter sizes its arena as 10x the model bytes unless told
        otherwise; a small model with large activations would not fit. So when the
        activations (plus TFLM's bookkeeping) need more than that, an unreferenced
        zero buffer pads the file: the model then runs with the interpreter's defaults.
        """
        for t in inputs:
            if self._tensors[t].data is not None:
                raise ValueError(f"graph input {t} is a constant tensor")
        graphs = [self, *(sub for sub, _, _, _ in self._subgraphs)]
        activation_bytes = sum(
            math.prod(t.shape) * (np.dtype(t.dtype).itemsize if t.dtype != "resource" else 4)
            for g in graphs for t in g._tensors if t.data is None)
        need = 2 * activation_bytes + _TFLM_OVERHEAD_BYTES * (
            1 + sum(len(g._ops) for g in graphs))
        model = self._serialize(inputs, outputs, 0)
        if pad_for_interpreter and 10 * len(model) < need:
            model = self._serialize(inputs, outputs, need // 10 - len(model) + 64)
        return model

    def _serialize(self, inputs: Sequence[int], outputs: Sequence[int], pad: int) -> bytes:
        b = flatbuffers.Builder(1024)
        graphs: list[tuple[ModelBuilder, tuple[int, ...], tuple[int, ...], str]] = [
            (self, tuple(inputs), tuple(outputs), "main"), *self._subgraphs]

        # Buffers: 0 is the empty sentinel; each constant tensor gets its own.
        buffer_of: list[dict[int, int]] = []
        buffer_data: list[bytes | None] = [None]
        for g, _, _, _ in graphs:
            of: dict[int, int] = {}
            for i, spec in enumerate(g._tensors):
                if spec.data is not None:
                    of[i] = len(buffer_data)
                    buffer_data.append(spec.data)
                else:
                    of[i] = 0
            buffer_of.append(of)
        if pad > 0:
            buffer_data.append(bytes(pad))  # unreferenced: only makes the file larger
        buffer_offsets = []
        for raw in buffer_data:
            data_off = None
            if raw is not None and len(raw) > 0:
                # 16-byte aligned payload, like the TFLite converter writes it.
                b.StartVector(1, len(raw), 16)
                b.head = b.head - len(raw)
                b.Bytes[b.head:b.head + len(raw)] = raw
                b.vectorNumElems = len(raw)
                data_off = b.EndVector()
            tflite.BufferStart(b)
            if data_off is not None:
                tflite.BufferAddData(b, data_off)
            buffer_offsets.append(tflite.BufferEnd(b))

        # Operator codes, in order of first use (over all subgraphs).
        codes: list[str] = list(dict.fromkeys(op.opcode for g, _, _, _ in graphs
                                              for op in g._ops))
        code_offsets = []
        for name in codes:
            custom = _custom_code(name)
            custom_off = b.CreateString(custom) if custom is not None else None
            code = (tflite.BuiltinOperator.CUSTOM if custom is not None
                    else getattr(tflite.BuiltinOperator, name))
            tflite.OperatorCodeStart(b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            tflite.OperatorCodeAddBuiltinCode(b, code)
            if custom_off is not None:
                tflite.OperatorCodeAddCustomCode(b, custom_off)
            tflite.OperatorCodeAddVersion(b, 1)
            code_offsets.append(tflite.OperatorCodeEnd(b))

        subgraphs = [self._build_subgraph(b, g, ins, outs, name, buffer_of[k], codes)
                     for k, (g, ins, outs, name) in enumerate(graphs)]

        m_codes = _offset_vector(b, tflite.ModelStartOperatorCodesVector, code_offsets)
        m_subgraphs = _offset_vector(b, tflite.ModelStartSubgraphsVector, subgraphs)
        m_buffers = _offset_vector(b, tflite.ModelStartBuffersVector, buffer_offsets)
        m_desc = b.CreateString(self.description)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, m_codes)
        tflite.ModelAddSubgraphs(b, m_subgraphs)
        tflite.ModelAddDescription(b, m_desc)
        tflite.ModelAddBuffers(b, m_buffers)
        model = tflite.ModelEnd(b)
        b.Finish(model, file_identifier=b"TFL3")
        return bytes(b.Output())

    @classmethod
    def _build_subgraph(cls, b: flatbuffers.Builder, g: ModelBuilder, inputs: Sequence[int],
                        outputs: Sequence[int], name: str, buffer_of: Mapping[int, int],
                        codes: list[str]) -> int:
        tensor_offsets = [cls._build_tensor(b, spec, buffer_of[i])
                          for i, spec in enumerate(g._tensors)]
        op_offsets = [cls._build_op(b, op, codes.index(op.opcode)) for op in g._ops]
        sg_tensors = _offset_vector(b, tflite.SubGraphStartTensorsVector, tensor_offsets)
        sg_inputs = _int32_vector(b, tflite.SubGraphStartInputsVector, inputs)
        sg_outputs = _int32_vector(b, tflite.SubGraphStartOutputsVector, outputs)
        sg_ops = _offset_vector(b, tflite.SubGraphStartOperatorsVector, op_offsets)
        sg_name = b.CreateString(name)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, sg_tensors)
        tflite.SubGraphAddInputs(b, sg_inputs)
        tflite.SubGraphAddOutputs(b, sg_outputs)
        tflite.SubGraphAddOperators(b, sg_ops)
        tflite.SubGraphAddName(b, sg_name)
        return int(tflite.SubGraphEnd(b))

    @staticmethod
    def _build_tensor(b: flatbuffers.Builder, spec: _TensorSpec, buffer: int) -> int:
        quant = None
        if spec.scale is not None:
            assert spec.zero_point is not None
            scale = b.CreateNumpyVector(np.asarray(spec.scale, dtype="<f4"))
            zp = b.CreateNumpyVector(np.asarray(spec.zero_point, dtype="<i8"))
            tflite.QuantizationParametersStart(b)
            tflite.QuantizationParametersAddScale(b, scale)
            tflite.QuantizationParametersAddZeroPoint(b, zp)
            tflite.QuantizationParametersAddQuantizedDimension(b, spec.axis)
            quant = tflite.QuantizationParametersEnd(b)
        shape = _int32_vector(b, tflite.TensorStartShapeVector, spec.shape)
        sig = (None if spec.signature is None else
               _int32_vector(b, tflite.TensorStartShapeSignatureVector, spec.signature))
        sparsity = None if spec.sparsity is None else _build_sparsity(b, spec.sparsity)
        name = b.CreateString(spec.name)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        if sig is not None:
            tflite.TensorAddShapeSignature(b, sig)
        if sparsity is not None:
            tflite.TensorAddSparsity(b, sparsity)
        tflite.TensorAddType(b, _TENSOR_TYPE[spec.dtype])
        tflite.TensorAddBuffer(b, buffer)
        tflite.TensorAddName(b, name)
        if spec.variable:
            tflite.TensorAddIsVariable(b, True)
        if quant is not None:
            tflite.TensorAddQuantization(b, quant)
        return int(tflite.TensorEnd(b))

    @staticmethod
    def _build_op(b: flatbuffers.Builder, op: _OpSpec, code_index: int) -> int:
        table = options_table(op.opcode)
        opts_off = None
        if table is not None:
            opts_off = _build_options(b, table, op.opcode, op.options)
        ins = _int32_vector(b, tflite.OperatorStartInputsVector, op.inputs)
        outs = _int32_vector(b, tflite.OperatorStartOutputsVector, op.outputs)
        mids = (_int32_vector(b, tflite.OperatorStartIntermediatesVector, op.intermediates)
                if op.intermediates else None)
        custom = (b.CreateNumpyVector(np.frombuffer(op.custom_options, dtype=np.uint8))
                  if op.custom_options else None)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, code_index)
        tflite.OperatorAddInputs(b, ins)
        tflite.OperatorAddOutputs(b, outs)
        if mids is not None:
            tflite.OperatorAddIntermediates(b, mids)
        if custom is not None:
            tflite.OperatorAddCustomOptions(b, custom)
            tflite.OperatorAddCustomOptionsFormat(b, tflite.CustomOptionsFormat.FLEXBUFFERS)
        if opts_off is not None:
            assert table is not None
            tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, table))
            tflite.OperatorAddBuiltinOptions(b, opts_off)
        return int(tflite.OperatorEnd(b))


_INDEX_VECTORS = {"int32": ("Int32Vector", 1, "<i4"), "uint16": ("Uint16Vector", 2, "<u2"),
                  "uint8": ("Uint8Vector", 3, "u1")}


def _build_index_vector(b: flatbuffers.Builder, kind: str, values: Sequence[int]
                        ) -> tuple[int, int]:
    """A SparseIndexVector union member: (its type code, its table)."""
    table, code, dt = _INDEX_VECTORS[kind]
    vec = b.CreateNumpyVector(np.asarray(values, dtype=dt))
    getattr(tflite, f"{table}Start")(b)
    getattr(tflite, f"{table}AddValues")(b, vec)
    return code, int(getattr(tflite, f"{table}End")(b))


def _build_sparsity(b: flatbuffers.Builder, sp: Sparsity) -> int:
    metas = []
    for lv in sp.levels:
        seg = ind = None
        if lv.segments is not None and lv.indices is not None:
            seg = _build_index_vector(b, lv.index_type, lv.segments)
            ind = _build_index_vector(b, lv.index_type, lv.indices)
        tflite.DimensionMetadataStart(b)
        tflite.DimensionMetadataAddFormat(b, 1 if seg is not None else 0)
        tflite.DimensionMetadataAddDenseSize(b, lv.dense_size)
        if seg is not None and ind is not None:
            tflite.DimensionMetadataAddArraySegmentsType(b, seg[0])
            tflite.DimensionMetadataAddArraySegments(b, seg[1])
            tflite.DimensionMetadataAddArrayIndicesType(b, ind[0])
            tflite.DimensionMetadataAddArrayIndices(b, ind[1])
        metas.append(tflite.DimensionMetadataEnd(b))
    order = _int32_vector(b, tflite.SparsityParametersStartTraversalOrderVector,
                          sp.traversal_order)
    blocks = _int32_vector(b, tflite.SparsityParametersStartBlockMapVector, sp.block_map)
    dims = _offset_vector(b, tflite.SparsityParametersStartDimMetadataVector, metas)
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, order)
    tflite.SparsityParametersAddBlockMap(b, blocks)
    tflite.SparsityParametersAddDimMetadata(b, dims)
    return int(tflite.SparsityParametersEnd(b))


def _custom_opcode(custom_code: str) -> str:
    return f"CUSTOM({custom_code})"


def _custom_code(opcode: str) -> str | None:
    """The custom code of an opcode written as ``CUSTOM(<code>)``; None for a builtin."""
    if opcode.startswith("CUSTOM(") and opcode.endswith(")"):
        return opcode[len("CUSTOM("):-1]
    return None


def _int32_vector(b: flatbuffers.Builder, start: Any, values: Sequence[int]) -> int:
    start(b, len(values))
    for v in reversed(values):
        b.PrependInt32(int(v))
    return int(b.EndVector())


def _offset_vector(b: flatbuffers.Builder, start: Any, offsets: Sequence[int]) -> int:
    start(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return int(b.EndVector())


def _build_options(b: flatbuffers.Builder, table: str, opcode: str,
                   fields: Mapping[str, Any]) -> int:
    module = importlib.import_module(f"tflite.{table}")
    values: dict[str, Any] = {}
    # Vectors must be written before the table is started.
    for key, value in fields.items():
        if isinstance(value, (tuple, list, np.ndarray)):
            start = getattr(module, f"{table}Start{_camel(key)}Vector", None)
            if start is None:
                raise ValueError(f"{opcode}: {table} has no vector field {key!r}")
            values[key] = _int32_vector(b, start, [int(v) for v in value])
        elif isinstance(value, str) and key not in _ENUM_FIELDS:
            values[key] = b.CreateString(value)  # e.g. VAR_HANDLE's container, shared_name
        elif key in _ENUM_FIELDS and isinstance(value, str):
            try:
                values[key] = _ENUM_FIELDS[key][value]
            except KeyError:
                raise ValueError(f"{opcode}: {key}={value!r}; one of "
                                 f"{sorted(_ENUM_FIELDS[key])}") from None
        else:
            values[key] = value
    getattr(module, f"{table}Start")(b)
    for key, value in values.items():
        add = getattr(module, f"{table}Add{_camel(key)}", None)
        if add is None:
            raise ValueError(f"{opcode}: {table} has no field {key!r}")
        add(b, value)
    return int(getattr(module, f"{table}End")(b))
