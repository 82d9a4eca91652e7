"""MediaPipe's custom ``Convolution2DTransposeBias`` -> a TRANSPOSE_CONV with bias.

MediaPipe's segmentation models (selfie segmentation, hair segmentation) end in this
custom operator, which LiteRT runs through its XNNPACK delegate and TFLM cannot resolve.
Its kernel (mediapipe/util/tflite/operations/transpose_conv_bias.cc) is TFLite's
reference TransposeConv with a bias: inputs [input [N,H,W,IC], weights [OC,KH,KW,IC],
bias [OC]], float32 only; its options (custom_options, raw bytes, not a flexbuffer) are
the leading fields of ``TfLiteTransposeConvParams``: int32 padding (1 SAME, 2 VALID),
stride_width, stride_height. The output extent is ``stride * (in - 1) + kernel - pad``
with pad = ``max(0, kernel - (in - 1) % stride - 1)`` for SAME (0 for VALID), the
leading padding half of it: exactly what TFLM's TRANSPOSE_CONV computes from that output
extent (``ComputePaddingHeightWidth``). So it becomes TRANSPOSE_CONV(output shape,
weights, input, bias) with the same padding and strides; the float kernel adds the bias
after the sum where MediaPipe's starts from it (float rounding differs in the last bits).

Refused by name: options shorter than three int32, a padding other than SAME/VALID, a
non-positive stride, tensors that are not float32, 4-D input and weights, 1-D bias of the
weights' output channels, or an output of another shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import Op, Tensor, TransposeConvOptions
from ..lowering.transpose_conv import TRANSPOSE_CONV
from ..ops import DEFINITIONS

CUSTOM_CODE = "Convolution2DTransposeBias"
_PADDING = {1: "SAME", 2: "VALID"}  # TfLitePadding
_HINT = ("nnopt lowers MediaPipe's Convolution2DTransposeBias (float32, input "
         "[N,H,W,IC], weights [OC,KH,KW,IC], bias [OC], SAME or VALID padding) onto the "
         "TRANSPOSE_CONV kernel")


def lower(k: int, inputs: Sequence[int], outputs: Sequence[int], custom_options: bytes,
          tensors: list[Tensor], where: str, source: str) -> Op:
    """Op ``k`` (a Convolution2DTransposeBias) as a TRANSPOSE_CONV; appends its output
    shape operand (a constant int32 [4]) to ``tensors``."""
    def refuse(why: str) -> UnsupportedError:
        return UnsupportedError(f"{source}: {where}op {k} ({CUSTOM_CODE}): {why}",
                                hint=_HINT)

    if len(custom_options) < 12:
        raise refuse(f"options are {len(custom_options)} bytes; expected padding, "
                     "stride_width and stride_height (3 int32)")
    padding, stride_w, stride_h = (int(v) for v in
                                   np.frombuffer(custom_options[:12], dtype="<i4"))
    if padding not in _PADDING:
        raise refuse(f"padding {padding} is neither SAME (1) nor VALID (2)")
    if stride_w < 1 or stride_h < 1:
        raise refuse(f"strides {stride_h}x{stride_w} are not positive")
    if len(inputs) != 3 or len(outputs) != 1 or min(inputs) < 0:
        raise refuse(f"has {len(inputs)} inputs and {len(outputs)} outputs; expected "
                     "input, weights, bias and one output")
    x, w, b, y = (tensors[t] for t in (*inputs, outputs[0]))
    for t in (x, w, b, y):
        if t.dtype != DType.FLOAT32:
            raise refuse(f"tensor {t.index} ({t.name}) is {t.dtype.name}; only float32")
    if len(x.shape) != 4 or len(w.shape) != 4 or x.shape[3] != w.shape[3] \
            or b.num_elements != w.shape[0]:
        raise refuse(f"input {list(x.shape)}, weights {list(w.shape)} and bias "
                     f"{list(b.shape)} are not [N,H,W,IC], [OC,KH,KW,IC] and [OC]")
    extent = []
    for size, kernel, stride in ((x.shape[1], w.shape[1], stride_h),
                                 (x.shape[2], w.shape[2], stride_w)):
        pad = max(0, kernel - (size - 1) % stride - 1) if _PADDING[padding] == "SAME" else 0
        extent.append(stride * (size - 1) + kernel - pad)
    want = (x.shape[0], *extent, w.shape[0])
    if y.shape != want:
        raise refuse(f"output tensor {y.index} ({y.name}) is {list(y.shape)}; the "
                     f"kernel writes {list(want)}")
    shape = len(tensors)
    tensors.append(Tensor(shape, f"{y.name}/output_shape", (4,), DType.INT32,
                          data=np.asarray(want, dtype="<i4").tobytes()))
    # the builtin it becomes: the definition whose lowering is lowering/transpose_conv.py's
    tconv = next(d.opcode for d in DEFINITIONS.values() if d.lowering is TRANSPOSE_CONV)
    return Op(k, tconv, (shape, w.index, x.index, b.index), (y.index,),
              TransposeConvOptions(_PADDING[padding], stride_h, stride_w))
