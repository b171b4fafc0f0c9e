"""Where the memory-bound families lose time: profiling targets and roofline probes.

    python3 validation/gpu/probe.py profile TARGET   # one conv between cudaProfilerStart/Stop
    python3 validation/gpu/probe.py time             # roofline probes, printed as a table

``profile`` is meant for ``ncu --profile-from-start off``: inputs are made and
every kernel compiled (and cuDNN's algorithm picked) before the profiled window,
which holds exactly one launch of the target. ``time`` measures, with the
sweep's timer, the layers' chosen kernels next to what bounds them: a copy of
the input (read + write the same bytes), the same kernel with a 1x1 filter
(no halo), and cuDNN.
"""

from __future__ import annotations

import dataclasses
import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import run_candidate
from convdispatch.kernels.base import Candidate
from convdispatch.validation.inputs import make_inputs, seed_of
from convdispatch.validation.timing import (
    CudaTimer,
    TimingSettings,
    candidate_fn,
    cudnn_fn,
    profiler_window,
)

DW = "mobilenet_v2/features.3.conv.1.0/n32/float16"
GRP = "resnext50_32x4d/layer1.0.conv2/n32/float16"
DENSE = "resnet50/layer4.1.conv2/n32/float16"
GRP2 = "resnext50_32x4d/layer2.0.conv2/n32/float16"  # 3x3, stride 2, 32 groups of 8
GRP3 = "resnext50_32x4d/layer3.0.conv2/n32/float16"  # 3x3, stride 2, 32 groups of 16
V3D1 = "video3d/resnext3d_50.layer1.0.conv2/n8/float16"  # 3x3x3, 32 groups of 4
V3D2 = "video3d/resnext3d_50.layer2.0.conv2/n8/float16"  # 3x3x3, stride 2, 32 groups of 8
V3D21 = "video3d/resnext3d_50.layer2.1.conv2/n8/float16"  # 3x3x3, 32 groups of 8, 4x14x14
PW24 = "mobilenet_v2/features.3.conv.2/n32/float16"  # 1x1, 144 -> 24 channels, 56x56
PW144 = "mobilenet_v2/features.3.conv.0.0/n32/float16"  # 1x1, 24 -> 144 channels, 56x56
TARGETS = {
    "dw_ours": (DW, "depthwise:BLOCK_M=64;BLOCK_N=32;TILE_W=16;num_stages=1;num_warps=2"),
    "dw_direct": (DW, "grouped_direct:BLOCK_M=128;BLOCK_N=16;num_stages=1;num_warps=4"),
    "dw_small": (DW, "depthwise:BLOCK_M=16;BLOCK_N=16;TILE_W=8;num_stages=1;num_warps=2"),
    "dw_cudnn": (DW, None),
    "grp_ours": (GRP, "grouped_packed:BLOCK_K=16;BLOCK_M=128;BLOCK_N=16;num_stages=3;num_warps=4"),
    "grp_fma": (GRP, "grouped_direct:BLOCK_M=32;BLOCK_N=128;num_stages=1;num_warps=4"),
    "grp_fma_small": (GRP, "grouped_direct:BLOCK_M=16;BLOCK_N=64;num_stages=1;num_warps=2"),
    "grp_cudnn": (GRP, None),
    "grp2_packed": (GRP2, "grouped_packed:BLOCK_K=32;BLOCK_M=128;BLOCK_N=32;num_stages=4;"
                          "num_warps=4"),
    "grp2_rows": (GRP2, "grouped_rows:BLOCK_M=64;BLOCK_N=16;TILE_W=32;num_stages=1;num_warps=2"),
    "grp2_cudnn": (GRP2, None),
    "dense_ours": (DENSE, "implicit_gemm:BLOCK_K=128;BLOCK_M=128;BLOCK_N=64;GROUP_M=8;"
                          "num_stages=3;num_warps=8"),
    "dense_cudnn": (DENSE, None),
    # The slowest memory-bound dense layers of the issue-6 suite (0.72-0.74x cuDNN in call
    # 91), each with its best swept config.
    "pw24_ours": (PW24, "pointwise_tma:BLOCK_K=64;BLOCK_M=64;BLOCK_N=64;GROUP_M=8;"
                        "num_stages=4;num_warps=4"),
    "pw24_cudnn": (PW24, None),
    "pw144_ours": (PW144, "implicit_gemm:BLOCK_K=32;BLOCK_M=128;BLOCK_N=32;GROUP_M=8;"
                          "num_stages=4;num_warps=4"),
    "pw144_cudnn": (PW144, None),
    # The issue-6 grouped layers furthest from 2x cuDNN (call 257, model 1399ea6eb29c's
    # choices) and a tap-step config of the 3D one.
    "grp3_packed": (GRP3, "grouped_packed:BLOCK_K=64;BLOCK_M=64;BLOCK_N=64;num_stages=3;"
                          "num_warps=4"),
    "grp3_cudnn": (GRP3, None),
    "grp_flat": (GRP, "grouped_flat:BLOCK_M=128;BLOCK_N=16;ITEMS=28;num_stages=1;num_warps=2"),
    # The row-reuse schedule (forty-second session): model 24623ad94dae's choices for
    # ResNeXt-50 layer1.0 at batch 32 and ResNeXt3D-50 layer1.0 at batch 8.
    "grp_flat_reuse": (GRP, "grouped_flat:BLOCK_M=256;BLOCK_N=16;ITEMS=14;num_stages=1;"
                            "num_warps=2"),
    "v3d1_flat_reuse": (V3D1, "grouped_flat:BLOCK_M=256;BLOCK_N=16;ITEMS=4;num_stages=1;"
                              "num_warps=2"),
    # The flat kernel at stride 2 (ResNeXt-50 layer2.0 at batch 32, model 24623ad94dae's
    # fastest flat row) and on a 3D layer at batch 8 (forty-third session).
    "grp2_flat": (GRP2, "grouped_flat:BLOCK_M=128;BLOCK_N=16;ITEMS=14;num_stages=1;"
                        "num_warps=4"),
    "v3d21_flat": (V3D21, "grouped_flat:BLOCK_M=256;BLOCK_N=16;ITEMS=2;num_stages=1;"
                          "num_warps=2"),
    "v3d2_packed": (V3D2, "grouped_packed:BLOCK_K=32;BLOCK_M=128;BLOCK_N=32;num_stages=4;"
                          "num_warps=4"),
    "v3d2_taps": (V3D2, "grouped_packed:BLOCK_K=128;BLOCK_M=64;BLOCK_N=32;num_stages=3;"
                        "num_warps=4"),
    # The WGMMA tiles model 36288d73ed13 takes on the two strided layers (forty-fifth
    # session): 32 wide, 64 bytes a pixel a copy.
    "grp2_flat_wgmma": (GRP2, "grouped_flat:BLOCK_M=128;BLOCK_N=32;ITEMS=14;WGMMA=1;"
                              "num_stages=1;num_warps=4"),
    "grp3_flat_wgmma": (GRP3, "grouped_flat:BLOCK_M=64;BLOCK_N=32;ITEMS=8;WGMMA=1;"
                              "num_stages=1;num_warps=4"),
    # Each layer's fastest config on an H200 (call 302; TMA boxes): ResNeXt-50 layer1.0 and
    # layer2.0 at batch 32 (forty-eighth session).
    "grp_flat_tma": (GRP, "grouped_flat:BLOCK_M=128;BLOCK_N=32;ITEMS=14;TMA=1;WGMMA=1;"
                          "num_stages=1;num_warps=4"),
    "grp2_flat_tma": (GRP2, "grouped_flat:BLOCK_M=64;BLOCK_N=32;ITEMS=14;TMA=1;WGMMA=1;"
                            "num_stages=1;num_warps=4"),
}


