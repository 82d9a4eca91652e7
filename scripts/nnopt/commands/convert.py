"""``nnopt convert``: write a model as nnopt imported it (e.g. from ONNX) as .tflite."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..convert import convert_file
from ..errors import NnoptError
from .common import add_input_value_argument, input_shapes_arg, input_values_arg, progress

DESCRIPTION = """\
Write the graph nnopt imports from MODEL (an ONNX file from torch.onnx.export, or a
.tflite) as a TFLite flatbuffer that TFLM and LiteRT load: the same inputs and outputs
(ONNX layout and dtype), NHWC inside, int8 ops where the ONNX model had QDQ pairs.
The tflite-micro interpreter runs it bit-exactly as `nnopt run` runs MODEL."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("convert", help="write an ONNX model as .tflite",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path, metavar="MODEL")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="MODEL.tflite",
                   help="the .tflite file to write")
    p.add_argument("--input-shape", action="append", metavar="NAME=D1,D2,...",
                   help="ONNX models: fix the dynamic dimensions of input NAME (repeatable)")
    add_input_value_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    progress(f"reading {args.model}")
    graph, data = convert_file(args.model, input_shapes_arg(args), input_values_arg(args))
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_bytes(data)
    except OSError as err:
        raise NnoptError(f"cannot write {args.output}: {err.strerror}",
                         hint="check the directory exists and is writable") from err
    print(f"wrote {args.output} ({len(data):,} bytes, {len(graph.ops)} ops, "
          f"{len(graph.inputs)} input(s), {len(graph.outputs)} output(s))")
    return 0
