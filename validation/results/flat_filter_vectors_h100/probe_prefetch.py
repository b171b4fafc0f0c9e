"""``grouped_packed`` with a bulk L2 prefetch of every input row its tile reads
(``prefetch_rows``, ``PREFETCH_ROWS`` rows a prefetch) against without, on the issue-6
layers where the model chose ``grouped_packed`` (a suite run's ``bench.csv``).

    python3 validation/gpu/probe_prefetch.py BENCH.csv OUT.csv [ROWS]

(Run as that, in call 280, with ``l2_prefetch.patch`` applied; kept here as run.)

The profile of ResNeXt-50 layer3.0 (validation/results/tap_steps_h100/, call 261) found our
kernel as fast as cuDNN's with the L2 warm and 15% slower with it flushed: the question is
whether asking for a tile's input rows at once, before the first tap's loads, closes that.
CUDA-graph replays, L2 flushed (``bench_layers.paired_graph_times``); both outputs checked
against torch in float32.
"""

from __future__ import annotations

import sys

import pandas as pd
import torch
import torch.nn.functional as F
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import launch as launch_mod
from convdispatch.kernels import grouped_packed
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.bench_layers import (
    conv_args,
    make_tensors,
    paired_graph_times,
    rel_err,
)
from convdispatch.validation.probe_io import stream_rows

REP_MS = 5


def layer_rows(pid: str, chosen: str, i: int, rows: int) -> list[dict]:
    p = problem_by_id(pid)
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    family, cfg = chosen.split(":", 1)
    cand = Candidate(family, Config.parse(cfg))
    outs = {0: torch.empty_like(ref, dtype=x.dtype), rows: torch.empty_like(ref, dtype=x.dtype)}

    def side(n):
        def fn():
            grouped_packed.PREFETCH_ROWS = n
            launch_mod.launch(cand, x, w, b, g, outs[n])
        return fn

    try:
        errs = {}
        for n in outs:
            outs[n].fill_(float("nan"))
            side(n)()
            torch.cuda.synchronize()
            errs[n] = rel_err(outs[n], ref)
        old, new = paired_graph_times(side(0), side(rows), REP_MS)
    except Exception as e:  # noqa: BLE001 - a layer that fails is recorded by its absence
        print(f"{pid} {cand}: {type(e).__name__}: {str(e)[:300]}", flush=True)
        return []
    finally:
        grouped_packed.PREFETCH_ROWS = 0
    print(f"{pid} {cand.config}: {old * 1e3:.1f} us, prefetch {new * 1e3:.1f} us "
          f"(x{old / new:.3f}), errors {errs[0]:.1e} {errs[rows]:.1e}", flush=True)
    return [dict(problem_id=pid, config=str(cand.config), rows=rows,
                 plain_us=round(old * 1e3, 3), prefetch_us=round(new * 1e3, 3),
                 err_plain=errs[0], err_prefetch=errs[rows],
                 same_bits=bool(torch.equal(outs[0], outs[rows])))]


def main() -> None:
    bench, out = sys.argv[1], sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    d = pd.read_csv(bench)
    d = d[(d.category == "grouped") & d.chosen.str.startswith("grouped_packed:")]
    stream_rows(out, (layer_rows(r.problem_id, r.chosen, i, rows)
                      for i, (_, r) in enumerate(d.iterrows())))


if __name__ == "__main__":
    main()
