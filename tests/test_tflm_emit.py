"""``nnopt optimize --emit tflite``: a .tflite that stock TFLM runs bit-exact in an arena
no larger than the original's (nnopt.tflm), checked with the tflite-micro interpreter on
a model built to need reordering, on the models shipped in models/ and on every shared
model (skipped without ../shared/models)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import MODELS, REPO, SHIPPED
from nnopt.tflite_builder import ModelBuilder
from nnopt.tflm import interpreter
from nnopt.tflm.emit import OFFLINE, emit_tflite
from nnopt.tflm.offline import (
    METADATA_NAME,
    ONLINE,
    plan_offline,
    read_model,
    read_offsets,
    rewrite,
)

pytest.importorskip("tflite_micro", reason="the tflite-micro interpreter measures TFLM")


def branchy_model() -> bytes:
    """Two branches, each a 4 KiB tensor reduced to 64 B, listed breadth first: the
    file's order keeps both 4 KiB tensors live, nnopt's runs one branch then the other."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.tensor((1, 1, 16), np.float32, name="x")
    axis = b.const(np.array([1], np.int32))
    bigs, smalls = [], []
    for i in range(2):
        c = b.const(rng.standard_normal((1, 64, 16)).astype(np.float32))
        big = b.tensor((1, 64, 16), np.float32, name=f"big{i}")
        b.op("ADD", [x, c], [big], {"fused_activation_function": "NONE"})
        bigs.append(big)
    for i, big in enumerate(bigs):
        small = b.tensor((1, 16), np.float32, name=f"small{i}")
        b.op("MEAN", [big, axis], [small], {"keep_dims": False})
        smalls.append(small)
    y = b.tensor((1, 16), np.float32, name="y")
    b.op("ADD", smalls, [y], {"fused_activation_function": "NONE"})
    return b.build([x], [y])


def test_offline_plan_reorders_and_fits_tflms_lifetimes() -> None:
    model = read_model(branchy_model())
    plan = plan_offline(model)
    assert plan.reordered and plan.peak < plan.peak_file
    assert plan.order[:2] in ((0, 2), (1, 3))  # a branch's ADD then its MEAN
    # one offset per tensor; constants online; two live 4 KiB tensors never overlap
    assert len(plan.offsets) == len(model.subgraphs[0].tensors)
    sg = model.subgraphs[0]
    for i, t in enumerate(sg.tensors):
        if model.buffers[t.buffer].data is not None:
            assert plan.offsets[i] == ONLINE
    assert all(o % 16 == 0 for o in plan.offsets if o != ONLINE)
    assert plan.arena_bytes < 2 * 4096


def test_rewrite_keeps_the_model_and_carries_tflms_metadata() -> None:
    data = branchy_model()
    model = read_model(data)
    plan = plan_offline(model)
    out = rewrite(data, plan.order, plan.offsets)
    assert read_offsets(out) == plan.offsets
    new = read_model(out)
    assert [m.name.decode() for m in new.metadata] == [METADATA_NAME]
    words = np.frombuffer(bytes(new.buffers[new.metadata[0].buffer].data), "<i4")
    assert list(words[:3]) == [1, 1, len(model.subgraphs[0].tensors)]  # version, sgs, n
    # tensors, buffers and the operators themselves kept; only their order changed
    old_sg, new_sg = model.subgraphs[0], new.subgraphs[0]
    assert [t.name for t in new_sg.tensors] == [t.name for t in old_sg.tensors]
    assert [list(op.outputs) for op in new_sg.operators] == [
        list(old_sg.operators[k].outputs) for k in plan.order]
    for a, b in zip(model.buffers, new.buffers, strict=False):
        assert (a.data is None) == (b.data is None)
        if a.data is not None:
            assert bytes(a.data) == bytes(b.data)
    # rewriting again replaces the metadata instead of adding a second one
    again = rewrite(out, None, None)
    assert read_offsets(again) is None and not read_model(again).metadata


def test_weights_stay_16_byte_aligned() -> None:
    data = branchy_model()
    plan = plan_offline(read_model(data))
    out = rewrite(data, plan.order, plan.offsets)
    model = read_model(out)
    for b in model.buffers:
        if b.data is not None and len(b.data) > 4:
            at = out.find(bytes(b.data))
            assert at % 16 == 0, at


def test_reordered_model_needs_less_in_tflm_and_runs_bit_exact(tmp_path: Path) -> None:
    data = branchy_model()
    res = emit_tflite(data, "branchy", tmp_path)
    assert res.path == tmp_path / "branchy_nnopt.tflite" and res.path.is_file()
    assert res.arena_after < res.arena_before, res
    written = res.path.read_bytes()
    assert interpreter.min_arena(written) == res.arena_after
    steps = interpreter.random_inputs(data, seed=3)
    assert interpreter.outputs(written, res.arena_after, steps) == \
        interpreter.outputs(data, res.arena_before, steps)
    # the original does not load in the new arena: the gain is real
    assert not interpreter.loads(data, res.arena_after)


