"""``grouped_flat``'s phase images at their copied length against their power-of-two
allocation, config by config, on the issue-6 suite's grouped layers.

    python3 validation/gpu/probe_exact_phases.py OUT.csv [DTYPE [JOBS]]

A buffer holds NPH phase images of XP rows; XP is the copied length XCOPY rounded up to a
power of two and NPH stride_h x stride_w rounded up the same way (``flat_grid.flat_consts``).
With ``exact`` both are the values themselves: ResNeXt-50 layer2.0's 32-wide WGMMA tile
keeps 160 rows a phase image where it allocated 256 (100 KB of shared memory where it took
154 KB: two programs an SM where one was). Only the rows whose shared layout holds at any
row count take it: the WGMMA tiles' swizzled rows and the 16-channel rows; the 32-channel
planes of mma.sync are left out.

Every such config the family offers on each layer (as the rules choose them, from the
power-of-two sizes) is launched both ways: each output checked against torch in float32
(poisoned first); both timed with ``bench_layers.paired_graph_times`` (CUDA-graph replays,
L2 flushed, each side the lowest of three rounds, interleaved). cuDNN is timed once a
layer with the same timer. Workers compile and check first (JOBS processes), so that the
timing process finds every kernel in Triton's cache.
"""

from __future__ import annotations

import sys

import torch
from convdispatch.dispatcher.launch import run_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.flat_grid import flat_consts
from convdispatch.validation.bench_layers import (
    bench_graph,
    conv_args,
    layer_tensors,
    paired_graph_times,
    torch_conv,
)
from convdispatch.validation.probe_io import (
    grouped_suite as layers,
)
from convdispatch.validation.probe_io import (
    launch_error,
    launch_passed,
    probe_argv,
    probe_grouped_suite,
    tile_groups,
)

REP_MS = 5
_FLAT_ITEM = grouped_flat.flat_item


def set_exact(exact: bool) -> None:
    """Launch grouped_flat with exact phase images (or the power-of-two ones)."""
    def item(geom, cfg):
        return flat_consts(geom, cfg["BLOCK_M"], reuse=grouped_flat.row_reuse(geom, cfg),
                           exact=True)

    grouped_flat.flat_item = item if exact else _FLAT_ITEM


def configs(p) -> list:
    """The layer's grouped_flat candidates whose rows can be exact."""
    fam = grouped_flat.GroupedFlatFamily()
    spec = spec_of(torch.device("cuda"))
    return [c for c in fam.candidates(trim_dead_taps(p.geom), spec)
            if c.config.get("WGMMA") or c.config["BLOCK_N"] == 16]


def check(task: tuple) -> list[tuple]:
    """Worker: compile and check layer ``task[1]``'s configs task[2:] both ways:
    (layer, config id, exact, rel err or None, error)."""
    dtype, i, ids = task
    p = layers(dtype)[i]
    x, w, b, ref = layer_tensors(p.geom, i)
    out = []
    for cand in (c for c in configs(p) if c.id in ids):
        for exact in (False, True):
            set_exact(exact)
            out.append(launch_error((i, cand.id, exact),
                                    lambda y, c=cand: run_candidate(c, x, w, b, p.geom, out=y),
                                    ref, x.dtype))
    set_exact(False)
    return out


def layer_rows(i: int, p, checked: dict) -> list[dict]:
    g = p.geom
    x, w, b, ref = layer_tensors(p.geom, i)
    cudnn_ms = bench_graph(lambda: torch_conv(g)(x, w, b, **conv_args(g)), REP_MS)
    buf = torch.empty_like(ref, dtype=x.dtype)
    rows = []
    for cand in configs(p):
        errs = {e: checked.get((i, cand.id, e)) for e in (False, True)}
        row = dict(problem_id=p.id, config=cand.id, cudnn_us=round(cudnn_ms * 1e3, 3),
                   err_pow2=errs[False][0], err_exact=errs[True][0],
                   error=errs[False][1] or errs[True][1], pow2_us=None, exact_us=None,
                   smem_pow2=grouped_flat.GroupedFlatFamily().smem_bytes(g, cand.config))
        ok = all(launch_passed(v[0]) for v in errs.values())
        if ok:
            def run(exact, c=cand):
                set_exact(exact)
                run_candidate(c, x, w, b, g, out=buf)

            # (A graph is captured from one call: the layout is fixed at capture.)
            a, e = paired_graph_times(lambda: run(False), lambda: run(True), REP_MS)
            set_exact(False)
            row.update(pow2_us=round(a * 1e3, 3), exact_us=round(e * 1e3, 3))
        rows.append(row)
    done = [r for r in rows if r["exact_us"]]
    if done:
        b_old = min(done, key=lambda r: r["pow2_us"])
        b_new = min(done, key=lambda r: r["exact_us"])
        print(f"{p.id}: cuDNN {cudnn_ms * 1e3:.1f} us; best pow2 {b_old['pow2_us']:.1f} "
              f"({b_old['config']}); best exact {b_new['exact_us']:.1f} ({b_new['config']}); "
              f"{len(done)} of {len(rows)} configs", flush=True)
    return rows


def main() -> None:
    out, dtype, jobs, shard = probe_argv(sys.argv, shard_at=None)
    probe_grouped_suite(out, dtype, jobs, shard,
                        lambda i, p: [(dtype, i, ids) for ids in tile_groups(configs(p))],
                        check, layer_rows)


if __name__ == "__main__":
    main()
