"""samples/swapnn/fm_model.py: the feature-map scenario's model and expected outputs,
written at configure time with only this repository's scripts/ on PYTHONPATH (as
samples/swapnn/CMakeLists.txt runs it): a sample builds its model with the package's
builder (nnopt.testing.big_models), never with tests/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "samples" / "swapnn" / "fm_model.py"


def test_no_sample_reaches_into_tests() -> None:
    """No sample puts tests/ on a path or imports the tests' support package."""
    bad = re.compile(r"(/tests\b|\bfrom support\b|\bimport support\b)")
    hits = [f"{p.relative_to(REPO)}:{i}" for p in sorted((REPO / "samples").rglob("*"))
            if p.is_file() and p.suffix in {".py", ".txt", ".cmake", ".yaml", ".sh"}
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            if bad.search(line)]
    assert not hits, hits


def test_fm_model_script_runs_with_scripts_only(tmp_path: Path) -> None:
    pytest.importorskip("tflite_micro", reason="the oracle (tflite-micro) is not installed")
    from nnopt.testing.harness import run_tflm

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO / "scripts")
    model, header = tmp_path / "m.tflite", tmp_path / "expected.h"
    r = subprocess.run([sys.executable, str(SCRIPT), str(model), str(header),
                        "--inferences", "2"], env=env, capture_output=True, text=True,
                       check=False, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import fm_model  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(SCRIPT.parent))
    data = model.read_bytes()
    assert data == fm_model.build_model()  # fixed seed: the same model every time
    text = header.read_text()
    rows = re.findall(r"\{([-\d, ]+)\},", text)
    assert len(rows) == 2
    for k, row in enumerate(rows):
        out, _ = run_tflm(data, [fm_model.firmware_input(k)])
        want = out[0].astype(np.int8).reshape(-1).tolist()
        assert [int(v) for v in row.split(",")] == want
