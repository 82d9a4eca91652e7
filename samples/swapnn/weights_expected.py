"""Write the expected output of samples/swapnn's weight scenarios (the tflite-micro oracle).

Run at configure time by samples/swapnn/CMakeLists.txt with Zephyr's Python, this
repository's scripts/ on PYTHONPATH:

    weights_expected.py MODEL.tflite EXPECTED.h

EXPECTED.h: the tflite-micro interpreter's output (the project's oracle) for the input
src/main.c makes (byte i of the int8 input is ((i * 31) % 251) - 125, in the input
tensor's memory order), so the firmware checks its output bit for bit whether the weights
come from flash or from a disk.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from nnopt.errors import NnoptError, UsageError, describe_error


def expected_header(model: bytes) -> str:
    try:
        from tflite_micro.python.tflite_micro import runtime

        from nnopt.testing.harness import run_tflm
    except ImportError as err:  # pragma: no cover - the oracle is a dev dependency
        raise UsageError(f"the tflite-micro interpreter is not importable: {err}",
                         hint="install nnopt's dev extra into Zephyr's Python "
                         "(pip install tflite-micro)") from None
    details = runtime.Interpreter.from_bytes(model).get_input_details(0)
    shape = tuple(int(d) for d in details["shape"])
    if details["dtype"] != np.int8:
        raise UsageError(f"the model's input is {details['dtype']}, not int8",
                         hint="src/main.c fills an int8 input; pick an int8 model")
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    x = (((i * 31) % 251) - 125).astype(np.int8).reshape(shape)
    out, _ = run_tflm(model, [x])
    data = np.asarray(out[0]).astype(np.int8).reshape(-1)
    return "\n".join([
        "/* Written by samples/swapnn/weights_expected.py: the tflite-micro interpreter's",
        " * output for the firmware's input (src/main.c). */",
        "#include <stdint.h>",
        f"#define SWAPNN_OUTPUT_BYTES {data.size}",
        "static const int8_t swapnn_expected[SWAPNN_OUTPUT_BYTES] = {",
        "    " + ", ".join(str(int(b)) for b in data),
        "};", ""])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path, help="the .tflite model the firmware runs")
    p.add_argument("expected", type=Path, help="the C header of the expected output to write")
    args = p.parse_args(argv)
    try:
        if not args.model.is_file():
            raise UsageError(f"no model at {args.model}", hint="pass the .tflite file "
                             "nnopt_add_model() compiles (SWAPNN_MODEL)")
        header = expected_header(args.model.read_bytes())
        args.expected.parent.mkdir(parents=True, exist_ok=True)
        args.expected.write_text(header)
    except NnoptError as err:
        text, code = describe_error(err)
        print(text, file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
