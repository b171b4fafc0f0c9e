"""``grouped_flat``'s filter tiles loaded a plane at once (every tap's loads in flight
before the first store) against one tap after another (a store and a barrier between
consecutive taps' loads: nine round trips to L2 a plane).

    python3 validation/gpu/probe_filter_burst.py OUT.csv [DTYPE [TILES]]

For each issue-6 grouped layer, the TILES (default 2) fastest (BLOCK_M, BLOCK_N, num_warps)
tiles of the family in the sweep CSVs (data/sweeps/h100/{train,holdout}.csv), at the
tile's fastest ITEMS there and at ITEMS=2, timed both ways in turn (CUDA-graph replays,
L2 flushed, each side's lowest of three medians); both outputs checked against torch in
float32. (Its steps now come from ``probe_io.fastest_tiles`` and
``switch_probe.switch_pairs``, the same as when it ran.)
"""

from __future__ import annotations

import sys

from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.bench_layers import category, suite_problems
from convdispatch.validation.probe_io import fastest_tiles, stream_rows
from convdispatch.validation.switch_probe import switch_pairs

REP_MS = 5


def layer_rows(p, i: int, tiles: list[tuple[Config, float]]) -> list[dict]:
    cands = [(Candidate("grouped_flat", Config({**cfg, "ITEMS": items})), {"swept_us": swept})
             for cfg, swept in tiles for items in sorted({cfg["ITEMS"], 2})]
    return switch_pairs(p, i, cands, lambda on: setattr(grouped_flat, "BURST", on),
                        ("tap", "burst"), REP_MS)


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    tiles = fastest_tiles({p.id for p in grouped}, "grouped_flat", count)
    stream_rows(out, (layer_rows(p, i, tiles.get(p.id, [])) for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
