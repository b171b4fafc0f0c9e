"""Two forward changes of the thirty-eighth session, each timed on and off in one process.

    python3 validation/gpu/probe_taps_regs.py OUT.csv [DTYPE]

- ``filter_regs``: ``grouped_flat`` holding its 2D 16-channel filter tiles in registers
  for all of a program's items (``grouped_flat.filter_in_registers``) against reading
  them from shared memory every item. The issue-6 suite's 2D grouped layers, the three
  ``grouped_flat`` configs of each fastest in the sweep.
- ``dead_taps``: the issue-6 grouped layers whose filter has taps that read only padding
  (ResNeXt3D-50's layer4 on one- and two-frame depths), the six ``grouped_packed`` and
  ``grouped_gemm`` configs fastest in the sweep, launched on the stored geometry against
  the geometry without those taps (``kernels/dead_taps.py``).

CUDA-graph replays, L2 flushed, median, paired (``paired_graph_times``: a, b, b, a when it
ran in call 234; three rounds a side since the thirty-ninth session); each
output checked against cuDNN's in float32.
"""

from __future__ import annotations

import sys

import pandas as pd
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import launch as launch_mod
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.dead_taps import has_dead_taps
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_layers import (
    category,
    conv_args,
    make_tensors,
    paired_graph_times,
    rel_err,
    suite_problems,
)
from convdispatch.validation.probe_io import stream_rows

REP_MS = 5
SWEEPS = ("data/sweeps/h100/train.csv", "data/sweeps/h100/holdout.csv")
RETIRED = ("data/sweeps/h100/train.retired.csv", "data/sweeps/h100/holdout.retired.csv")


def fastest_candidates(problem_id: str, families: tuple[str, ...], count: int) -> list[str]:
    """The candidates of ``families`` fastest for a problem in the sweep rows, retired or
    live (rows taken before and after the change: this picks what to time)."""
    frames = [pd.read_csv(p, usecols=["problem_id", "family", "config", "ok", "latency_us"])
              for p in RETIRED + SWEEPS]
    df = pd.concat(frames)
    d = df[(df.problem_id == problem_id) & df.family.isin(families) & (df.ok == 1)]
    d = d.sort_values("latency_us")
    ids = d.family + ":" + d.config
    return list(ids.drop_duplicates().head(count))


def timed_pair(cand, x, w, b, g, ref, off, on) -> dict:
    """(off, on) graph medians in us of one candidate; ``off`` / ``on`` set the switch."""
    out = torch.empty_like(ref, dtype=x.dtype)
    errs, fns = [], []
    for switch in (off, on):
        switch()
        errs.append(rel_err(run_candidate(cand, x, w, b, g), ref))
        fns.append(lambda s=switch: (s(), run_candidate(cand, x, w, b, g, out=out)))
    off_ms, on_ms = paired_graph_times(*fns, REP_MS)
    return {"off_us": round(off_ms * 1e3, 3), "on_us": round(on_ms * 1e3, 3),
            "off_over_on": round(off_ms / on_ms, 4), "max_rel_err": max(errs)}


def filter_regs_rows(p, i: int) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    shipped = grouped_flat.filter_in_registers
    rows = []
    try:
        for cid in fastest_candidates(p.id, ("grouped_flat",), 3):
            if "BLOCK_N=16" not in cid:
                continue
            cand = registry.parse_candidate(cid)

            def off():
                grouped_flat.filter_in_registers = lambda geom, block: False

            def on():
                grouped_flat.filter_in_registers = shipped

            rows.append({"part": "filter_regs", "problem_id": p.id, "candidate": cand.id,
                         **timed_pair(cand, x, w, b, g, ref, off, on)})
            print(rows[-1], flush=True)
    finally:
        grouped_flat.filter_in_registers = shipped
    return rows


def dead_taps_rows(p, i: int) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    ref = F.conv3d(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    trim, live = launch_mod.trim_dead_taps, launch_mod.live_filter
    rows = []

    def off():
        launch_mod.trim_dead_taps = lambda geom: geom
        launch_mod.live_filter = lambda wt, geom: wt

    def on():
        launch_mod.trim_dead_taps, launch_mod.live_filter = trim, live

    spec = spec_of(torch.device("cuda"))
    names = ("grouped_packed", "grouped_gemm")
    # Configs both geometries offer (the families' own lists do not drop dead taps).
    stored = {c.id for f in names for c in registry.family(f).candidates(g, spec)}
    trimmed = {c.id for c in registry.candidates(g, spec)}
    try:
        for cid in fastest_candidates(p.id, names, 6):
            if cid not in stored or cid not in trimmed:
                continue
            cand = registry.parse_candidate(cid)
            row = timed_pair(cand, x, w, b, g, ref, off, on)
            rows.append({"part": "dead_taps", "problem_id": p.id, "candidate": cand.id, **row})
            print(rows[-1], flush=True)
    finally:
        on()
    return rows


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    stream_rows(out, ((filter_regs_rows(p, i) if p.geom.dims == 2 else [])
                      + (dead_taps_rows(p, i) if has_dead_taps(p.geom) else [])
                      for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
