"""Progress on stderr for the commands: one-line messages and a redrawn planning line.

``nnopt: planning 571 ops ... in-place candidates 40/123`` is redrawn in place (``\\r``)
only when stderr is a terminal; in a pipe or a log only the one-line messages appear,
and ``--quiet`` silences both. Passes never print: the planner calls the
:class:`ProgressLine` it was given (``PlanOptions.progress``).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressLine:
    """``(stage, done, total)`` callback drawing ``nnopt: <prefix> ... <stage> d/t``."""

    def __init__(self, prefix: str, stream: TextIO | None = None, *,
                 interval_s: float = 0.1) -> None:
        self.prefix = prefix
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self._last = -1.0
        self._width = 0

    @property
    def live(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if now - self._last < self.interval_s and done not in (0, total):
            return  # redraw at most every interval (first and last always)
        self._last = now
        text = f"nnopt: {self.prefix} ... {stage} {done}/{total}"
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = max(self._width, len(text))

    def close(self) -> None:
        """Erase the line (the report follows on stdout)."""
        if self._width and self.live:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self._width = 0


class Messages:
    """The commands' ``nnopt: ...`` lines on stderr, silenced by ``--quiet``."""

    quiet = False

    @classmethod
    def say(cls, msg: str) -> None:
        if not cls.quiet:
            print(f"nnopt: {msg}", file=sys.stderr, flush=True)
