"""Skip markers for tests that need tools outside Python."""

from __future__ import annotations

import shutil

import pytest

#: Firmware tests under QEMU need both the emulator and the cross compiler.
needs_qemu = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm / arm-none-eabi-gcc not installed")
