"""The generated header as documentation (nnopt.codegen.header_doc): a host program
uses its macros as the usage block shows, checks them against the model's descriptors,
is built from only the nnrt sources the header lists (and the host port), and its
output is bit-exact with the tflite-micro interpreter's."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import SHIPPED
from nnopt.codegen.c_model import generate
from nnopt.frontend.tflite import load_model_bytes
from nnopt.paths import nnrt_dir, nnrt_include_dirs
from nnopt.planner import plan_model
from nnopt.testing.harness import random_inputs, run_tflm
from support.cbuild import WARNINGS, c_source

MODELS = ("hello_world_int8", "lenet5_int8", "hello_world_float")


def listed_sources(header: str) -> list[str]:
    block = header[header.index("nnrt sources this model calls"):]
    block = block[:block.index("*/")]
    return re.findall(r"^ \*   (\S+\.c)$", block, re.M)


@pytest.mark.parametrize("name", MODELS)
def test_header_macros_and_sources_build_and_run_bit_exact(name: str, tmp_path: Path) -> None:
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no host gcc")
    data = (SHIPPED / f"{name}.tflite").read_bytes()
    planned = plan_model(load_model_bytes(data))
    gen = generate(planned, tmp_path, name=name)
    header = gen.h_file.read_text()
    up = name.upper()
    g = planned.graph
    tin, tout = g.tensors[g.inputs[0]], g.tensors[g.outputs[0]]
    # the macros as the header spells them
    assert f"#define {up}_INPUT0_BYTES {tin.nbytes}u" in header
    assert f"#define {up}_OUTPUT0_SHAPE {{{', '.join(map(str, tout.shape))}}}" in header
    quantised = tin.quant is not None
    assert (f"#define {up}_INPUT0_ZERO_POINT" in header) == quantised
    assert "prepare" in header and "invoke" in header and "output(0)" in header  # usage
    sources = listed_sources(header)
    assert sources and all((nnrt_dir() / s).is_file() for s in sources)
    port = sorted((nnrt_dir() / "port" / "host").glob("*.c"))
    exe = tmp_path / "usage"
    cmd = [cc, *WARNINGS, "-O1", *(f"-I{d}" for d in nnrt_include_dirs()), f"-I{tmp_path}",
           f'-DMODEL_HEADER="{name}_model.h"', f"-DMODEL={name}_model", f"-DUP={up}",
           *(["-DQUANTISED"] if quantised else []), str(c_source("header_usage.c")),
           str(gen.c_file), *(str(nnrt_dir() / s) for s in sources), *map(str, port),
           "-o", str(exe), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]  # the listed sources suffice
    x = random_inputs(data, seed=5)
    run = subprocess.run([str(exe)], input=np.ascontiguousarray(x[0]).tobytes(),
                         capture_output=True, check=False)
    out = run.stdout.decode()
    assert run.returncode == 0 and "FAIL" not in out, out
    expected, _ = run_tflm(data, x)
    assert out.split("out ")[1].strip() == np.ascontiguousarray(expected[0]).tobytes().hex()


def test_only_the_header_changes(tmp_path: Path) -> None:
    """The .c does not depend on the header's new lines: two generations are identical
    and the .c never names the new macros."""
    data = (SHIPPED / "hello_world_int8.tflite").read_bytes()
    planned = plan_model(load_model_bytes(data))
    a = generate(planned, tmp_path / "a")
    b = generate(planned, tmp_path / "b")
    assert a.c_file.read_bytes() == b.c_file.read_bytes()
    assert "_INPUT0_BYTES" not in a.c_file.read_text()
