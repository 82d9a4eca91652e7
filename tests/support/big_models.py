"""Test models at out-of-core scale (issue 39), built with nnopt's tflite builder from
random weights and a fixed seed: chains of CONV_2D (optionally with pooling and
residual ADDs), int8 (per-channel, TFLM's quantisation) or float32. Never committed:
tests and the out-of-core benchmark build them on the fly."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nnopt.ir import ConvOptions
from nnopt.tflite_builder import ModelBuilder


@dataclass(frozen=True)
class Layer:
    filters: int
    kernel: int = 3
    stride: int = 1
    activation: str = "RELU"
    residual: bool = False  # add the layer's input (same shape) to its output
    branches: int = 1  # parallel convolutions of the input, summed (an inception block)
    skip_from: int | None = None  # add this earlier layer's output (-1: the model input)


def _int8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.integers(-127, 127, size=tuple(shape), endpoint=True).astype(np.int8)


def conv_chain(input_shape: Sequence[int], layers: Sequence[Layer], *, dtype: str = "int8",
               seed: int = 0, name: str = "conv_chain") -> bytes:
    """A model: input [1,H,W,C], then one CONV_2D per layer (SAME padding), each
    optionally adding its input back (residual, int8 ADD or float ADD)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(name)
    n, h, w, c = (int(d) for d in input_shape)
    scale, zp = 0.05, 0
    if dtype == "int8":
        x = b.tensor((n, h, w, c), "int8", name="input", scale=scale, zero_point=zp)
    elif dtype == "float32":
        x = b.tensor((n, h, w, c), "float32", name="input")
    else:
        raise ValueError(f"conv_chain builds int8 or float32, not {dtype}")
    inp = cur = x
    made: dict[int, tuple[int, tuple[int, int, int], float]] = {-1: (x, (h, w, c), scale)}
    for i, ly in enumerate(layers):
        k, s = ly.kernel, ly.stride
        oh, ow, oc = -(-h // s), -(-w // s), ly.filters
        k * k * c
        opts = ConvOptions("SAME", s, s, 1, 1, ly.activation, 1)
        outs = []
        for j in range(ly.branches):
            y, out_scale, out_zp = _conv(b, rng, cur, (n, oh, ow, oc), c, k, opts, dtype,
                                         scale, f"{i}_{j}" if ly.branches > 1 else f"{i}")
            outs.append(y)
        y = outs[0]
        for j, other in enumerate(outs[1:]):
            y, out_scale, out_zp = _add(b, y, other, (n, oh, ow, oc), dtype, out_scale,
                                        out_scale, f"sum{i}_{j}")
        if ly.residual and (oh, ow, oc) == (h, w, c):
            y, out_scale, out_zp = _add(b, y, cur, (n, oh, ow, oc), dtype, out_scale,
                                        scale, f"add{i}")
        if ly.skip_from is not None:
            src, shp, s_scale = made[ly.skip_from]
            if shp != (oh, ow, oc):
                raise ValueError(f"layer {i}: skip from {ly.skip_from} has shape {shp}")
            y, out_scale, out_zp = _add(b, y, src, (n, oh, ow, oc), dtype, out_scale,
                                        s_scale, f"skip{i}")
        made[i] = (y, (oh, ow, oc), out_scale)
        cur, h, w, c = y, oh, ow, oc
        if dtype == "int8":
            scale, zp = out_scale, out_zp
    return b.build([inp], [cur])


def _conv(b: ModelBuilder, rng: np.random.Generator, x: int, shape: tuple[int, ...], c: int,
          k: int, opts: ConvOptions, dtype: str, scale: float, tag: str
          ) -> tuple[int, float, int]:
    oc = shape[3]
    fan_in = k * k * c
    if dtype == "float32":
        wt = (rng.standard_normal((oc, k, k, c)) * math.sqrt(2.0 / fan_in)).astype(np.float32)
        wi = b.const(wt, name=f"w{tag}")
        bi = b.const((rng.standard_normal(oc) * 0.05).astype(np.float32), name=f"b{tag}")
        y = b.tensor(shape, "float32", name=f"conv{tag}")
        b.op("CONV_2D", [x, wi, bi], [y], opts)
        return y, 0.0, 0
    # He-like real weights (rms sqrt(2 / fan_in)) so that scales stay bounded over deep
    # nets: an int8 weight has rms ~73
    ws = math.sqrt(2.0 / fan_in) / 73.0 * rng.uniform(0.5, 1.5, size=oc)
    wi = b.const(_int8(rng, (oc, k, k, c)), name=f"w{tag}", scale=ws, zero_point=0, axis=0)
    bi = b.const(rng.integers(-3000, 3000, size=oc, endpoint=True).astype(np.int32),
                 name=f"b{tag}", scale=scale * ws, zero_point=0, axis=0)
    # real-valued spread: the input's rms (scale * 74 for values spread over int8)
    # times sqrt(fan_in) weights of rms mean(ws) * 73; 3 sigma onto the int8 range
    # (ReLU: onto [0, 3 sigma] with zero point -128)
    sigma = math.sqrt(fan_in) * 74.0 * 73.0 * scale * float(np.mean(ws))
    relu = opts.activation == "RELU"
    out_scale = max(3.0 * sigma / (255.0 if relu else 127.0), 1e-6)
    out_zp = -128 if relu else 0
    y = b.tensor(shape, "int8", name=f"conv{tag}", scale=out_scale, zero_point=out_zp)
    b.op("CONV_2D", [x, wi, bi], [y], opts)
    return y, out_scale, out_zp


def _add(b: ModelBuilder, x: int, y: int, shape: tuple[int, ...], dtype: str, sx: float,
         sy: float, tag: str) -> tuple[int, float, int]:
    if dtype == "float32":
        z = b.tensor(shape, "float32", name=tag)
        b.op("ADD", [x, y], [z], None)
        return z, 0.0, 0
    s = math.hypot(sx, sy)  # the sum's spread: independent terms add in quadrature
    z = b.tensor(shape, "int8", name=tag, scale=s, zero_point=0)
    b.op("ADD", [x, y], [z], None)
    return z, s, 0