def test_optimize_emit_tflite_prints_and_reports_both_arenas(tmp_path: Path) -> None:
    model = SHIPPED / "swiftnet_like.tflite"
    proc = subprocess.run([sys.executable, "-m", "nnopt", "optimize", str(model), "--emit",
                           "tflite", "-o", str(tmp_path), "--table", "none"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "swiftnet_like_report.json").read_text())
    before, after = report["tflm_arena_bytes_before"], report["tflm_arena_bytes_after"]
    assert after < before, report["tflm_emit"]
    assert report["tflm_emit"]["chosen"] == OFFLINE
    assert f"{before:,} B before, {after:,} B after" in proc.stdout
    assert (tmp_path / "swiftnet_like_nnopt.tflite").is_file()
    assert not list(tmp_path.glob("*_model.c"))  # only what --emit asked for


def test_onnx_is_refused_with_a_hint(tmp_path: Path) -> None:
    model = SHIPPED / "lenet5_b_qdq.onnx"
    proc = subprocess.run([sys.executable, "-m", "nnopt", "optimize", str(model), "--emit",
                           "tflite", "-o", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode != 0
    assert "ONNX" in proc.stderr and "hint:" in proc.stderr.lower()
    assert "Traceback" not in proc.stderr


def _never_worse(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    if not interpreter.loads(data, interpreter.MAX_ARENA >> 4):
        pytest.skip("the tflite-micro interpreter does not run this model (float16 weights "
                    "or an operator TFLM lacks): nothing to compare with")
    res = emit_tflite(data, path.stem, tmp_path, time_budget_s=2.0)
    if res.path is None:  # nothing written: said why, and nothing is in the directory
        assert res.notes and not list(tmp_path.glob("*.tflite"))
        return
    assert res.arena_after <= res.arena_before, res
    written = res.path.read_bytes()
    assert interpreter.loads(written, res.arena_after)
    steps = interpreter.random_inputs(data, seed=11)
    assert interpreter.outputs(written, res.arena_after, steps) == \
        interpreter.outputs(data, res.arena_before, steps)


SHIPPED_TFLITE = sorted(p.name for p in SHIPPED.glob("*.tflite"))
SHARED_TFLITE = sorted(str(p.relative_to(MODELS)) for p in MODELS.glob("*/*.tflite"))


@pytest.mark.parametrize("name", SHIPPED_TFLITE)
def test_never_worse_on_shipped_models(name: str, tmp_path: Path) -> None:
    _never_worse(SHIPPED / name, tmp_path)


@pytest.mark.parametrize("rel", SHARED_TFLITE or ["(none)"])
def test_never_worse_on_shared_models(rel: str, tmp_path: Path) -> None:
    if not SHARED_TFLITE:
        pytest.skip(f"shared models not found at {MODELS}")
    _never_worse(MODELS / rel, tmp_path)


def test_cfiles_header_and_data_for_zephyrs_tflm(tmp_path: Path) -> None:
    """nnopt.tflm.cfiles (nnopt_add_tflm_model's second step): the arena macros from the
    report, both models in flash, 16-byte aligned, with their lengths."""
    import shutil

    from nnopt.tflm.cfiles import main as cfiles_main

    data = branchy_model()
    model = tmp_path / "branchy.tflite"
    model.write_bytes(data)
    res = emit_tflite(data, "branchy", tmp_path)
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"tflm_emit": res.to_json()}))
    assert cfiles_main([str(report), str(model), str(tmp_path), "branchy"]) == 0
    h = (tmp_path / "branchy_tflm.h").read_text()
    assert f"#define BRANCHY_TFLM_ARENA_BYTES {res.arena_after}u" in h
    assert f"#define BRANCHY_TFLM_ARENA_BYTES_BEFORE {res.arena_before}u" in h
    assert "#define BRANCHY_TFLM_NNOPT 1" in h
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no host gcc")
    main_c = tmp_path / "main.c"
    main_c.write_text('#include <stdio.h>\n#include <stdint.h>\n#include "branchy_tflm.h"\n'
                      "int main(void) { printf(\"%u %u %d\\n\", branchy_tflm_model_len, "
                      "branchy_tflm_original_len, (int)((uintptr_t)branchy_tflm_model % 16));"
                      " fwrite(branchy_tflm_model, 1, branchy_tflm_model_len, stderr);"
                      " return 0; }\n")
    exe = tmp_path / "t"
    subprocess.run([cc, "-I", str(tmp_path), str(main_c), str(tmp_path / "branchy_tflm_data.c"),
                    "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, check=True)
    assert run.stdout.decode().split() == [str(len(res.path.read_bytes())), str(len(data)), "0"]
    assert run.stderr == res.path.read_bytes()
    # no usable model: a report without tflm_emit is refused with a message
    report.write_text("{}")
    assert cfiles_main([str(report), str(model), str(tmp_path), "branchy"]) == 1