def runner(geom, cand_id: str | None, seed: int):
    """The sweep's closures: cuDNN (cand_id None) or a forced candidate."""
    x, w, b = make_inputs(geom, "cuda", seed)
    if cand_id is None:
        return cudnn_fn(geom, x, w, b)
    cand = Candidate.parse(cand_id)
    return candidate_fn(cand, x, w, b, geom, run_candidate(cand, x, w, b, geom))


def profile(target: str) -> None:
    pid, cand = TARGETS[target]
    profiler_window(runner(problem_by_id(pid).geom, cand, seed_of(pid)))


def probe_rows():
    timer = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=20))
    for target, (pid, cand) in TARGETS.items():
        p = problem_by_id(pid)
        g = p.geom
        try:
            fn = runner(g, cand, seed_of(pid))
        except ValueError as e:  # a config today's feasibility rules no longer offer
            print(f"| {target} | {e} | | |", flush=True)
            continue
        (us, _, _), _ = timer.measure(fn)
        yield target, us, g.min_bytes / us / 1e3, g.flops / us / 1e6
        if target.endswith("_cudnn"):
            x, _, _ = make_inputs(g, "cuda", 0)
            (us, _, _), _ = timer.measure(lambda x=x: x.clone(memory_format=torch.preserve_format))
            yield f"{target[:-6]}_copy_input", us, 2 * x.numel() * x.element_size() / us / 1e3, 0.0
        elif g.g > 1:
            one = dataclasses.replace(g, r=1, s=1, pad=(0, 0, 0), pad_hi=None,
                                      h=g.out_spatial[1], w=g.out_spatial[2], stride=(1, 1, 1))
            (us, _, _), _ = timer.measure(runner(one, cand, 1))
            yield f"{target}_1x1", us, one.min_bytes / us / 1e3, one.flops / us / 1e6


def main(argv: list[str]) -> int:
    torch.backends.cudnn.benchmark = True
    if argv[:1] == ["profile"]:
        profile(argv[1])
        return 0
    print("| probe | us | GB/s (min bytes) | TFLOP/s |\n|---|---|---|---|")
    for name, us, gbps, tflops in probe_rows():
        print(f"| {name} | {us:.1f} | {gbps:.0f} | {tflops:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
