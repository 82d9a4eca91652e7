"""The ONNX models of bench_firmware.py, as the .tflite ``nnopt convert`` writes.

TFLM reads no ONNX. A user who compares nnopt with TFLM on an ONNX model converts it
(``nnopt convert MODEL.onnx -o MODEL.tflite [--input-shape ...] [--input-value ...]``:
the graph nnopt imports, which the tflite-micro interpreter runs bit-exactly as
``nnopt run`` runs the ONNX model) and gives TFLM the .tflite. The benchmark does the
same: every ONNX model is converted once per run, with the shapes and values of
:data:`CONVERT_INPUTS` (the one table of them), and both sides (and the interpreter, the
oracle) run the converted file. :func:`same_code` checks that nnopt's generated C from
the .onnx is that of the converted .tflite, so nnopt's figures are those of the ONNX
model as well.

Converted files are kept under ``<cache>/converted/<sha256 prefix>/<stem>.tflite``
(written once, atomically): the bytes are deterministic (:func:`nnopt.convert.
convert_file`), so TFLM's cached measurements (tflm_cache.py, keyed by the bytes) hold
across runs.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nnopt.convert import convert_file
from nnopt.driver import generate
from nnopt.errors import NnoptError
from nnopt.firmware.toolchain import default_cache_dir
from nnopt.planner import PlannedModel, PlanOptions, plan_model


@dataclass(frozen=True)
class ConvertInputs:
    """``--input-shape`` and ``--input-value`` of one ONNX model."""

    shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    values: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    def cli_args(self) -> list[str]:
        """As ``nnopt convert`` / ``nnopt run`` arguments."""
        out: list[str] = []
        for name, shape in self.shapes.items():
            out += ["--input-shape", f"{name}={','.join(str(d) for d in shape)}"]
        for name, vals in self.values.items():
            out += ["--input-value", f"{name}={','.join(f'{v:g}' for v in vals)}"]
        return out


#: The ONNX models whose inputs need pinning (MODELS_DIR-relative; realworld/SOURCES.md
#: gives the shapes onnxruntime was checked with, tests/test_onnx_realworld.py runs them
#: the same way): the mel front end on 1,280 samples (80 ms at 16 kHz), Silero VAD on
#: one 512-sample window with its LSTM state as an input and the sample rate pinned
#: (its If branches resolve on it), WakeForge's GRU head on 50 frames (1 s) of features.
#: Models not listed (MODELS_DIR/onnx/: static shapes) convert without arguments.
CONVERT_INPUTS: dict[str, ConvertInputs] = {
    "realworld/oww_melspectrogram.onnx": ConvertInputs({"input": (1, 1280)}),
    "realworld/silero_vad_16k_op15.onnx": ConvertInputs(
        {"input": (1, 512), "state": (2, 1, 128)}, {"sr": (16000.0,)}),
    "realworld/wakeforge_alexa.onnx": ConvertInputs({"features": (1, 50, 128)}),
}


def is_onnx(path: Path) -> bool:
    return path.suffix.lower() == ".onnx"


def inputs_of(rel: str) -> ConvertInputs:
    """The table's entry of an ONNX path, by its folder and file name (a copy of the
    shared folder elsewhere too; none: no arguments)."""
    return CONVERT_INPUTS.get("/".join(Path(rel).parts[-2:]), ConvertInputs())


@dataclass(frozen=True)
class Converted:
    """One ONNX model of the run: its .tflite (None: why not, in ``error``)."""

    source: Path
    rel: str  # MODELS_DIR-relative (or as given)
    inputs: ConvertInputs
    tflite: Path | None = None
    sha256: str | None = None
    error: str | None = None

    def command(self) -> str:
        """The ``nnopt convert`` command line that writes the same bytes."""
        args = " ".join(self.inputs.cli_args())
        out = f"nnopt convert {self.rel} -o {self.source.stem}.tflite"
        return f"{out} {args}" if args else out


def convert(source: Path, rel: str, cache: Path) -> Converted:
    """``source`` converted with its table entry into ``cache`` (reused when the same
    bytes are there); a failure is recorded, not raised."""
    inputs = inputs_of(rel)
    try:
        _, data = convert_file(source, inputs.shapes, inputs.values)
    except NnoptError as err:
        first = (err.message.strip().splitlines() or ["conversion failed"])[0]
        hint = f" (hint: {err.hint})" if err.hint else ""
        return Converted(source, rel, inputs, error=f"nnopt convert: {first}{hint}"[:300])
    digest = hashlib.sha256(data).hexdigest()
    dest = cache / digest[:16] / f"{source.stem}.tflite"
    if not (dest.is_file() and dest.read_bytes() == data):
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)
    return Converted(source, rel, inputs, dest, digest)


def same_code(conv: Converted, planned: PlannedModel, opts: PlanOptions) -> bool:
    """Whether nnopt's generated C (and header) from the .onnx, planned with ``opts``
    (those of ``planned``, the converted model's plan), is that of ``planned``, the
    first line (which names the file's checksum) aside."""
    from nnopt.frontend.tflite import load_model_bytes

    g = load_model_bytes(conv.source.read_bytes(), name=planned.plan.model,
                         source=str(conv.source), input_shapes=conv.inputs.shapes or None,
                         input_values=conv.inputs.values or None)
    onnx_pm = plan_model(g, opts, source_bytes=conv.source.read_bytes())
    with tempfile.TemporaryDirectory(prefix="bench-same-code-") as tmp:
        texts = []
        for k, pm in enumerate((planned, onnx_pm)):
            out = Path(tmp) / str(k)
            out.mkdir()
            src = generate(pm, out).sources
            texts.append([_body(p) for p in (src.c_file, src.h_file)])
    return texts[0] == texts[1]


def _body(path: Path) -> str:
    return path.read_text().split("\n", 1)[-1]


def rel_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when under it, else as given."""
    return os.fspath(path.relative_to(root)) if path.is_relative_to(root) else os.fspath(path)


def convert_onnx(paths: list[tuple[str, Path]], root: Path
                 ) -> list[tuple[str, Path, Converted | None]]:
    """(group, file measured, its conversion) of every model: an ONNX model's file is
    the .tflite nnopt convert wrote (its own path when the conversion failed)."""
    out: list[tuple[str, Path, Converted | None]] = []
    cache = default_cache_dir() / "converted"
    for group, q in paths:
        if not is_onnx(q):
            out.append((group, q, None))
            continue
        conv = convert(q, rel_path(q, root), cache)
        out.append((group, conv.tflite or q, conv))
    return out
