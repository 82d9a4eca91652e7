"""Test models at out-of-core scale (issue 39), built with nnopt's tflite builder from
random weights and a fixed seed: chains of CONV_2D (optionally with pooling and
residual ADDs), int8 (per-channel, TFLM's quantisation) or float32. Never committed:
tests, samples/swapnn and the out-of-core benchmark build them on the fly (in the
package, so that a sample never imports tests/)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..ir import (
    ActivationOptions,
    ConvOptions,
    FullyConnectedOptions,
    PoolOptions,
    ReducerOptions,
    ResizeOptions,
    SoftmaxOptions,
    TransposeConvOptions,
)
from ..tflite_builder import ModelBuilder


@dataclass(frozen=True)
class Layer:
    filters: int
    kernel: int = 3
    stride: int = 1
    activation: str = "RELU"
    residual: bool = False  # add the layer's input (same shape) to its output
    branches: int = 1  # parallel convolutions of the input, summed (an inception block)
    skip_from: int | None = None  # add this earlier layer's output (-1: the model input)


def vgg_layers(width: float) -> list[Layer]:
    """VGG16's 13 convolutions (3x3, SAME; each max pool folded into the next
    convolution as stride 2), channels scaled by ``width``."""
    cfg: list[int | None] = [64, 64, None, 128, 128, None, 256, 256, 256, None, 512, 512,
                             512, None, 512, 512, 512]  # None: a max pool
    out: list[Layer] = []
    stride = 1
    for c in cfg:
        if c is None:
            stride = 2
            continue
        out.append(Layer(max(1, int(c * width)), stride=stride))
        stride = 1
    return out


def resnet_layers(width: float) -> list[Layer]:
    """A ResNet-34-like chain of 3x3 basic blocks (a 7x7 stride-2 stem, 16 blocks, no
    projection shortcuts), channels scaled by ``width``: not ResNet-50 (see
    :func:`resnet50`)."""
    out = [Layer(int(64 * width), kernel=7, stride=2)]
    for stage, (c, n) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for i in range(n):
            s = 2 if i == 0 and stage > 0 else 1
            out.append(Layer(int(c * width), stride=s))
            out.append(Layer(int(c * width), skip_from=len(out) - 1))
    return out


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
          k: int, opts: ConvOptions, dtype: str, scale: float, tag: str,
          gain: float | None = None) -> tuple[int, float, int]:
    oc = shape[3]
    fan_in = k * k * c
    if dtype == "float32":
        wt = (rng.standard_normal((oc, k, k, c)) * math.sqrt(2.0 / fan_in)).astype(np.float32)
        wi = b.const(wt, name=f"w{tag}")
        bi = b.const((rng.standard_normal(oc) * 0.05).astype(np.float32), name=f"b{tag}")
        y = b.tensor(shape, "float32", name=f"conv{tag}")
        b.op("CONV_2D", [x, wi, bi], [y], opts)
        return y, 0.0, 0
    # He-like real weights (rms sqrt(2 / fan_in), or gain / sqrt(fan_in)) so that scales
    # stay bounded over deep nets: an int8 weight has rms ~73 (gain 1: the spread kept,
    # as batch normalisation keeps it)
    rms = math.sqrt(2.0 / fan_in) if gain is None else gain / math.sqrt(fan_in)
    ws = rms / 73.0 * rng.uniform(0.5, 1.5, size=oc)
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


#: ResNet-50's stages (He et al. 2016, Table 1): bottleneck width, blocks.
RESNET50_STAGES = ((64, 3), (128, 4), (256, 6), (512, 3))


def resnet50(size: int = 224, *, width: float = 1.0, classes: int = 1000, seed: int = 0,
             name: str = "resnet50_int8") -> bytes:
    """ResNet-50 v1 as Keras builds it (``keras.applications.ResNet50``), int8 with
    per-channel weights, random weights, a fixed seed: a 7x7 stride-2 convolution, a 3x3
    stride-2 max pool, 16 bottleneck blocks (1x1, 3x3, 1x1 convolutions, the first 1x1 of
    a stage's first block strided, a strided 1x1 projection on its shortcut, the sum with
    a fused ReLU), a global average pool (MEAN), a fully connected layer and SOFTMAX.
    Batch normalisation folded into the convolutions, as the converter does. At full
    width 25.5 M parameters (23.5 M in convolutions)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(name)
    scale = 0.05
    x = b.tensor((1, size, size, 3), "int8", name="input", scale=scale, zero_point=0)
    h = w = size

    def conv(inp: int, c_in: int, c_out: int, k: int, s: int, act: str, sc: float,
             tag: str) -> tuple[int, float, int]:
        nonlocal h, w
        oh, ow = -(-h // s), -(-w // s)
        y, out_scale, out_zp = _conv(b, rng, inp, (1, oh, ow, c_out), c_in, k,
                                     ConvOptions("SAME", s, s, 1, 1, act, 1), "int8", sc, tag,
                                     gain=1.0)
        h, w = oh, ow
        return y, out_scale, out_zp

    def ch(c: int) -> int:
        return max(1, int(c * width))

    y, scale, zp = conv(x, 3, ch(64), 7, 2, "RELU", scale, "stem")
    h, w = -(-h // 2), -(-w // 2)
    pooled = b.tensor((1, h, w, ch(64)), "int8", name="pool", scale=scale, zero_point=zp)
    b.op("MAX_POOL_2D", [y], [pooled], PoolOptions("SAME", 2, 2, 3, 3))
    y, c = pooled, ch(64)
    for stage, (f, blocks) in enumerate(RESNET50_STAGES):
        for i in range(blocks):
            tag = f"s{stage}b{i}"
            s = 2 if i == 0 and stage > 0 else 1
            h0, w0 = h, w
            a, sa, _ = conv(y, c, ch(f), 1, s, "RELU", scale, f"{tag}a")
            a, sa, _ = conv(a, ch(f), ch(f), 3, 1, "RELU", sa, f"{tag}b")
            a, sa, _ = conv(a, ch(f), ch(4 * f), 1, 1, "NONE", sa, f"{tag}c")
            if i == 0:  # the projection shortcut
                h, w = h0, w0
                sc_y, s_sc, _ = conv(y, c, ch(4 * f), 1, s, "NONE", scale, f"{tag}p")
            else:
                sc_y, s_sc = y, scale
            # the sum's spread (independent terms add in quadrature) with a fused ReLU:
            # [0, 3 sigma] onto the int8 range with zero point -128
            scale = max(math.hypot(sa, s_sc) * 127.0 / 255.0, 1e-6)
            out = b.tensor((1, h, w, ch(4 * f)), "int8", name=f"{tag}add", scale=scale,
                           zero_point=-128)
            b.op("ADD", [a, sc_y], [out], ActivationOptions("RELU"))
            y, c = out, ch(4 * f)
    axes = b.const(np.array([1, 2], dtype=np.int32), name="axes")
    mean = b.tensor((1, c), "int8", name="avg_pool", scale=scale, zero_point=-128)
    b.op("MEAN", [y, axes], [mean], ReducerOptions(keep_dims=False))
    # logits with a real-valued spread of about 4 (the input's rms about 74 * scale), so
    # that the softmax over the classes is not flat
    ws = 4.0 / (math.sqrt(c) * 74.0 * scale * 73.0)
    wi = b.const(_int8(rng, (classes, c)), name="fc_w", scale=ws, zero_point=0)
    bi = b.const(rng.integers(-3000, 3000, size=classes, endpoint=True).astype(np.int32),
                 name="fc_b", scale=scale * ws, zero_point=0)
    sigma = math.sqrt(c) * 74.0 * 73.0 * scale * ws
    logits = b.tensor((1, classes), "int8", name="logits", scale=max(6.0 * sigma / 255.0, 1e-6),
                      zero_point=0)
    b.op("FULLY_CONNECTED", [mean, wi, bi], [logits], FullyConnectedOptions())
    probs = b.tensor((1, classes), "int8", name="probs", scale=1.0 / 256.0, zero_point=-128)
    b.op("SOFTMAX", [logits], [probs], SoftmaxOptions(1.0))
    return b.build([x], [probs])


def vgg16(size: int = 224, *, classes: int = 1000, seed: int = 0,
          name: str = "vgg16_f32", width: float = 1.0, units: int = 4096) -> bytes:
    """VGG16 (configuration D of Simonyan & Zisserman, ``keras.applications.VGG16``) in
    float32, random He-like weights, a fixed seed: 13 3x3 convolutions with ReLU in
    five blocks, each closed by a 2x2 stride-2 max pool, then fully connected layers
    of 4096, 4096 and ``classes`` units and SOFTMAX. At 224x224: 138.4 M parameters
    (553 MB of float32 weights, 102.8 M of them in the first fully connected layer).
    ``width`` scales the filters, ``units`` the first two fully connected layers (a
    VGG-shaped model small enough for a test)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(name)
    x = b.tensor((1, size, size, 3), "float32", name="input")
    y, h, c = x, size, 3
    for block, (full, convs) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3),
                                           (512, 3))):
        filters = max(1, round(full * width))
        for i in range(convs):
            y, _, _ = _conv(b, rng, y, (1, h, h, filters), c, 3,
                            ConvOptions("SAME", 1, 1, 1, 1, "RELU", 1), "float32", 0.0,
                            f"{block}_{i}")
            c = filters
        h //= 2
        pooled = b.tensor((1, h, h, c), "float32", name=f"pool{block}")
        b.op("MAX_POOL_2D", [y], [pooled], PoolOptions("VALID", 2, 2, 2, 2))
        y = pooled
    flat = b.tensor((1, h * h * c), "float32", name="flatten")
    shape = b.const(np.array([1, h * h * c], dtype=np.int32), name="flat_shape")
    b.op("RESHAPE", [y, shape], [flat], {"new_shape": [1, h * h * c]})
    y, n = flat, h * h * c
    for i, (m, act) in enumerate(((units, "RELU"), (units, "RELU"), (classes, "NONE"))):
        wt = (rng.standard_normal((m, n), dtype=np.float32)
              * np.float32(math.sqrt(2.0 / n)))
        wi = b.const(wt, name=f"fc{i}_w")
        bi = b.const((rng.standard_normal(m) * 0.05).astype(np.float32), name=f"fc{i}_b")
        out = b.tensor((1, m), "float32", name=f"fc{i}")
        b.op("FULLY_CONNECTED", [y, wi, bi], [out], FullyConnectedOptions(act))
        y, n = out, m
    probs = b.tensor((1, classes), "float32", name="probs")
    b.op("SOFTMAX", [y], [probs], SoftmaxOptions(1.0))
    return b.build([x], [probs])


#: the ops of :func:`band_forms` models, by kind
BAND_FORM_KINDS = ("se", "se_mean", "resize", "tconv")


def band_forms(kind: str, size: int = 32, channels: int = 8, *, dtype: str = "int8",
               seed: int = 0) -> bytes:
    """A small model around one op with a row-band form beyond the spatial patterns
    (issue 39): ``"se"`` a squeeze-excitation block (a 3x3 CONV_2D, a global
    AVERAGE_POOL_2D, two 1x1 convolutions, LOGISTIC, the broadcast MUL of the map by
    the vector, a 3x3 CONV_2D); ``"se_mean"`` the same with MEAN over rows and columns
    (dimensions kept) for the pool; ``"resize"`` a 3x3 CONV_2D, RESIZE_BILINEAR x2
    (half-pixel centres), a 3x3 CONV_2D; ``"tconv"`` a 3x3 CONV_2D, a 2x2 stride-2
    TRANSPOSE_CONV (SAME), a 3x3 CONV_2D. int8 (per-channel) or float32, random weights
    from ``seed``; input [1, size, size, 4]."""
    if kind not in BAND_FORM_KINDS:
        raise ValueError(f"band_forms builds {', '.join(BAND_FORM_KINDS)}, not {kind}")
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"band_{kind}_{dtype}")
    f32 = dtype == "float32"
    h = w = size
    c = channels
    scale = 0.05
    x = (b.tensor((1, h, w, 4), "float32", name="input") if f32 else
         b.tensor((1, h, w, 4), "int8", name="input", scale=scale, zero_point=0))
    opts = ConvOptions("SAME", 1, 1, 1, 1, "RELU", 1)
    m, s_m, z_m = _conv(b, rng, x, (1, h, w, c), 4, 3, opts, dtype, scale, "0")

    def act(shape: tuple[int, ...], name: str, sc: float, zp: int) -> int:
        return (b.tensor(shape, "float32", name=name) if f32
                else b.tensor(shape, "int8", name=name, scale=sc, zero_point=zp))

    if kind in ("se", "se_mean"):
        pooled = act((1, 1, 1, c), "pool", s_m, z_m)
        if kind == "se":
            b.op("AVERAGE_POOL_2D", [m], [pooled], PoolOptions("VALID", h, w, h, w))
        else:
            axes = b.const(np.asarray([1, 2], np.int32), name="axes")
            b.op("MEAN", [m, axes], [pooled], ReducerOptions(True))
        one = ConvOptions("VALID", 1, 1, 1, 1, "RELU", 1)
        v, s_v, _ = _conv(b, rng, pooled, (1, 1, 1, c // 2), c, 1, one, dtype, s_m, "1")
        lin = ConvOptions("VALID", 1, 1, 1, 1, "NONE", 1)
        v, s_v, _ = _conv(b, rng, v, (1, 1, 1, c), c // 2, 1, lin, dtype, s_v, "2")
        gate = act((1, 1, 1, c), "gate", 1.0 / 256, -128)
        b.op("LOGISTIC", [v], [gate])
        y = act((1, h, w, c), "excited", s_m, z_m)
        b.op("MUL", [m, gate], [y], ActivationOptions("NONE"))
        s_y, oh = s_m, h
    elif kind == "resize":
        size_t = b.const(np.asarray([2 * h, 2 * w], np.int32), name="size")
        y = act((1, 2 * h, 2 * w, c), "resized", s_m, z_m)
        b.op("RESIZE_BILINEAR", [m, size_t], [y], ResizeOptions(False, True))
        s_y, oh = s_m, 2 * h
    else:
        oc, k = c, 2
        shape_t = b.const(np.asarray([1, 2 * h, 2 * w, oc], np.int32), name="oshape")
        if f32:
            wt = b.const((rng.standard_normal((oc, k, k, c)) * 0.3).astype(np.float32),
                         name="wt")
            bt = b.const((rng.standard_normal(oc) * 0.05).astype(np.float32), name="bt")
            s_y = 0.0
        else:
            ws = 0.3 / 73.0 * rng.uniform(0.5, 1.5, size=oc)
            wt = b.const(_int8(rng, (oc, k, k, c)), name="wt", scale=ws, zero_point=0, axis=0)
            bt = b.const(rng.integers(-3000, 3000, size=oc, endpoint=True).astype(np.int32),
                         name="bt", scale=s_m * ws, zero_point=0, axis=0)
            s_y = s_m * 4.0
        y = act((1, 2 * h, 2 * w, oc), "tconv", s_y, 0)
        b.op("TRANSPOSE_CONV", [shape_t, wt, m, bt], [y],
             TransposeConvOptions("SAME", 2, 2, "NONE"))
        oh = 2 * h
    out, _, _ = _conv(b, rng, y, (1, oh, oh, 4), c, 3, ConvOptions("SAME", 1, 1, 1, 1,
                                                                    "NONE", 1),
                      dtype, s_y, "3")
    return b.build([x], [out])
