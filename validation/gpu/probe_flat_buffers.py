"""grouped_flat with deeper input pipelines, and the phase images at their copied length, on
the issue-6 suite's grouped layers (device call 304).

A grouped_flat program issues a step's copies one step ahead (two buffers), so on the small
layers each of its few steps waits out most of a round trip to memory (call 289: without
copies or mmas the small layers take 6-8.6 us of their 7-12; ResNeXt3D-50 layer3.x at batch
1, one item a program, three steps: 7.4-8.0 us). With BUFS buffers the copies run BUFS - 1
steps ahead (``grouped_flat.input_buffers``). More buffers take shared memory, which the
phase images held at their copied length rather than a power of two of rows give back
(``grouped_flat.exact_phases``; call 288: 1.00-1.04x on their own).

Configs a layer: call 302's fastest WGMMA configs (``FASTEST`` a layer) and the shipped
model's best-ranked WGMMA grouped_flat ones (``MODEL``), at most ``MAX_CONFIGS``. Variants of
each: (buffers, exact) in (2, no) as shipped, (2, yes), (3, yes), (4, yes) without TMA, and
2, 3, 4 buffers with TMA (whose boxes are at their copied length already); more buffers than
a program has steps (ITEMS x depth taps) and variants over the shared memory left out.
Workers compile and check each against torch in float32 (poisoned outputs); then a layer's
variants of a config are timed in three interleaved rounds (forward, backward, forward; the
suite's timer: CUDA-graph replays, L2 flushed, median), each the lowest of its rounds.

Mode ``ladder`` (call 306): on the larger layers (``LADDER_LAYERS``), the 8-warp WGMMA tiles
(which do not spill at more buffers, where 4-warp ones did) at ITEMS 6, 8 and 12, each with
the buffers that divide its steps (no dead ones), launched whether or not the family
offers them.

Mode ``halves`` (call 308): the configs whose tiles take their halves' diagonal blocks
(``grouped_flat.diag_blocks``), each launched with and without them, at the buffers the
rules give. In the other modes no launch takes them (as calls 304 and 306 ran).

Usage: probe_flat_buffers.py OUT.csv [DTYPE [JOBS [I/N [ladder|halves]]]] (layers i with
i % N == I).
"""

from __future__ import annotations

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
    torch_conv,
)
from convdispatch.validation.probe_io import (
    fastest_configs,
    launch_error,
    launch_passed,
    probe_argv,
    probe_grouped_suite,
)
from convdispatch.validation.probe_io import (
    grouped_suite as layers,
)

REP_MS = 5
FASTEST = 4
MODEL = 2
MAX_CONFIGS = 6
SPACE = [Path(f"validation/results/filter_async_h200/call302/space_{i}.csv") for i in (0, 1)]
FAM = grouped_flat.GroupedFlatFamily()
# The family's rules, before they are replaced by what ``force`` sets: (buffers, exact phase
# images, the halves' diagonal blocks where they hold) a launch takes.
RULES = (grouped_flat.input_buffers, grouped_flat.exact_phases, grouped_flat.diag_blocks)
FORCE = {"bufs": 2, "exact": False, "halves": False}
grouped_flat.input_buffers = lambda geom, cfg: FORCE["bufs"]
grouped_flat.exact_phases = lambda geom, cfg: FORCE["exact"] and bool(cfg.get("WGMMA"))
grouped_flat.diag_blocks = lambda geom, cfg, transposed: (RULES[2](geom, cfg, transposed)
                                                          if FORCE["halves"] else 1)
# Mode "ladder" (call 306): the larger layers' 8-warp WGMMA tiles (no spills at more
# buffers), at item counts that fill the loop's steps (no dead ones), launched whether or
# not the family offers them.
LADDER_TILES = ((128, 32), (256, 16), (128, 16))
LADDER_ITEMS = (6, 8, 12)
LADDER_LAYERS = tuple(f"resnext50_32x4d/layer{b}.conv2/n32" for b in ("1.0", "2.0", "2.1", "3.0")
                      ) + tuple(f"video3d/resnext3d_50.layer{b}.conv2/n8"
                                for b in ("1.0", "2.0", "2.1"))
# Mode "halves" (call 308): the configs whose tiles take the halves' diagonal blocks
# (``diag_blocks``), each with and without them, at the buffers the rules give (call 308
# ran before the rule's copy guard: 66 variants, 64 now). "": the buffer variants (call 304).
MODES = ("", "ladder", "halves")
MODE = {"name": ""}


def force(variant: tuple[int, bool, bool]) -> None:
    FORCE["bufs"], FORCE["exact"], FORCE["halves"] = variant


def configs(p) -> list[tuple[Candidate, str]]:
    """(candidate, how it came: 'fastest', 'model' or 'ladder') of layer ``p``."""
    spec = spec_of(torch.device("cuda"))
    if MODE["name"] == "ladder":
        if not p.id.startswith(LADDER_LAYERS):
            return []
        return [(Candidate(FAM.name, Config(BLOCK_M=pos, BLOCK_N=bn, ITEMS=items, num_warps=8,
                                            num_stages=1, WGMMA=1, **tma)), "ladder")
                for pos, bn in LADDER_TILES for tma in ({}, {"TMA": 1})
                for items in LADDER_ITEMS]
    offered = {c.id: c for c in FAM.candidates(trim_dead_taps(p.geom), spec)}
    out = {}
    for cid in fastest_configs(SPACE, p.id)[:FASTEST]:
        if cid in offered:
            out[cid] = (offered[cid], "fastest")
    ranked = [c for c, s in decide(p.geom, spec).ranked
              if c.family == FAM.name and c.config.get("WGMMA") and s != float("inf")]
    for c in ranked[:MODEL]:
        out.setdefault(c.id, (c, "model"))
    found = list(out.values())[:MAX_CONFIGS]
    if MODE["name"] == "halves":
        g = trim_dead_taps(p.geom)
        return [(c, how) for c, how in found if RULES[2](g, c.config, False) > 1]
    return found


