"""The seeded inputs of a model and the ``tflite-micro`` Python interpreter's outputs for
them (the oracle every benchmark compares firmware outputs with, byte for byte), and
TFLM's minimum arena on the host; shared by ``bench_firmware.py`` and
``bench_zephyr.py``.

Inputs are :func:`nnopt.inputs.random_inputs` of the model's graph (seed :data:`SEED`,
then ``SEED + 1``... for the next invocations of a stateful model), or the same draws
from the flatbuffer for a model nnopt cannot read (:func:`flatbuffer_inputs`). Run as a
script (``oracle.py --tflm-worker MODEL``), it is the child of :func:`tflm_min_arena`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import run_worker
from tflm_firmware import resource_variables

from nnopt.errors import NnoptError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.inputs import random_inputs
from nnopt.ir import Graph

SEED = 1
#: Inferences in one run of a stateful model (variable tensors, resource variables),
#: the state carried over.
STATEFUL_INVOCATIONS = 4


def tflm_worker(model: Path) -> int:
    """Child: bisect the smallest arena_size that loads and runs the model."""
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime

    data = model.read_bytes()
    g = load_model_bytes(data)
    inputs = random_inputs(g, SEED)

    def probe(n: int) -> bool:
        try:
            interp = runtime.Interpreter.from_bytes(data, arena_size=n)
            for i, x in enumerate(inputs):
                interp.set_input(np.ascontiguousarray(x), i)
            interp.invoke()
        except (RuntimeError, ValueError):
            return False
        return True

    def ok(n: int) -> bool:
        # in a forked child: the interpreter crashes (SIGSEGV) on some arenas that are
        # too small (TFLM's keyword_scrambled), which counts as a failure there
        pid = os.fork()
        if pid == 0:
            os._exit(0 if probe(n) else 1)
        _, status = os.waitpid(pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    hi = 1 << 16
    while not ok(hi):
        hi *= 2
        if hi > 1 << 30:
            print("tflm: does not load with 1 GiB", file=sys.stderr)
            return 1
    lo = 0  # fails (or untested 0)
    while hi - lo > 16:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    # TFLM aligns internally; finish byte-exact over the last 16.
    while hi - 1 > lo and ok(hi - 1):
        hi -= 1
    print(f"tflm-min-arena {hi}")
    return 0


def tflm_min_arena(model: Path, timeout_s: float) -> tuple[int | None, str | None]:
    """The smallest ``arena_size`` with which the tflite-micro Python interpreter loads
    ``model`` and runs one inference (a 64-bit host figure), measured in a child process
    (:func:`tflm_worker`); (None, reason) when it fails."""
    return run_worker(Path(__file__).resolve(), model, r"tflm-min-arena (\d+)", timeout_s,
                      stream="stdout")


def stateful_tflite(data: bytes) -> bool:
    """Whether a .tflite model keeps state between invocations (variable tensors or
    resource variables), read from the flatbuffer (for models nnopt cannot plan)."""
    import tflite

    model = tflite.Model.GetRootAsModel(data, 0)
    for k in range(model.SubgraphsLength()):
        sg = model.Subgraphs(k)
        if any(sg.Tensors(i).IsVariable() for i in range(sg.TensorsLength())):
            return True
    return resource_variables(data) > 0


_NP_TYPES = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 6: "bool",
             7: "int16", 9: "int8"}  # tflite.TensorType -> numpy


def flatbuffer_inputs(data: bytes, seed: int) -> list[Any]:
    """Random inputs as :func:`nnopt.inputs.random_inputs` draws them (integers over their
    range, floats from N(0, 1)), from the .tflite's input tensors: for models whose graph
    nnopt cannot read (TFLM may still run them)."""
    import numpy as np
    import tflite

    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for i in range(sg.InputsLength()):
        t = sg.Tensors(sg.Inputs(i))
        dt = np.dtype(_NP_TYPES.get(t.Type(), "float32"))
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        if dt.kind in "iu":
            info = np.iinfo(dt)
            out.append(rng.integers(int(info.min), int(info.max) + 1, size=shape, dtype=dt))
        else:
            out.append(rng.standard_normal(shape).astype(dt))
    return out


@dataclass(frozen=True)
class Oracle:
    """The interpreter's outputs (each output's invocations back to back) and their
    numpy dtypes."""

    outputs: list[bytes]
    dtypes: list[str]


def compare_outputs(got: list[bytes], expected: Oracle) -> str | None:
    """None when every output is byte-identical, else what differs (bytes, and the
    largest difference of the values)."""
    import numpy as np

    if len(got) != len(expected.outputs):
        return f"{len(got)} outputs, the interpreter has {len(expected.outputs)}"
    for o, (a, b) in enumerate(zip(got, expected.outputs, strict=True)):
        if len(a) != len(b):
            return f"output {o}: {len(a)} bytes, the interpreter's {len(b)}"
        if a != b:
            n = sum(x != y for x, y in zip(a, b, strict=True))
            dt = np.dtype(expected.dtypes[o])
            va = np.frombuffer(a, dt).astype(np.float64)
            vb = np.frombuffer(b, dt).astype(np.float64)
            return (f"output {o}: {n} of {len(a)} bytes differ, max |diff| "
                    f"{float(np.max(np.abs(va - vb))):.3g} ({dt})")
    return None


def oracle_outputs(data: bytes, steps: list[list[Any]],
                   arena: int | None) -> tuple[Oracle | None, str | None]:
    """The tflite-micro Python interpreter's outputs for ``steps`` (one list of input
    arrays per invocation, state carried over), each output's invocations back to back;
    run in a forked child (the interpreter can crash). (None, reason) on failure."""
    import pickle

    import numpy as np
    import tflite

    n_out = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0).OutputsLength()

    with tempfile.TemporaryDirectory(prefix="bench-oracle-") as tmp:
        dest = Path(tmp) / "out.pickle"
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                from tflite_micro.python.tflite_micro import runtime

                size = max(arena or 0, 1 << 20) * 2
                while True:  # grown x4 on allocation failure, up to 1 GiB
                    try:
                        interp = runtime.Interpreter.from_bytes(data, arena_size=size)
                        break
                    except RuntimeError:
                        if size >= 1 << 30:
                            raise
                        size *= 4
                outs = [b""] * n_out
                dtypes = [""] * n_out
                for step in steps:
                    for i, x in enumerate(step):
                        interp.set_input(np.ascontiguousarray(x), i)
                    interp.invoke()
                    for o in range(n_out):
                        y = np.ascontiguousarray(interp.get_output(o))
                        outs[o] += y.tobytes()
                        dtypes[o] = y.dtype.str
                dest.write_bytes(pickle.dumps((outs, dtypes)))
                code = 0
            except Exception as err:  # any failure: reported by the parent
                dest.with_suffix(".err").write_text(f"{type(err).__name__}: {err}")
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and dest.is_file():
            outs, dtypes = pickle.loads(dest.read_bytes())
            return Oracle(list(outs), list(dtypes)), None
        err_file = dest.with_suffix(".err")
        why = err_file.read_text()[:200] if err_file.is_file() else f"status {status}"
        return None, f"tflite-micro interpreter fails: {why}"

def model_steps(data: bytes, source: Graph | None, invocations: int) -> list[list[Any]]:
    """One list of input arrays per invocation: ``source``'s :func:`random_inputs` (seed
    :data:`SEED` + invocation), or :func:`flatbuffer_inputs` without a graph."""
    if source is not None:
        return [random_inputs(source, SEED + j) for j in range(invocations)]
    return [flatbuffer_inputs(data, SEED + j) for j in range(invocations)]


def input_blobs(steps: list[list[Any]]) -> list[bytes]:
    """Each input's bytes for every invocation, back to back (what the firmware reads)."""
    if not steps:
        return []
    return [b"".join(s[i].tobytes() for s in steps) for i in range(len(steps[0]))]


@dataclass(frozen=True)
class ModelInputs:
    """A model's seeded inputs for a benchmark run."""

    source: Graph | None  # nnopt's graph of the model (None: nnopt cannot read it)
    invocations: int
    steps: list[list[Any]]
    blobs: list[bytes]


def seeded_inputs(data: bytes, name: str) -> ModelInputs:
    """The inputs of a .tflite model as bench_firmware.py draws them for a model it
    does not plan: from nnopt's graph when it reads the model, else the flatbuffer's;
    :data:`STATEFUL_INVOCATIONS` invocations for a stateful model, else one."""
    try:
        source: Graph | None = load_model_bytes(data, name=name, unsupported="plan")
    except NnoptError:
        source = None
    k = STATEFUL_INVOCATIONS if stateful_tflite(data) else 1
    steps = model_steps(data, source, k)
    return ModelInputs(source, k, steps, input_blobs(steps))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--tflm-worker":
        sys.exit("usage: oracle.py --tflm-worker MODEL (the child of tflm_min_arena())")
    sys.exit(tflm_worker(Path(sys.argv[2])))
