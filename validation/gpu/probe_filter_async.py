"""``grouped_flat``'s filter tiles as cp.async copies (W_ASYNC: every plane in flight at
once) against loaded a plane at a time, and programs of one item (ITEMS=1), on the
issue-6 suite's grouped layers.

    python3 validation/gpu/probe_filter_async.py OUT.csv [DTYPE [JOBS [TOPK [I/N]]]]

TOPK 0: every config the family offers, with W_ASYNC only, each timed once (the fastest
config a layer over the whole space); I/N: the layers whose index is I modulo N (one
process a GPU).

Why: on the small 3D layers the kernel with neither its copies nor its mmas still took
6-8.6 us (call 289, validation/results/grouped_stages_h200/): a 3D filter's three planes
load one round trip after another before the first step, and ResNeXt3D-50 layer3.x at
batch 1 runs 32 programs (two items each) on 132 SMs.

Configs a layer: the shipped model's TOPK best-ranked grouped_flat candidates, call 288's
fastest (``stage_configs.csv``), the TMA twin of each WGMMA one the family offers, and,
where two items a program leave fewer programs than SMs, each of those tiles with ITEMS=1
(offered since call 298, to 3D convs; launched directly). Each is launched both ways,
W_ASYNC off and on (the same kernel twice where ``filter_async`` does not hold for it:
``derived.py`` leaves those rows out of its W_ASYNC ratios): outputs checked against torch
in float32 (poisoned first), times from ``bench_layers.paired_graph_times`` (CUDA-graph
replays, L2 flushed, each side the lowest of three rounds, interleaved). cuDNN is timed once
a layer with the same timer. Workers compile and check first (JOBS processes).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import torch
from convdispatch.dispatcher import decide
from convdispatch.dispatcher.launch import launch
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import spec_of
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
# W_ASYNC off and on (paired), or on only (TOPK 0: every config, the fastest a layer)
WAYS = {False: (False, True), True: (True,)}
STAGE_CONFIGS = Path("validation/results/grouped_stages_h200/stage_configs.csv")
_ASYNC = grouped_flat.filter_async
FAM = grouped_flat.GroupedFlatFamily()


def set_async(on: bool) -> None:
    """Launch grouped_flat with the filter tiles as cp.async copies where the rule allows
    (on) or loaded a plane at a time (off)."""
    grouped_flat.filter_async = _ASYNC if on else (lambda *args: False)


def _stage_configs(pid: str) -> list[str]:
    with open(STAGE_CONFIGS) as f:
        return [r["config"] for r in csv.DictReader(f) if r["problem_id"] == pid]


def configs(p, topk: int) -> list[tuple[Candidate, str]]:
    """(candidate, how it came) of layer ``p``: 'model', 'stage', 'tma' or 'items1'; with
    ``topk`` 0, every config the family offers ('all')."""
    spec = spec_of(torch.device("cuda"))
    g = trim_dead_taps(p.geom)
    offered = {c.id: c for c in FAM.candidates(g, spec)}
    if topk == 0:
        return [(c, "all") for c in offered.values()]
    # (Unseen configs, TMA and ITEMS=1 under the shipped model, rank last with score inf:
    # not the model's picks.)
    ranked = [c for c, s in decide(p.geom, spec).ranked
              if c.family == FAM.name and s != float("inf")]
    out = {c.id: (c, "model") for c in ranked[:topk]}
    for cid in _stage_configs(p.id):
        if cid in offered and cid not in out:
            out[cid] = (offered[cid], "stage")
    for c, _ in list(out.values()):
        if c.config.get("WGMMA"):
            twin = Candidate(FAM.name, Config(**{**c.config, "TMA": 1}))
            if twin.id in offered and twin.id not in out:
                out[twin.id] = (twin, "tma")
    for c, _ in list(out.values()):
        two = Config(**{**c.config, "ITEMS": 2})
        if FAM.pixel_tiles(g, two) * FAM.packs(g, two) < spec.sm_count:
            one = Candidate(FAM.name, Config(**{**c.config, "ITEMS": 1}))
            out.setdefault(one.id, (one, "items1"))
    return list(out.values())


def _run(cand: Candidate, x, w, b, p, out) -> None:
    launch(cand, x, w, b, p.geom, out)


def check(task: tuple) -> list[tuple]:
    """Worker: compile and check layer ``task[1]``'s configs task[2:] both ways:
    (layer, config id, async, rel err or None, error)."""
    dtype, i, topk, ids = task
    p = layers(dtype)[i]
    x, w, b, ref = layer_tensors(p.geom, i)
    out = []
    for cand, _ in (c for c in configs(p, topk) if c[0].id in ids):
        for on in WAYS[topk == 0]:
            set_async(on)
            out.append(launch_error((i, cand.id, on),
                                    lambda y, c=cand: _run(c, x, w, b, p, y), ref, x.dtype))
    set_async(True)
    return out


def layer_rows(i: int, p, topk: int, checked: dict) -> list[dict]:
    g = p.geom
    x, w, b, ref = layer_tensors(p.geom, i)
    cudnn_ms = bench_graph(lambda: torch_conv(g)(x, w, b, **conv_args(g)), REP_MS)
    buf = torch.empty_like(ref, dtype=x.dtype)
    rows = []
    for cand, how in configs(p, topk):
        errs = {on: checked.get((i, cand.id, on), (None, "not checked"))
                for on in WAYS[topk == 0]}
        none = (None, "")
        row = dict(problem_id=p.id, config=cand.id, how=how, cudnn_us=round(cudnn_ms * 1e3, 3),
                   err_off=errs.get(False, none)[0], err_on=errs[True][0],
                   error=errs.get(False, none)[1] or errs[True][1], off_us=None, on_us=None)
        if all(launch_passed(v[0]) for v in errs.values()):
            def run(on, c=cand):
                set_async(on)
                _run(c, x, w, b, p, buf)

            if topk == 0:
                row.update(on_us=round(bench_graph(lambda: run(True), REP_MS) * 1e3, 3))
            else:
                # (A graph is captured from one call: W_ASYNC is fixed at capture.)
                off, on = paired_graph_times(lambda: run(False), lambda: run(True), REP_MS)
                set_async(True)
                row.update(off_us=round(off * 1e3, 3), on_us=round(on * 1e3, 3))
        rows.append(row)
    done = [r for r in rows if r["on_us"]]
    if done:
        b_off = min((r for r in done if r["how"] != "items1" and r["off_us"]),
                    key=lambda r: r["off_us"], default=None)
        b_on = min(done, key=lambda r: r["on_us"])
        print(f"{p.id}: cuDNN {cudnn_ms * 1e3:.1f} us; best offered, plane loads "
              f"{b_off['off_us'] if b_off else float('nan'):.1f}; best with async and "
              f"ITEMS=1 {b_on['on_us']:.1f} ({b_on['config']}); {len(done)} of {len(rows)}",
              flush=True)
    return rows


def main() -> None:
    out, dtype, jobs, shard = probe_argv(sys.argv, shard_at=5)
    topk = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    probe_grouped_suite(out, dtype, jobs, shard,
                        lambda i, p: [(dtype, i, topk, ids)
                                      for ids in tile_groups(c for c, _ in configs(p, topk))],
                        check, lambda i, p, checked: layer_rows(i, p, topk, checked))


if __name__ == "__main__":
    main()
