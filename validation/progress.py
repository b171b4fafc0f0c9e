"""A progress bar with rate and ETA: tqdm when installed, else plain lines on stderr."""

from __future__ import annotations

import sys
import time


class Progress:
    """Counts units (candidates) towards ``total``; ``quiet`` prints nothing."""

    def __init__(self, total: int, *, unit: str = "cand", quiet: bool = False,
                 desc: str = "sweep") -> None:
        self.total, self.unit, self.quiet = int(total), unit, quiet
        self.done = 0
        self._t0 = time.monotonic()
        self._bar = None
        if quiet:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=self.total, unit=unit, desc=desc, dynamic_ncols=True,
                         smoothing=0.1, file=sys.stderr)

    def update(self, n: int, note: str = "") -> None:
        self.done += n
        if self.quiet:
            return
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(n)
            return
        el = time.monotonic() - self._t0
        rate = self.done / el if el > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        eta_s = "?" if eta == float("inf") else f"{eta / 60:.1f} min"
        print(f"[{self.done}/{self.total} {self.unit}] {rate:.2f} {self.unit}/s, ETA {eta_s}"
              f"{'  ' + note if note else ''}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