def variants(p, cand: Candidate) -> list[tuple[int, bool, bool]]:
    """The (buffers, exact, halves) variants of ``cand`` on layer ``p`` (see the module's
    text)."""
    g = trim_dead_taps(p.geom)
    cfg = cand.config
    steps = cfg["ITEMS"] * g.t
    if MODE["name"] == "halves":
        ruled = (RULES[0](g, cfg), RULES[1](g, cfg))
        return [(*ruled, False), (*ruled, True)]
    if cfg.get("TMA"):
        ways = [(2, False), (3, False), (4, False)]
    else:
        ways = [(2, False), (2, True), (3, True), (4, True)]
    out = []
    for v in ways:
        force((*v, False))
        if MODE["name"] == "ladder" and steps % v[0]:
            continue
        if v[0] <= max(2, steps) and FAM.smem_bytes(g, cfg) <= spec_of(
                torch.device("cuda")).smem_bytes:
            out.append((*v, False))
    force((2, False, False))
    return out


def _run(cand: Candidate, variant, x, w, b, p, out) -> None:
    force(variant)
    launch(cand, x, w, b, p.geom, out)


def check(task: tuple) -> list[tuple]:
    """Worker: compile and check config ``task[2]`` of layer ``task[1]`` (``task[3]``: the
    mode, which a spawned worker does not inherit), every variant: (layer, config id,
    buffers, exact, halves, rel err or None, error)."""
    dtype, i, cid, MODE["name"] = task
    p = layers(dtype)[i]
    x, w, b, ref = layer_tensors(p.geom, i)
    cand = next(c for c, _ in configs(p) if c.id == cid)
    return [launch_error((i, cid, *v), lambda y, v=v: _run(cand, v, x, w, b, p, y), ref,
                         x.dtype)
            for v in variants(p, cand)]


def layer_rows(i: int, p, checked: dict) -> list[dict]:
    g = p.geom
    spec = spec_of(torch.device("cuda"))
    x, w, b, ref = layer_tensors(p.geom, i)
    cudnn_ms = bench_graph(lambda: torch_conv(g)(x, w, b, **conv_args(g)), REP_MS)
    buf = torch.empty_like(ref, dtype=x.dtype)
    rows = []
    for cand, how in configs(p):
        live = trim_dead_taps(g)
        ok, cells = [], {}
        for v in variants(p, cand):
            err, msg = checked.get((i, cand.id, *v), (None, "not checked"))
            force(v)
            cells[v] = dict(problem_id=p.id, config=cand.id, how=how, bufs=v[0],
                            exact=int(v[1]), halves=int(v[2]),
                            steps=cand.config["ITEMS"] * live.t,
                            smem=FAM.smem_bytes(live, cand.config),
                            programs=FAM.packs(live, cand.config)
                            * FAM.pixel_tiles(live, cand.config),
                            sms=spec.sm_count, cudnn_us=round(cudnn_ms * 1e3, 3), err=err,
                            error=msg, us=None)
            if launch_passed(err):
                ok.append(v)
        times: dict[tuple, list[float]] = {v: [] for v in ok}
        for order in (ok, ok[::-1], ok):
            for v in order:
                times[v].append(bench_graph(
                    lambda v=v, c=cand: _run(c, v, x, w, b, p, buf), REP_MS) * 1e3)
        for v in ok:
            cells[v]["us"] = round(min(times[v]), 3)
        force((2, False, False))
        rows += cells.values()
    done = [r for r in rows if r["us"]]
    if done:
        # (as before: two buffers at powers of two, or in halves mode the rules' buffers)
        before = ((lambda r: not r["halves"]) if MODE["name"] == "halves"
                  else (lambda r: r["bufs"] == 2 and not r["exact"]))
        base = min(filter(before, done), key=lambda r: r["us"], default=None)
        best = min(done, key=lambda r: r["us"])
        print(f"{p.id}: cuDNN {cudnn_ms * 1e3:.1f} us; best as before "
              f"{base['us'] if base else float('nan'):.2f}; best {best['us']:.2f} "
              f"({best['config']}, {best['bufs']} buffers, exact {best['exact']}, halves "
              f"{best['halves']}); {len(done)} of {len(rows)}", flush=True)
    return rows


def main() -> None:
    out, dtype, jobs, shard = probe_argv(sys.argv)
    MODE["name"] = sys.argv[5] if len(sys.argv) > 5 else ""
    if MODE["name"] not in MODES:
        raise SystemExit(f"unknown mode {MODE['name']!r}; known: {MODES[1:]}")
    probe_grouped_suite(out, dtype, jobs, shard,
                        lambda i, p: [(dtype, i, c.id, MODE["name"]) for c, _ in configs(p)],
                        check, layer_rows)


if __name__ == "__main__":
    main()
