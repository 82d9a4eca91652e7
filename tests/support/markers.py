"""Skip markers for tests that need tools outside Python."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

#: Firmware tests under QEMU need both the emulator and the cross compiler.
needs_qemu = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm / arm-none-eabi-gcc not installed")


def slow_on_qemu(test: F) -> F:
    """A slow firmware test under QEMU: marked ``qemu`` and ``slow``, skipped without
    the emulator or the cross compiler."""
    marked: F = pytest.mark.qemu(pytest.mark.slow(needs_qemu(test)))
    return marked
