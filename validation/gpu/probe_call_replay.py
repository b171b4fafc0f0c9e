"""Why a CUDA graph of a whole ``conv2d`` call sometimes times far above its kernel.

    python3 validation/gpu/probe_call_replay.py OUT.csv ROUNDS PROBLEM_ID...

Calls 236 and 237 (issue-6 suite) timed two SD-VAE 1x1 layers at batch 1 whose choice is
``pointwise_tma_persistent`` at 106-112 us as graphs of the ``conv2d`` call, against
10-25 us for the chosen kernel alone and for the eager call (call 208 once saw the same
with ``implicit_gemm_tma_persistent``). For each problem, ROUNDS times: a fresh capture of
the call timed as the suite times it (``bench_graph``: do_bench, L2 flushed before each
replay), the chosen kernel's graph likewise, and the kernels one replay of the call's graph
runs (``torch.profiler``: name, duration), with the dispatcher's caches cleared before
every round but the first.
"""

from __future__ import annotations

import sys

import torch
from convdispatch import conv2d, conv3d
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import clear_cache, decide, run_candidate
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_layers import bench_graph, conv_args, make_tensors
from convdispatch.validation.probe_io import stream_rows
from convdispatch.validation.timing import graph_of

REP_MS = 5


def kernels_of(replay) -> str:
    """The kernels one replay runs, after an L2 flush: 'name:us' joined by '|'."""
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        flush.zero_()
        replay()
        torch.cuda.synchronize()
    return "|".join(f"{e.name[:60]}:{e.time_range.elapsed_us():.1f}" for e in prof.events()
                    if e.device_type == torch.autograd.DeviceType.CUDA)


def one_round(pid: str, seed: int, r: int, spec) -> dict:
    g = problem_by_id(pid).geom
    x, w, b = make_tensors(g, "cuda", seed=seed)
    kw = conv_args(g)
    ours = conv2d if g.dims == 2 else conv3d
    if r:
        clear_cache()
    dec = decide(g, spec)
    buf = ours(x, w, b, **kw)
    torch.cuda.synchronize()
    call_us = bench_graph(lambda: ours(x, w, b, **kw), REP_MS) * 1e3
    chosen_us = bench_graph(lambda: run_candidate(dec.candidate, x, w, b, g, out=buf),
                            REP_MS) * 1e3
    replay = graph_of(lambda: ours(x, w, b, **kw))
    return {"problem_id": pid, "round": r, "chosen": dec.candidate.id,
            "call_us": round(call_us, 3), "chosen_us": round(chosen_us, 3),
            "call_kernels": kernels_of(replay)}


def main(argv: list[str]) -> int:
    out, rounds, ids = argv[0], int(argv[1]), argv[2:]
    spec = spec_of(torch.device("cuda"))

    def printed(row: dict) -> list[dict]:
        print(row, flush=True)
        return [row]

    stream_rows(out, (printed(one_round(pid, i, r, spec))
                      for i, pid in enumerate(ids) for r in range(rounds)))
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
