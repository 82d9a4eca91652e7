"""bench_firmware.py's cache of TFLM measurements (benchmarks/tflm_cache.py): its key,
its storage and how bench_firmware uses it, with no TFLM source, build or QEMU."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_firmware as bf  # noqa: E402
import fw_tflm as ft  # noqa: E402
import tflm_cache as tc  # noqa: E402
import tflm_firmware as tf  # noqa: E402


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_tree_digest_follows_content_not_times(tmp_path: Path) -> None:
    a = _tree(tmp_path / "a", {"x.c": "int x;", "sub/y.h": "#define Y 1", ".git/HEAD": "1"})
    b = _tree(tmp_path / "b", {"x.c": "int x;", "sub/y.h": "#define Y 1", ".git/HEAD": "2"})
    os.utime(b / "x.c", (1, 1))
    assert tc.tree_digest(a) == tc.tree_digest(b)  # .git and times do not count
    c = _tree(tmp_path / "c", {"x.c": "int x;", "sub/y.h": "#define Y 2"})
    d = _tree(tmp_path / "d", {"x.c": "int x;", "sub/z.h": "#define Y 1"})
    e = _tree(tmp_path / "e", {"x.c": "int x;", "sub/y.h": "#define Y 1", "new.c": ""})
    digests = {tc.tree_digest(p) for p in (a, c, d, e)}
    assert len(digests) == 4  # content, name, an added file


def _key(**over: Any) -> str:
    args: dict[str, Any] = {
        "variant": "cmsis_nn", "make_args": ["TARGET=cortex_m_generic"],
        "model": b"model", "inputs": [b"in0"], "invocations": 1, "expected": [b"out0"],
        "sources": {"tflm": "t", "cmsis_nn": "n", "cmsis_core": "c"},
        "harness": {"files": {"tflm_main.c": "h"}, "flags": ["-mcpu=cortex-m7"]},
        "tools": {"arm-none-eabi-g++": "12.2"},
    }
    args.update(over)
    key, parts = tc.measurement_key(**args)
    assert parts["format"] == tc.FORMAT and parts["model"] != "model"  # hashed, not kept
    return key


@pytest.mark.parametrize("change", [
    {"variant": "ref"},
    {"make_args": ["TARGET=cortex_m_generic", "OPTIMIZED_KERNEL_DIR=cmsis_nn"]},
    {"model": b"model2"},
    {"inputs": [b"in1"]},
    {"inputs": [b"in0", b""]},
    {"invocations": 4},
    {"expected": [b"out1"]},
    {"sources": {"tflm": "t2", "cmsis_nn": "n", "cmsis_core": "c"}},
    {"sources": {"tflm": "t", "cmsis_nn": "n2", "cmsis_core": "c"}},
    {"harness": {"files": {"tflm_main.c": "h2"}, "flags": ["-mcpu=cortex-m7"]}},
    {"harness": {"files": {"tflm_main.c": "h"}, "flags": ["-mcpu=cortex-m4"]}},
    {"tools": {"arm-none-eabi-g++": "13.1"}},
    {"core": "m4"},  # the same build measured on another core
])
def test_every_part_of_the_key_counts(change: dict[str, Any]) -> None:
    assert _key() == _key()
    assert _key(**change) != _key()


def test_harness_identity_names_the_harness_and_port() -> None:
    ident = tc.harness_identity(bf.M7_BOARD)
    assert {"tflm_harness.cc.in", "tflm_main.c", "tflm_firmware.py", "startup.c",
            "port.h"} <= set(ident["files"])
    assert "-mcpu=cortex-m7" in ident["flags"]
    assert ident["defines"]["NNRT_PORT_BAREMETAL"] == "1"


def test_harness_identity_of_each_core() -> None:
    """The M3 builds are keyed by their own port, flags and linker script; the M7's
    parts are those of the default target."""
    m7 = tc.harness_identity(bf.M7_BOARD)
    assert m7 == tc.harness_identity(bf.M7_BOARD, "qemu-m7")
    m3 = tc.harness_identity(bf.M3_BOARD, "qemu-m3")
    assert m3["flags"] != m7["flags"] and "-mcpu=cortex-m3" in m3["flags"]
    assert m3["linker_script"] != m7["linker_script"]


def test_an_entry_without_output_digests_still_loads(tmp_path: Path) -> None:
    cache = tc.ResultCache(tmp_path)
    cache.put("cd34", {}, _measurement())
    doc = (tmp_path / "cd" / "cd34.json").read_text().replace(
        '"outputs_sha256": null', '"_": 0').replace(',\n  "_": 0', "")
    (tmp_path / "cd" / "cd34.json").write_text(doc)
    assert "outputs_sha256" not in doc
    got = cache.get("cd34")
    assert got is not None and got.instructions == 123 and got.outputs_sha256 is None


def test_prepared_tree_gets_the_device_headers(tmp_path: Path) -> None:
    """Both cores' generic device headers are in the build tree, a tree prepared
    before one existed included."""
    static = {f"third_party_static/{d}/x": "" for d in ("flatbuffers", "gemmlowp", "ruy",
                                                          "kissfft")}
    src = tf.Sources(_tree(tmp_path / "tflm", {tf.MAKEFILE: "", **static}),
                     _tree(tmp_path / "cmsis_nn", {"b.c": "2"}),
                     _tree(tmp_path / "cmsis", {"CMSIS/Core/Include/core_cm7.h": "3"}))
    tree = tf.prepare_tree(src, tmp_path / "cache")
    dev = tree / tf.DOWNLOADS / "cmsis/Cortex_DFP/Device"
    m3 = dev / "ARMCM3/Include/ARMCM3.h"
    assert '#include "core_cm3.h"' in m3.read_text()
    assert '#include "core_cm7.h"' in (dev / "ARMCM7/Include/ARMCM7.h").read_text()
    m3.unlink()
    assert tf.prepare_tree(src, tmp_path / "cache") == tree
    assert m3.read_text() == tf.ARMCM3_H


def _measurement(n: int = 123) -> tc.Measurement:
    return tc.Measurement(instructions=n, rom_bytes=10, ram_bytes=20, arena_bytes=16,
                          code_bytes=5, stack_bytes=8, bit_exact=False,
                          error="output differs", measured_at="2026-12-02 05:00 UTC")


def test_cache_modes(tmp_path: Path) -> None:
    use = tc.ResultCache(tmp_path, "use")
    assert use.get("ab12") is None
    use.put("ab12", {"format": 1}, _measurement())
    assert use.get("ab12") == _measurement()
    assert use.get("ab13") is None
    refresh = tc.ResultCache(tmp_path, "refresh")
    assert refresh.get("ab12") is None  # measured again ...
    refresh.put("ab12", {}, _measurement(456))
    assert use.get("ab12") == _measurement(456)  # ... and stored
    off = tc.ResultCache(tmp_path / "off", "off")
    off.put("cd34", {}, _measurement())
    assert off.get("cd34") is None and not (tmp_path / "off").exists()
    (tmp_path / "ab" / "ab12.json").write_text("{not json")
    assert use.get("ab12") is None  # a damaged entry is measured again
    with pytest.raises(ValueError, match="unknown TFLM cache mode 'sometimes'"):
        tc.ResultCache(tmp_path, "sometimes")


class _NoLibrary(bf.TflmContext):
    def library(self, variant: str) -> tf.Library:
        raise AssertionError("a cache hit builds nothing")


def _context(tmp_path: Path, mode: str, cls: type[bf.TflmContext] = bf.TflmContext
             ) -> bf.TflmContext:
    src = tf.Sources(_tree(tmp_path / "tflm", {"a.cc": "1"}),
                     _tree(tmp_path / "cmsis_nn", {"b.c": "2"}),
                     _tree(tmp_path / "cmsis", {"CMSIS/Core/Include/core_cm7.h": "3"}))
    return cls(src, None, tmp_path / "cache",
               results=tc.ResultCache(tmp_path / "cache" / "results", mode))


def _measure(fw: bf.TflmContext, tmp_path: Path, expected: bytes = b"y") -> bf.Row:
    model = tmp_path / "m.tflite"
    if not model.is_file():
        model.write_bytes(b"tflite bytes")
    row = bf.Row(model="m", path="m.tflite", ops=1, macs=1)
    bf.measure_tflm(row, fw, "cmsis_nn", model, [b"x"], bf.Oracle([expected], ["|i1"]), 1,
                    tmp_path / "work")
    return row


def test_measure_tflm_stores_then_reuses(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[str] = []

    def fake_firmware(row: bf.Row, lib: tf.Library, *args: Any) -> bool:
        measured.append(lib.variant)
        row.tflm_cmsis_nn_instructions = 1_000 + len(measured)
        row.tflm_cmsis_nn_arena_bytes = 2_048
        row.tflm_cmsis_nn_bit_exact = True
        return True

    lib = tf.Library("cmsis_nn", tmp_path, tmp_path / "lib.a", ())
    monkeypatch.setattr(ft, "measure_tflm_firmware", fake_firmware)
    monkeypatch.setattr(bf.TflmContext, "library", lambda self, v: lib)
    first = _measure(_context(tmp_path, "use"), tmp_path)
    assert measured == ["cmsis_nn"] and not first.tflm_cmsis_nn_cached
    assert first.tflm_cmsis_nn_measured_at is not None
    again = _measure(_context(tmp_path, "use", _NoLibrary), tmp_path)
    assert measured == ["cmsis_nn"]  # from the cache
    assert again.tflm_cmsis_nn_cached
    assert (again.tflm_cmsis_nn_instructions, again.tflm_cmsis_nn_arena_bytes,
            again.tflm_cmsis_nn_bit_exact) == (1_001, 2_048, True)
    assert again.tflm_cmsis_nn_measured_at == first.tflm_cmsis_nn_measured_at
    assert "TFLM from the cache ⁸, measured " + str(first.tflm_cmsis_nn_measured_at) \
        in bf.notes(again)
    other = _measure(_context(tmp_path, "use"), tmp_path, expected=b"z")
    assert measured == ["cmsis_nn"] * 2 and other.tflm_cmsis_nn_instructions == 1_002
    fresh = _measure(_context(tmp_path, "refresh"), tmp_path)
    assert measured == ["cmsis_nn"] * 3 and not fresh.tflm_cmsis_nn_cached
    assert _measure(_context(tmp_path, "use"), tmp_path).tflm_cmsis_nn_instructions == 1_003
    fw = _context(tmp_path, "use")
    (tmp_path / "tflm" / "a.cc").write_text("changed")  # another TFLM source
    tc.tree_digest.cache_clear()  # (digested once per run)
    _measure(fw, tmp_path)
    assert len(measured) == 4


def test_qemu_failures_are_not_stored(tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def failing(row: bf.Row, lib: tf.Library, *args: Any) -> bool:
        calls.append(1)
        row.tflm_cmsis_nn_error = "firmware: QEMU timed out"
        return False

    lib = tf.Library("cmsis_nn", tmp_path, tmp_path / "lib.a", ())
    monkeypatch.setattr(ft, "measure_tflm_firmware", failing)
    monkeypatch.setattr(bf.TflmContext, "library", lambda self, v: lib)
    for _ in range(2):
        row = _measure(_context(tmp_path, "use"), tmp_path)
        assert not row.tflm_cmsis_nn_cached
    assert len(calls) == 2
