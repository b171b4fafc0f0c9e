"""``grouped_flat``'s filter tiles loaded in vectors (``filter_vector``'s W_VEC: a group's
run of 8 channels in one 16-byte load) against two bytes at a time (W_VEC=1, as before).

    python3 validation/gpu/probe_filter_vectors.py OUT.csv [DTYPE [TILES]]

For each issue-6 grouped layer, the TILES (default 1) fastest (BLOCK_M, BLOCK_N, num_warps)
tiles of the family in the sweep CSVs (data/sweeps/h100/{train,holdout}.csv), at the
tile's fastest ITEMS there, timed both ways in turn
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
from convdispatch.kernels.grouped_packed import filter_vector
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
        cand = Candidate("grouped_flat", cfg)

        def side(vector, cand=cand):
            def fn():
                # (the launch reads the module's name: W_VEC=1 is the kernel as it was)
                grouped_flat.filter_vector = filter_vector if vector else _scalar
                launch_mod.launch(cand, x, w, b, g, outs[vector])
            return fn

        try:
            errs = {}
            for vector in (False, True):
                outs[vector].fill_(float("nan"))
                side(vector)()
                torch.cuda.synchronize()
                errs[vector] = rel_err(outs[vector], ref)
            old, new = paired_graph_times(side(False), side(True), REP_MS)
        except Exception as e:  # noqa: BLE001 - a config that fails is recorded by its absence
            print(f"{p.id} {cand}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        finally:
            grouped_flat.filter_vector = filter_vector
        rows.append(dict(problem_id=p.id, config=str(cand.config), swept_us=swept,
                         scalar_us=round(old * 1e3, 3), vector_us=round(new * 1e3, 3),
                         err_scalar=errs[False], err_vector=errs[True],
                         same_bits=bool(torch.equal(outs[False], outs[True]))))
        print(f"{p.id} {cand.config}: scalar {old * 1e3:.1f} us, vector {new * 1e3:.1f} us "
              f"(x{old / new:.3f}), errors {errs[False]:.1e} {errs[True]:.1e}", flush=True)
    return rows


def _scalar(call, sw) -> int:
    return 1


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    tiles = fastest_tiles({p.id for p in grouped}, "grouped_flat", count)
    stream_rows(out, (layer_rows(p, i, tiles.get(p.id, [])) for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
