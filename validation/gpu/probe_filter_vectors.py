"""``grouped_flat``'s filter tiles loaded in vectors (``filter_vector``'s W_VEC: a group's
run of 8 channels in one 16-byte load) against two bytes at a time (W_VEC=1, as before).

    python3 validation/gpu/probe_filter_vectors.py OUT.csv [DTYPE [TILES]]

For each issue-6 grouped layer, the TILES (default 1) fastest (BLOCK_M, BLOCK_N, num_warps)
tiles of the family in the sweep CSVs (data/sweeps/h100/{train,holdout}.csv), at the
tile's fastest ITEMS there, timed both ways in turn (``switch_probe.switch_pairs``:
CUDA-graph replays, L2 flushed, each side's lowest of three medians); both outputs checked
against torch in float32.
"""

from __future__ import annotations

import sys

from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import Candidate
from convdispatch.kernels.grouped_packed import filter_vector
from convdispatch.validation.bench_layers import category, suite_problems
from convdispatch.validation.probe_io import fastest_tiles, stream_rows
from convdispatch.validation.switch_probe import switch_pairs

REP_MS = 5


def vectors(on: bool) -> None:
    # (the launch reads the module's name: W_VEC=1 is the kernel as it was)
    grouped_flat.filter_vector = filter_vector if on else (lambda call, sw: 1)


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    tiles = fastest_tiles({p.id for p in grouped}, "grouped_flat", count)
    stream_rows(out, (
        switch_pairs(p, i, [(Candidate("grouped_flat", cfg), {"swept_us": swept})
                            for cfg, swept in tiles.get(p.id, [])],
                     vectors, ("scalar", "vector"), REP_MS)
        for i, p in enumerate(grouped)))
    vectors(True)


if __name__ == "__main__":
    main()
