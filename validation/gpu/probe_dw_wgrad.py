"""wgrad_depthwise_rows on MobileNetV2's depthwise layers: its best swept configs and
variants of them outside the family's declared space (launched through ``launch_grad``,
which does not check the space), against cuDNN, one run.

    python3 validation/gpu/probe_dw_wgrad.py bench OUT.csv [VARIANTS [TOP]]
    python3 validation/gpu/probe_dw_wgrad.py profile LAYER {ours,ours_pf,cudnn}

bench: per layer (batch 32, fp16, channels_last) the TOP (4) best configs of the sweep
(data/sweeps/h100/bwd_wgrad.csv) and, per VARIANTS (comma-separated; default ``pf``),
the same tiles changed: ``pf`` the next item's loads issued ahead (num_stages=2; call
52, before that code was dropped), ``split1024`` SPLIT_K=1024, ``rows8`` 8 output rows
an item. Each output is checked against torch's float32 gradient; each launch is timed
as a CUDA-graph replay (median), cuDNN's backward-weight in the same harness. profile:
one launch of the best config (or cuDNN) between cudaProfilerStart/Stop, for Nsight
Compute.
"""

from __future__ import annotations

import csv
import sys

import pandas as pd
import torch
from convdispatch.data.problems import load_problems
from convdispatch.dispatcher.launch import empty_grad, launch_grad
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.bench_layers import bench_graph, make_tensors
from convdispatch.validation.inputs import make_grad_output, torch_grad

FAMILY = "wgrad_depthwise_rows"
SWEEP = "data/sweeps/h100/bwd_wgrad.csv"


def problems(want: str = "/n32/float16"):
    return [p for p in load_problems("mobilenet_v2", "float16")
            if p.geom.g > 1 and p.geom.cg == 1 and want in p.id]


def best_configs(pid: str, k: int = 4) -> list[Config]:
    d = pd.read_csv(SWEEP, dtype=str)
    d = d[(d.problem_id == pid) & (d.family == FAMILY) & (d.status == "ok")]
    d = d.assign(us=d.latency_us.astype(float)).sort_values("us")
    return [Config.parse(c) for c in d.config.head(k)]


def prefetched(cfg: Config) -> Config:
    return Config(**{**dict(cfg.items()), "num_stages": 2})


VARIANTS = {
    "pf": prefetched,
    "split1024": lambda c: Config(**{**dict(c.items()), "SPLIT_K": 1024}),
    "rows8": lambda c: Config(**{**dict(c.items()), "BLOCK_M": 8 * c["TILE_W"]}),
}


def main(argv: list[str]) -> int:
    mode = argv[0]
    torch.backends.cudnn.benchmark = True
    if mode == "profile":
        layer, what = argv[1], argv[2]
        p = next(p for p in problems() if f"/{layer}/" in p.id)
        g = p.geom
        x, w, _ = make_tensors(g, "cuda", seed=0)
        dy = make_grad_output(g, "cuda", seed=0)
        out = empty_grad("wgrad", x, w)
        cfg = best_configs(p.id, 1)[0]
        cand = Candidate(FAMILY, prefetched(cfg) if what == "ours_pf" else cfg)
        fn = ((lambda: torch_grad(g, "wgrad", dy, x, w)) if what == "cudnn"
              else (lambda: launch_grad(cand, g, dy, x=x, w=w, out=out)))
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
        return 0
    out_csv = argv[1]
    variants = (argv[2] if len(argv) > 2 else "pf").split(",")
    top = int(argv[3]) if len(argv) > 3 else 4
    rows = []
    for i, p in enumerate(problems()):
        g = p.geom
        x, w, _ = make_tensors(g, "cuda", seed=i)
        dy = make_grad_output(g, "cuda", seed=i)
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            ref = torch_grad(g, "wgrad", dy.float(), x.float(), w.float())
        cudnn_ms = bench_graph(lambda g=g, dy=dy, x=x, w=w: torch_grad(g, "wgrad", dy, x, w), 20)
        line = [f"{p.layer}: cudnn {cudnn_ms * 1e3:.1f}"]
        for cfg in best_configs(p.id, top):
            for c in (cfg, *(VARIANTS[v](cfg) for v in variants)):
                cand = Candidate(FAMILY, c)
                out = torch.full_like(empty_grad("wgrad", x, w), float("nan"))
                try:
                    launch_grad(cand, g, dy, x=x, w=w, out=out)
                    torch.cuda.synchronize()
                    err = float((out.float() - ref).norm() / ref.norm())
                    def run(c=cand, o=out, g=g, dy=dy, x=x, w=w):
                        launch_grad(c, g, dy, x=x, w=w, out=o)

                    ms = bench_graph(run, 20)
                except Exception as e:  # noqa: BLE001 - a probe records what failed
                    print(f"{p.id} {cand.id}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                    continue
                rows.append(dict(problem_id=p.id, config=str(c), base=str(cfg),
                                 us=ms * 1e3, cudnn_us=cudnn_ms * 1e3, rel_err=err,
                                 x_cudnn=cudnn_ms / ms))
                line.append(f"{'' if c == cfg else '*'}{ms * 1e3:.1f}"
                            f"{'' if err < 1e-2 else ' WRONG'}")
        print(" | ".join(line), flush=True)
    with open(out_csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
