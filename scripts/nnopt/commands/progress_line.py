"""Progress on stderr for the commands: one-line messages, a redrawn planning line, and
the stages of building and emulating firmware with their elapsed time (:class:`Stages`).

``nnopt: planning 571 ops ... in-place candidates 40/123`` is redrawn in place (``\\r``)
only when stderr is a terminal; in a pipe or a log only the one-line messages appear,
and ``--quiet`` silences both. Passes never print: the planner calls the
:class:`ProgressLine` it was given (``PlanOptions.progress``).
"""

from __future__ import annotations

import sys
import threading
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


class Stages:
    """Progress of long work done in stages the command does not see inside (building
    the firmware, emulating it): each stage starts with a ``nnopt: <stage>`` message;
    on a terminal the line then shows the seconds elapsed, redrawn every ``interval_s``
    by a background thread, so a minute-long build never looks hung. Silent with
    ``--quiet``. A context manager: leaving it stops the thread and ends the line."""

    def __init__(self, stream: TextIO | None = None, *, interval_s: float = 1.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self._stage = ""
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    @property
    def live(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty()) and not Messages.quiet

    def __call__(self, stage: str) -> None:
        """Start ``stage`` (the previous one is done)."""
        if Messages.quiet:
            return
        with self._lock:
            self._end_line()
            self._stage, self._t0 = stage, time.monotonic()
            self.stream.write(f"nnopt: {stage}")
            self._drawn = True
            if not self.live:
                self.stream.write("\n")
                self._drawn = False
            self.stream.flush()
        if self.live and self._thread is None:
            self._thread = threading.Thread(target=self._tick, name="nnopt-progress",
                                             daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                if self._drawn:
                    secs = time.monotonic() - self._t0
                    self.stream.write(f"\rnnopt: {self._stage} ... {secs:.0f} s")
                    self.stream.flush()

    def _end_line(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self._end_line()
            self.stream.flush()

    def __enter__(self) -> Stages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
