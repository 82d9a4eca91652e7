"""``nnopt quantize``: int8 post-training quantisation of an ONNX model (onnxruntime)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..onnx_quantize import quantize_onnx
from .common import progress

DESCRIPTION = """\
Quantise a float32 ONNX model to int8 with onnxruntime.quantization.quantize_static and
MCU defaults: QDQ format, int8 activations per tensor, int8 weights symmetric per
channel, min/max calibration over the samples in DATA.npz (one array per model input,
named after it, samples on the leading axis). The result runs in nnopt as int8 ops
(TFLM's integer arithmetic). Needs onnxruntime: pip install 'nnopt[quantize]'."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("quantize", help="int8-quantise an ONNX model (QDQ, onnxruntime)",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path, metavar="MODEL.onnx")
    p.add_argument("--calibration", type=Path, required=True, metavar="DATA.npz",
                   help="calibration samples (numpy.savez(path, input=samples))")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="MODEL_int8.onnx")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    progress(f"quantising {args.model} with onnxruntime")
    n = quantize_onnx(args.model, args.calibration, args.output)
    print(f"wrote {args.output} (int8 QDQ, per-channel weights, calibrated on {n} "
          "sample(s))")
    return 0
