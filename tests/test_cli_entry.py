"""The command line as a newcomer first meets it: ``python -m nnopt`` and a wrong path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _nnopt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nnopt", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    p = _nnopt("--help", cwd=tmp_path)
    assert p.returncode == 0
    assert "optimize" in p.stdout and "run" in p.stdout


def test_missing_model_names_path_and_points_at_shipped_model(tmp_path: Path) -> None:
    p = _nnopt("optimize", "kws_ref_model.tflite", "--table", "none", cwd=tmp_path)
    assert p.returncode == 1
    assert "model file not found: kws_ref_model.tflite" in p.stderr
    assert "ships with nnopt" in p.stderr and "models/kws_ref_model.tflite" in p.stderr
    assert "Traceback" not in p.stderr
    p = _nnopt("optimize", "no/such.tflite", cwd=tmp_path)
    assert p.returncode == 1
    assert f"relative paths start at {tmp_path}" in p.stderr


def test_reader_closing_the_pipe_is_not_an_error(tmp_path: Path) -> None:
    """`nnopt ops | head -1`: the listing stops quietly when its reader goes away (here
    before the first line: the interpreter is still starting when the pipe closes)."""
    p = subprocess.Popen([sys.executable, "-m", "nnopt", "ops"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=tmp_path)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=120) == 0, err
    assert "internal error" not in err and "Traceback" not in err
