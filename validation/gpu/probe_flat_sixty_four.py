"""grouped_flat's 64-wide WGMMA tiles against its 32- and 16-wide ones and the shipped
choice, on the issue-6 suite's grouped layers (device call 310).

    python3 validation/gpu/probe_flat_sixty_four.py OUT.csv [DTYPE [JOBS [I/N]]]

A 64-wide tile copies 128 bytes a pixel where a 32-wide one copies 64 (a copy-only kernel
moved the ResNeXt-50 layers' phase images in 5-9% less time so, call 291), and holds and
multiplies its filter tiles' diagonal blocks alone (``grouped_flat.diag_blocks``), so its
matrix work is that of the narrower tiles. Configs a layer: every 64-wide one the family
offers (``wide``), the shipped model's choice (``shipped``, any family) and call 302's
``FASTEST`` fastest offered WGMMA configs of the narrower tiles (``fastest``). Workers
compile and check each against torch in float32 (poisoned outputs; ``JOBS`` processes, a
compile a tile: ITEMS is a run-time argument); a layer's configs are then timed in three
interleaved rounds (forward, backward, forward; the suite's timer: CUDA-graph replays, L2
flushed, median), each the lowest of its rounds. Layers i with i % N == I.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from convdispatch.dispatcher import decide
from convdispatch.dispatcher.launch import run_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_layers import (
    bench_graph,
    conv_args,
    layer_tensors,
    torch_conv,
)
from convdispatch.validation.probe_io import (
    fastest_configs,
    launch_error,
    launch_passed,
    probe_argv,
    probe_grouped_suite,
    tile_groups,
)
from convdispatch.validation.probe_io import (
    grouped_suite as layers,
)

REP_MS = 5
FASTEST = 3
SPACE = [Path(f"validation/results/filter_async_h200/call302/space_{i}.csv") for i in (0, 1)]
FAM = grouped_flat.GroupedFlatFamily()


def configs(p) -> list[tuple]:
    """(candidate, how it came: 'shipped', 'fastest' or 'wide') of layer ``p``."""
    spec = spec_of(torch.device("cuda"))
    offered = {c.id: c for c in FAM.candidates(trim_dead_taps(p.geom), spec)}
    shipped = decide(p.geom, spec).candidate
    out = {shipped.id: (shipped, "shipped")}
    for cid in [c for c in fastest_configs(SPACE, p.id) if c in offered][:FASTEST]:
        out.setdefault(cid, (offered[cid], "fastest"))
    for cid, c in offered.items():
        if c.config["BLOCK_N"] == grouped_flat.FLAT_WIDE:
            out.setdefault(cid, (c, "wide"))
    return list(out.values())


def check(task: tuple) -> list[tuple]:
    """Worker: compile and check layer ``task[1]``'s configs ``task[2]`` (one tile):
    (layer, config id, rel err or None, error)."""
    dtype, i, ids = task
    p = layers(dtype)[i]
    x, w, b, ref = layer_tensors(p.geom, i)
    return [launch_error((i, cand.id), lambda y, c=cand: run_candidate(c, x, w, b, p.geom, out=y),
                         ref, x.dtype)
            for cand, _ in configs(p) if cand.id in ids]


def layer_rows(i: int, p, checked: dict) -> list[dict]:
    g = p.geom
    x, w, b, ref = layer_tensors(p.geom, i)
    cudnn_ms = bench_graph(lambda: torch_conv(g)(x, w, b, **conv_args(g)), REP_MS)
    buf = torch.empty_like(ref, dtype=x.dtype)
    live = trim_dead_taps(g)
    rows, ok = [], []
    for cand, how in configs(p):
        err, msg = checked.get((i, cand.id), (None, "not checked"))
        flat = cand.family == FAM.name
        rows.append(dict(problem_id=p.id, config=cand.id, how=how,
                         block_n=cand.config.get("BLOCK_N"), tma=int(bool(cand.config.get("TMA"))),
                         diag=grouped_flat.diag_blocks(live, cand.config, False) if flat else "",
                         smem=FAM.smem_bytes(live, cand.config) if flat else "",
                         programs=(FAM.packs(live, cand.config) * FAM.pixel_tiles(live, cand.config)
                                   if flat else ""),
                         cudnn_us=round(cudnn_ms * 1e3, 3), err=err, error=msg, us=None))
        if launch_passed(err):
            ok.append((cand, rows[-1]))
    times: dict[str, list[float]] = {c.id: [] for c, _ in ok}
    for order in (ok, ok[::-1], ok):
        for cand, _ in order:
            times[cand.id].append(bench_graph(
                lambda c=cand: run_candidate(c, x, w, b, g, out=buf), REP_MS) * 1e3)
    for cand, row in ok:
        row["us"] = round(min(times[cand.id]), 3)
    done = [r for r in rows if r["us"]]
    if done:
        def best(how):
            return min((r for r in done if r["how"] in how), key=lambda r: r["us"], default=None)

        ship, narrow, wide = best(("shipped",)), best(("shipped", "fastest")), best(("wide",))
        print(f"{p.id}: cuDNN {cudnn_ms * 1e3:.1f} us; shipped "
              f"{ship['us'] if ship else float('nan'):.2f}; best narrower "
              f"{narrow['us'] if narrow else float('nan'):.2f}; best 64-wide "
              f"{wide['us'] if wide else float('nan'):.2f}"
              f"{' (' + wide['config'] + ')' if wide else ''}; {len(done)} of {len(rows)}",
              flush=True)
    return rows


def main() -> None:
    out, dtype, jobs, shard = probe_argv(sys.argv)
    probe_grouped_suite(out, dtype, jobs, shard,
                        lambda i, p: [(dtype, i, ids)
                                      for ids in tile_groups([c for c, _ in configs(p)])],
                        check, layer_rows)


if __name__ == "__main__":
    main()
