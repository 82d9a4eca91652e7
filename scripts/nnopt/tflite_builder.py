"""Build valid .tflite flatbuffers in memory: `nnopt convert` and the tests' models.

The models load with both :func:`nnopt.frontend.tflite.load_model_bytes` and the
tflite-micro interpreter (``runtime.Interpreter.from_bytes``). Everything is written with
the ``tflite`` package's generated builder functions and a ``flatbuffers.Builder``.

Two levels:

- :class:`ModelBuilder`: describe tensors (shape, dtype, quantisation incl. per-channel
  with axis, optional constant data) and ops (builtin name + options as an
  ``nnopt.ir`` options dataclass or a dict of flatbuffer fields; a custom op by its custom
  code and option bytes with :meth:`ModelBuilder.custom_op`), then :meth:`ModelBuilder.build`.

  >>> b = ModelBuilder()
  >>> x = b.tensor((1, 4), "int8", scale=0.5, zero_point=-3)
  >>> y = b.tensor((1, 4), "int8", scale=0.5, zero_point=-3)
  >>> _ = b.op("RELU", [x], [y])
  >>> model = b.build(inputs=[x], outputs=[y])

- One-call helpers for the common single-op cases with deterministic random weights
  from a seed: :func:`conv2d_model`, :func:`depthwise_conv2d_model`,
  :func:`fully_connected_model`, :func:`pool2d_model`, :func:`binary_model`,
  :func:`unary_model`. Each returns the model bytes; tensor indices are documented per
  helper (inputs first, output last) so tests can look up intermediates.

- :func:`combine_models` puts many such models side by side in one, so that one
  generated-C build covers many cases.

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

from nnopt.ir import ConvOptions, FullyConnectedOptions, NoOptions, PoolOptions
from nnopt.ops import DEFINITIONS

__all__ = [
    "CombinedModel",
    "ModelBuilder",
    "binary_model",
    "combine_models",
    "conv2d_model",
    "depthwise_conv2d_model",
    "fully_connected_model",
    "pool2d_model",
    "random_int8",
    "unary_model",
]

# ----- type tables -----

_TENSOR_TYPE: dict[str, int] = {
    "float32": tflite.TensorType.FLOAT32,
    "int32": tflite.TensorType.INT32,
    "uint8": tflite.TensorType.UINT8,
    "int64": tflite.TensorType.INT64,
    "bool": tflite.TensorType.BOOL,
    "int16": tflite.TensorType.INT16,
    "int8": tflite.TensorType.INT8,
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
               data: np.ndarray | None = None, variable: bool = False) -> int:
        """Add a tensor; returns its index. ``data`` makes it a constant; ``variable``
        marks it ``is_variable`` (state an op such as SVDF updates in place, kept across
        invocations; no buffer data, as TFLM's converter writes it).

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
            if tuple(arr.shape) != shp and arr.size != math.prod(shp):
                raise ValueError(f"data of shape {arr.shape} for a tensor of shape {shp}")
            raw = np.ascontiguousarray(arr, dtype=np.dtype(dt).newbyteorder("<")).tobytes()
        index = len(self._tensors)
        self._tensors.append(_TensorSpec(shp, dt, name or f"t{index}", scales, zps, axis, raw,
                                         variable))
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
        name = b.CreateString(spec.name)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
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


# ----- several test models in one -----

@dataclass(frozen=True)
class CombinedModel:
    """Several models side by side in one subgraph (see :func:`combine_models`)."""

    data: bytes
    offsets: tuple[int, ...]  # tensor index of model k's tensor i is offsets[k] + i

    def tensor(self, model: int, index: int) -> int:
        return self.offsets[model] + index


def combine_models(models: Sequence[bytes]) -> CombinedModel:
    """Put independent models side by side in one model (inputs and outputs concatenated).

    One compiled program then covers many single-op cases (a generated-C build per case
    is slow). The models are read back with nnopt's frontend, so only what the IR holds
    survives: tensors in full, and op options as the IR's typed options (enough for
    conv, depthwise, fully connected, pooling and the element-wise ops; options the IR
    drops, such as RESHAPE's ``new_shape``, are lost).
    """
    from nnopt.frontend.tflite import load_model_bytes

    b = ModelBuilder("combined test models")
    offsets: list[int] = []
    inputs: list[int] = []
    outputs: list[int] = []
    for k, data in enumerate(models):
        g = load_model_bytes(data)
        base = len(b._tensors)
        offsets.append(base)
        for t in g.tensors:
            q: dict[str, Any] = {}
            if t.quant is not None:
                q = {"scale": t.quant.scale, "zero_point": t.quant.zero_point,
                     "axis": t.quant.axis}
            b.tensor(t.shape, t.dtype.name.lower(), name=f"m{k}/{t.name}",
                     data=t.array() if t.is_constant else None, variable=t.is_state, **q)
        for op in g.ops:
            b.op(op.opcode, [i + base if i >= 0 else -1 for i in op.inputs],
                 [o + base for o in op.outputs], op.options)
        inputs += [i + base for i in g.inputs]
        outputs += [o + base for o in g.outputs]
    return CombinedModel(b.build(inputs, outputs), tuple(offsets))


# ----- random data -----

def random_int8(rng: np.random.Generator, shape: Sequence[int], lo: int = -128,
                hi: int = 127) -> np.ndarray:
    """Uniform int8 in [lo, hi]."""
    return rng.integers(lo, hi, size=tuple(shape), endpoint=True, dtype=np.int64).astype(np.int8)


def _auto_output_scale(in_scale: float, w_scales: np.ndarray, fan_in: int) -> float:
    # Typical |acc| for uniform int8 operands is ~ sqrt(fan_in) * 74 * 73; map 3 sigma
    # of the mean channel onto the int8 range so that outputs spread without all
    # saturating.
    sigma = math.sqrt(fan_in) * 74.0 * 73.0 * in_scale * float(np.mean(w_scales))
    return max(3.0 * sigma / 127.0, 1e-9)


Quant = tuple[float, int]


def _act_name(activation: str | None) -> str:
    return activation or "NONE"


def conv2d_model(input_shape: Sequence[int], filters: int, kernel: Sequence[int], *,
                 strides: Sequence[int] = (1, 1), dilation: Sequence[int] = (1, 1),
                 padding: str = "SAME", activation: str = "NONE", dtype: str = "int8",
                 per_channel: bool = True, bias: bool = True, seed: int = 0,
                 input_quant: Quant = (0.05, 0), output_quant: Quant | None = None,
                 weight_scales: Sequence[float] | None = None,
                 weights: np.ndarray | None = None, bias_values: np.ndarray | None = None,
                 max_pool: PoolOptions | None = None, depthwise: bool = False,
                 depth_multiplier: int = 1) -> bytes:
    """A CONV_2D (or DEPTHWISE_CONV_2D) model, optionally followed by MAX_POOL_2D.

    Tensors: 0 input ``[N,H,W,C]``, 1 filter (``[O,KH,KW,C]``; depthwise
    ``[1,KH,KW,C*M]``), 2 bias (if ``bias``), then the conv output, then (with
    ``max_pool``) the pooled output; the last one is the graph output.

    Without ``bias``, CONV_2D gets the optional input as -1; DEPTHWISE_CONV_2D gets
    only two inputs, because TFLM's depthwise Prepare crashes on a -1 bias (it
    releases the absent bias tensor when the op has three inputs).

    int8: per-channel (axis 0; depthwise axis 3) or per-tensor symmetric int8 weights
    with random scales in [0.002, 0.02] unless ``weight_scales``; int32 bias with scale
    input_scale * weight_scale; the output scale defaults to an estimate that spreads
    the outputs over the int8 range. float32: weights ~ N(0, 1/fan_in).
    """
    rng = np.random.default_rng(seed)
    n, h, w, c = (int(d) for d in input_shape)
    kh, kw = (int(k) for k in kernel)
    sh, sw = (int(s) for s in strides)
    dh, dw = (int(d) for d in dilation)
    out_c = c * depth_multiplier if depthwise else int(filters)
    w_shape = (1, kh, kw, out_c) if depthwise else (out_c, kh, kw, c)
    w_axis = 3 if depthwise else 0
    fan_in = kh * kw * (1 if depthwise else c)
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
    else:
        oh = (h - (kh - 1) * dh - 1) // sh + 1
        ow = (w - (kw - 1) * dw - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"kernel {kh}x{kw} (dilation {dh}x{dw}) larger than input {h}x{w}")

    b = ModelBuilder("conv2d_model")
    opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    opts = ConvOptions(padding, sh, sw, dh, dw, _act_name(activation), depth_multiplier)
    if dtype == "float32":
        x = b.tensor((n, h, w, c), "float32", name="input")
        wt = weights if weights is not None else (
            rng.standard_normal(w_shape) / math.sqrt(fan_in)).astype(np.float32)
        wi = b.const(np.asarray(wt, dtype=np.float32).reshape(w_shape), name="filter")
        ins = [x, wi]
        if bias:
            bv = bias_values if bias_values is not None else (
                rng.standard_normal(out_c) * 0.1).astype(np.float32)
            ins.append(b.const(np.asarray(bv, dtype=np.float32), name="bias"))
        elif not depthwise:  # see the docstring
            ins.append(-1)
        y = b.tensor((n, oh, ow, out_c), "float32", name="conv_out")
        b.op(opcode, ins, [y], opts)
        out = y
        if max_pool is not None:
            out = _append_max_pool(b, y, (n, oh, ow, out_c), "float32", None, max_pool)
        return b.build([x], [out])
    if dtype != "int8":
        raise ValueError(f"conv2d_model builds int8 or float32, not {dtype}")
    in_scale, in_zp = input_quant
    if weight_scales is not None:
        ws = np.asarray(weight_scales, dtype=np.float64)
    elif per_channel:
        ws = rng.uniform(0.002, 0.02, size=out_c)
    else:
        ws = np.array([rng.uniform(0.002, 0.02)])
    if len(ws) not in (1, out_c):
        raise ValueError(f"{len(ws)} weight scales for {out_c} output channels")
    x = b.tensor((n, h, w, c), "int8", name="input", scale=in_scale, zero_point=in_zp)
    wt = weights if weights is not None else random_int8(rng, w_shape, -127, 127)
    wi = b.const(np.asarray(wt, dtype=np.int8).reshape(w_shape), name="filter",
                 scale=ws, zero_point=0, axis=w_axis)
    ins = [x, wi]
    if bias:
        bscale = in_scale * np.broadcast_to(ws, (out_c,)) if len(ws) > 1 else in_scale * ws
        bv = bias_values if bias_values is not None else rng.integers(
            -3000, 3000, size=out_c, endpoint=True)
        ins.append(b.const(np.asarray(bv, dtype=np.int32), name="bias",
                           scale=bscale, zero_point=0, axis=0))
    elif not depthwise:  # see the docstring
        ins.append(-1)
    if output_quant is None:
        output_quant = (_auto_output_scale(in_scale, ws, fan_in),
                        int(rng.integers(-20, 20)))
    y = b.tensor((n, oh, ow, out_c), "int8", name="conv_out", scale=output_quant[0],
                 zero_point=output_quant[1])
    b.op(opcode, ins, [y], opts)
    out = y
    if max_pool is not None:
        out = _append_max_pool(b, y, (n, oh, ow, out_c), "int8", output_quant, max_pool)
    return b.build([x], [out])


def _pool_out(size: int, f: int, s: int, padding: str) -> int:
    return -(-size // s) if padding == "SAME" else (size - f) // s + 1


def _append_max_pool(b: ModelBuilder, src: int, shape: tuple[int, ...], dtype: str,
                     quant: Quant | None, pool: PoolOptions) -> int:
    n, h, w, c = shape
    ph = _pool_out(h, pool.filter_h, pool.stride_h, pool.padding)
    pw = _pool_out(w, pool.filter_w, pool.stride_w, pool.padding)
    q: dict[str, Any] = {} if quant is None else {"scale": quant[0], "zero_point": quant[1]}
    out = b.tensor((n, ph, pw, c), dtype, name="pool_out", **q)
    b.op("MAX_POOL_2D", [src], [out], pool)
    return out


def depthwise_conv2d_model(input_shape: Sequence[int], kernel: Sequence[int], *,
                           depth_multiplier: int = 1, **kwargs: Any) -> bytes:
    """A DEPTHWISE_CONV_2D model; see :func:`conv2d_model` for the other arguments."""
    return conv2d_model(input_shape, 0, kernel, depthwise=True,
                        depth_multiplier=depth_multiplier, **kwargs)


def fully_connected_model(input_shape: Sequence[int], units: int, *,
                          activation: str = "NONE", dtype: str = "int8",
                          keep_num_dims: bool = False, bias: bool = True, seed: int = 0,
                          per_channel: bool = False, input_quant: Quant = (0.05, 0),
                          output_quant: Quant | None = None,
                          weight_scales: Sequence[float] | None = None,
                          weight_zero_point: int = 0, depth: int | None = None,
                          weights: np.ndarray | None = None,
                          bias_values: np.ndarray | None = None) -> bytes:
    """A FULLY_CONNECTED model. Tensors: 0 input, 1 weights ``[units, depth]``, 2 bias
    (if ``bias``; else the optional input is -1), then the output.

    ``depth`` (default: the input's last dimension) is the weights' inner dimension; the
    input is flattened to ``[-1, depth]`` as TFLite does. The output is
    ``[*input[:-1], units]`` with ``keep_num_dims`` else ``[batches, units]``.
    ``weight_zero_point`` makes per-tensor int8 weights asymmetric (TFLM applies it).
    """
    rng = np.random.default_rng(seed)
    in_shape = tuple(int(d) for d in input_shape)
    depth = in_shape[-1] if depth is None else int(depth)
    batches = math.prod(in_shape) // depth
    if batches * depth != math.prod(in_shape):
        raise ValueError(f"input {in_shape} is not a whole number of rows of {depth}")
    if keep_num_dims and depth != in_shape[-1]:
        raise ValueError("keep_num_dims needs depth == the input's last dimension")
    out_shape = (*in_shape[:-1], units) if keep_num_dims else (batches, units)
    b = ModelBuilder("fully_connected_model")
    opts = FullyConnectedOptions(_act_name(activation), keep_num_dims)
    if dtype == "float32":
        x = b.tensor(in_shape, "float32", name="input")
        wt = weights if weights is not None else (
            rng.standard_normal((units, depth)) / math.sqrt(depth)).astype(np.float32)
        ins = [x, b.const(np.asarray(wt, dtype=np.float32), name="weights")]
        if bias:
            bv = bias_values if bias_values is not None else (
                rng.standard_normal(units) * 0.1).astype(np.float32)
            ins.append(b.const(np.asarray(bv, dtype=np.float32), name="bias"))
        else:
            ins.append(-1)
        y = b.tensor(out_shape, "float32", name="output")
        b.op("FULLY_CONNECTED", ins, [y], opts)
        return b.build([x], [y])
    if dtype != "int8":
        raise ValueError(f"fully_connected_model builds int8 or float32, not {dtype}")
    in_scale, in_zp = input_quant
    if weight_scales is not None:
        ws = np.asarray(weight_scales, dtype=np.float64)
    elif per_channel:
        ws = rng.uniform(0.002, 0.02, size=units)
    else:
        ws = np.array([rng.uniform(0.002, 0.02)])
    x = b.tensor(in_shape, "int8", name="input", scale=in_scale, zero_point=in_zp)
    wt = weights if weights is not None else random_int8(rng, (units, depth), -127, 127)
    ins = [x, b.const(np.asarray(wt, dtype=np.int8), name="weights", scale=ws,
                      zero_point=weight_zero_point, axis=0)]
    if bias:
        bv = bias_values if bias_values is not None else rng.integers(
            -3000, 3000, size=units, endpoint=True)
        ins.append(b.const(np.asarray(bv, dtype=np.int32), name="bias",
                           scale=in_scale * ws, zero_point=0, axis=0))
    else:
        ins.append(-1)
    if output_quant is None:
        output_quant = (_auto_output_scale(in_scale, ws, depth), int(rng.integers(-20, 20)))
    y = b.tensor(out_shape, "int8", name="output", scale=output_quant[0],
                 zero_point=output_quant[1])
    b.op("FULLY_CONNECTED", ins, [y], opts)
    return b.build([x], [y])


def pool2d_model(opcode: str, input_shape: Sequence[int], filter_size: Sequence[int],
                 strides: Sequence[int], *, padding: str = "VALID", activation: str = "NONE",
                 dtype: str = "int8", quant: Quant = (0.05, 0)) -> bytes:
    """A MAX_POOL_2D / AVERAGE_POOL_2D model. Tensors: 0 input, 1 output (same quant)."""
    n, h, w, c = (int(d) for d in input_shape)
    fh, fw = (int(f) for f in filter_size)
    sh, sw = (int(s) for s in strides)
    oh, ow = _pool_out(h, fh, sh, padding), _pool_out(w, fw, sw, padding)
    b = ModelBuilder("pool2d_model")
    q: dict[str, Any] = {} if dtype == "float32" else {"scale": quant[0],
                                                         "zero_point": quant[1]}
    x = b.tensor((n, h, w, c), dtype, name="input", **q)
    y = b.tensor((n, oh, ow, c), dtype, name="output", **q)
    b.op(opcode, [x], [y], PoolOptions(padding, sh, sw, fh, fw, _act_name(activation)))
    return b.build([x], [y])


def binary_model(opcode: str, shape_a: Sequence[int], shape_b: Sequence[int], *,
                 dtype: str = "int8", quant_a: Quant = (0.05, 0), quant_b: Quant = (0.05, 0),
                 quant_out: Quant = (0.1, 0), activation: str | None = None,
                 const_b: np.ndarray | None = None, out_shape: Sequence[int] | None = None,
                 out_dtype: str | None = None) -> bytes:
    """An element-wise binary op (ADD, SUB, MUL, MAXIMUM …) with numpy broadcasting.

    Tensors: 0 input a, 1 input b (a constant if ``const_b`` is given, else a graph
    input), 2 output. ``activation`` sets the fused activation of ops that have one.
    Quantisation arguments are ignored for float32.
    """
    ob = out_shape if out_shape is not None else np.broadcast_shapes(
        tuple(shape_a), tuple(shape_b))
    odt = out_dtype or dtype
    b = ModelBuilder("binary_model")

    def q(quant: Quant, dt: str) -> dict[str, Any]:
        return {} if dt in ("float32", "int32", "bool") else {
            "scale": quant[0], "zero_point": quant[1]}

    a = b.tensor(shape_a, dtype, name="a", **q(quant_a, dtype))
    if const_b is not None:
        bi = b.tensor(shape_b, dtype, name="b", data=np.asarray(const_b), **q(quant_b, dtype))
    else:
        bi = b.tensor(shape_b, dtype, name="b", **q(quant_b, dtype))
    y = b.tensor(ob, odt, name="output", **q(quant_out, odt))
    options = None if activation is None else {"fused_activation_function": activation}
    b.op(opcode, [a, bi], [y], options)
    return b.build([a] if const_b is not None else [a, bi], [y])


def unary_model(opcode: str, shape: Sequence[int], *, dtype: str = "int8",
                in_quant: Quant = (0.05, 0), out_quant: Quant | None = None,
                out_shape: Sequence[int] | None = None, out_dtype: str | None = None,
                options: Any = None, extra_inputs: Sequence[np.ndarray] = ()) -> bytes:
    """A one-input op (RELU, LOGISTIC, SOFTMAX, RESHAPE, MEAN, PAD …).

    Tensors: 0 input, then one constant per ``extra_inputs`` array (its numpy dtype,
    e.g. int32 shape/axis/padding operands), then the output. The output has the input's
    shape, dtype and quantisation unless ``out_shape``/``out_dtype``/``out_quant`` say
    otherwise.
    """
    odt = out_dtype or dtype
    oq = out_quant if out_quant is not None else in_quant
    b = ModelBuilder("unary_model")

    def q(quant: Quant, dt: str) -> dict[str, Any]:
        return {} if dt in ("float32", "int32", "bool", "int64") else {
            "scale": quant[0], "zero_point": quant[1]}

    x = b.tensor(shape, dtype, name="input", **q(in_quant, dtype))
    extra = [b.const(np.asarray(arr), name=f"operand{k}") for k, arr in enumerate(extra_inputs)]
    y = b.tensor(out_shape if out_shape is not None else shape, odt, name="output",
                 **q(oq, odt))
    b.op(opcode, [x, *extra], [y], options)
    return b.build([x], [y])
