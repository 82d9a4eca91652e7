"""Loading test models as graphs."""

from __future__ import annotations

import pytest

from nnopt.errors import ModelError
from nnopt.frontend import validate
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import Graph


def load_past_import_checks(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Graph:
    """The graph of ``data``. Import already refuses what no converter writes
    (:mod:`nnopt.frontend.validate`: zero point out of range, rescale >= 2**31); a
    kernel's own check still guards graphs built otherwise, so where import refuses,
    this is the graph the importer would have built without that check."""
    try:
        return load_model_bytes(data)
    except ModelError:
        with monkeypatch.context() as m:
            m.setattr(validate, "check_quantization", lambda g, source: None)
            return load_model_bytes(data)
