"""``grouped_flat``'s filter tiles loaded a plane at once (every tap's loads in flight
before the first store) against one tap after another (a store and a barrier between
consecutive taps' loads: nine round trips to L2 a plane).

    python3 validation/gpu/probe_filter_burst.py OUT.csv [DTYPE [TILES]]

For each issue-6 grouped layer, the TILES (default 2) fastest (BLOCK_M, BLOCK_N, num_warps)
tiles of the family in the sweep CSVs (data/sweeps/h100/{train,holdout}.csv), at the
tile's fastest ITEMS there and at ITEMS=2, timed both ways in turn
(``bench_layers.paired_graph_times``: CUDA-graph replays, L2 flushed, each side's lowest
of three medians); both outputs checked against torch in float32.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from convdispatch.dispatcher import launch as launch_mod
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.bench_layers import (
    category,
    conv_args,
    make_tensors,
    paired_graph_times,
    rel_err,
    suite_problems,
)
from convdispatch.validation.probe_io import fastest_tiles, stream_rows

REP_MS = 5


def layer_rows(p, i: int, tiles: list[tuple[Config, float]]) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    outs = {False: torch.empty_like(ref, dtype=x.dtype), True: torch.empty_like(ref, dtype=x.dtype)}
    rows = []
    for cfg, swept in tiles:
        for items in sorted({cfg["ITEMS"], 2}):
            cand = Candidate("grouped_flat", Config({**cfg, "ITEMS": items}))

            def side(burst, cand=cand):
                def fn():
                    grouped_flat.BURST = burst
                    launch_mod.launch(cand, x, w, b, g, outs[burst])
                return fn

            try:
                errs = {}
                for burst in (False, True):
                    outs[burst].fill_(float("nan"))
                    side(burst)()
                    torch.cuda.synchronize()
                    errs[burst] = rel_err(outs[burst], ref)
                old, new = paired_graph_times(side(False), side(True), REP_MS)
            except Exception as e:  # noqa: BLE001 - a config that fails is recorded by its absence
                print(f"{p.id} {cand}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            rows.append(dict(problem_id=p.id, config=str(cand.config), swept_us=swept,
                             tap_us=round(old * 1e3, 3), burst_us=round(new * 1e3, 3),
                             err_tap=errs[False], err_burst=errs[True],
                             same_bits=bool(torch.equal(outs[False], outs[True]))))
            print(f"{p.id} {cand.config}: tap by tap {old * 1e3:.1f} us, burst "
                  f"{new * 1e3:.1f} us (x{old / new:.3f}), errors {errs[False]:.1e} "
                  f"{errs[True]:.1e}", flush=True)
    grouped_flat.BURST = False
    return rows


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    tiles = fastest_tiles({p.id for p in grouped}, "grouped_flat", count)
    stream_rows(out, (layer_rows(p, i, tiles.get(p.id, [])) for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
