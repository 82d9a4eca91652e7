"""The tests' TFLite models: :class:`~nnopt.tflite_builder.ModelBuilder` (the library's,
used by `nnopt convert`) and, test-only, one-call helpers for the common single-op cases
with deterministic random weights from a seed (:func:`conv2d_model`,
:func:`depthwise_conv2d_model`, :func:`fully_connected_model`, :func:`pool2d_model`,
:func:`binary_model`, :func:`unary_model`; each returns the model bytes, tensor indices
documented per helper, inputs first, output last) and :func:`combine_models`, which puts
many such models side by side in one so that one generated-C build covers many cases."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nnopt.ir import ConvOptions, FullyConnectedOptions, PoolOptions
from nnopt.tflite_builder import ModelBuilder, SparseLevel, Sparsity

__all__ = [
    "CombinedModel",
    "ModelBuilder",
    "SparseLevel",
    "Sparsity",
    "binary_model",
    "combine_models",
    "conv2d_model",
    "depthwise_conv2d_model",
    "fully_connected_model",
    "pool2d_model",
    "random_int8",
    "unary_model",
]


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


def grouped_float_conv_model(input_shape: Sequence[int], filters: int, filter_depth: int,
                             kernel: Sequence[int] = (3, 3), seed: int = 0) -> bytes:
    """A grouped float32 CONV_2D, SAME, stride 1: input depth C, filter depth
    ``filter_depth`` (C / filter_depth groups of filters / groups filters each), with
    bias; weights and bias ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor(tuple(input_shape), "float32")
    w = b.const(rng.standard_normal((filters, *kernel, filter_depth)).astype(np.float32))
    bias = b.const(rng.standard_normal(filters).astype(np.float32))
    y = b.tensor((*input_shape[:3], filters), "float32")
    b.op("CONV_2D", [x, w, bias], [y], ConvOptions("SAME", 1, 1))
    return b.build([x], [y])


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
