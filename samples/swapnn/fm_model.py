#!/usr/bin/env python3
"""Write the model of samples/swapnn's feature-map scenario and its expected outputs.

Run at build time by samples/swapnn/CMakeLists.txt (SWAPNN_FEATURE_MAPS) with Zephyr's
Python, this repository's scripts/ on PYTHONPATH:

    fm_model.py MODEL.tflite EXPECTED.h --inferences N

MODEL.tflite: seven 3x3 int8 convolutions over 24x24x24 feature maps with skip
connections (nnopt.testing.big_models: conv_chain, random weights, seed 4, as the
tests build their out-of-core models: never committed), whose activations peak at
69,120 B, so a RAM budget of 50,000 B holds them only with two feature maps written out
and read back (planned with nnopt optimize --feature-maps auto --sram 50000).

EXPECTED.h: the outputs of the tflite-micro interpreter (the project's oracle) for the
inputs the firmware makes (src/main_fm.c: input k's byte i is ((i * 31 + k * 17) % 251)
- 125), one per inference, so the firmware checks every output bit for bit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from nnopt.errors import NnoptError, UsageError, describe_error

# the feature-map scenario's model: three feature maps live across two convolutions each
INPUT_SHAPE = (1, 24, 24, 24)
SEED = 4


def build_model() -> bytes:
    from nnopt.testing.big_models import Layer, conv_chain  # the tests' model builder

    c = INPUT_SHAPE[3]
    layers = [Layer(c), Layer(c), Layer(c), Layer(c, skip_from=1), Layer(c, skip_from=0),
              Layer(c, skip_from=-1), Layer(8, stride=2)]
    return conv_chain(INPUT_SHAPE, layers, seed=SEED, name="swapnn_fm")


def firmware_input(k: int) -> np.ndarray:
    """Input k as src/main_fm.c fills it."""
    i = np.arange(int(np.prod(INPUT_SHAPE)), dtype=np.int64)
    return (((i * 31 + k * 17) % 251) - 125).astype(np.int8).reshape(INPUT_SHAPE)


def expected_header(model: bytes, inferences: int) -> str:
    try:
        from nnopt.testing.harness import run_tflm
    except ImportError as err:  # pragma: no cover - the oracle is a dev dependency
        raise UsageError(f"the tflite-micro interpreter is not importable: {err}",
                         hint="install nnopt's dev extra into Zephyr's Python "
                         "(pip install tflite-micro)") from None
    rows = []
    for k in range(inferences):
        out, _ = run_tflm(model, [firmware_input(k)])
        data = out[0].astype(np.int8).tobytes()
        rows.append("    {" + ", ".join(str(int(b)) for b in np.frombuffer(data, np.int8))
                    + "},")
    n = len(out[0].tobytes())
    return "\n".join([
        "/* Written by samples/swapnn/fm_model.py: the tflite-micro interpreter's outputs "
        "for the",
        " * firmware's inputs (src/main_fm.c), one row per inference. */",
        "#include <stdint.h>",
        f"#define SWAPNN_FM_INFERENCES {inferences}",
        f"#define SWAPNN_FM_OUTPUT_BYTES {n}",
        "static const int8_t swapnn_fm_expected[SWAPNN_FM_INFERENCES]"
        "[SWAPNN_FM_OUTPUT_BYTES] = {",
        *rows,
        "};", ""])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path, help="the .tflite file to write")
    p.add_argument("expected", type=Path, help="the C header of expected outputs to write")
    p.add_argument("--inferences", type=int, default=3, help="inferences the firmware runs")
    args = p.parse_args(argv)
    try:
        if args.inferences < 1:
            raise UsageError("--inferences must be at least 1", hint="give 1 or more")
        data = build_model()
        header = expected_header(data, args.inferences)
        args.model.parent.mkdir(parents=True, exist_ok=True)
        args.model.write_bytes(data)
        args.expected.write_text(header)
    except NnoptError as err:
        text, code = describe_error(err)
        print(text, file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
