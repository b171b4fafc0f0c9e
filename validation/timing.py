"""How the sweep times one callable, and the callables it times (a candidate, cuDNN)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # torch stays unimported until a GPU worker needs it
    import torch

    from ..kernels.base import Candidate
    from ..kernels.geometry import ConvGeometry


@dataclass(frozen=True)
class TimingSettings:
    """Settings of triton.testing.do_bench and the torch flags timings depend on.

    do_bench zeroes a 256 MB buffer before every repeat (L2 flush, so each call
    reads its operands from HBM) and times each call with its own CUDA events.
    With ``cuda_graph`` the call is captured once and the graph is replayed:
    the events then bracket GPU work only. Without it, a Python launcher that
    takes longer on the host than the ~85 us flush (measured on an H100: 60 to
    300 us for some families) would be timed instead of its kernel.
    """

    warmup_ms: int = 25
    rep_ms: int = 100
    quantiles: tuple[float, float, float] = (0.5, 0.2, 0.8)
    cuda_graph: bool = True
    cudnn_benchmark: bool = True  # the baseline is cuDNN's best algorithm, not its heuristic
    allow_tf32: bool = True  # torch's cuDNN default; float32 kernels follow the same flag

    def __post_init__(self) -> None:
        if self.warmup_ms < 1 or self.rep_ms < 1:
            raise ValueError(f"warmup_ms and rep_ms must be >= 1, got {self.warmup_ms}, "
                             f"{self.rep_ms}")
        if len(self.quantiles) != 3 or not all(0 < q < 1 for q in self.quantiles):
            raise ValueError(f"quantiles must be 3 values in (0, 1), got {self.quantiles}")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["quantiles"] = list(self.quantiles)
        d["timer"] = "triton.testing.do_bench (L2 flushed before each repeat)"
        return d


class Timer(Protocol):
    """Times a callable: (median_us, p20_us, p80_us)."""

    def time(self, fn: Callable[[], object]) -> tuple[float, float, float]: ...


def graph_of(fn: Callable[[], object]) -> Callable[[], None] | None:
    """``fn`` captured into a CUDA graph (its replay), or None when it cannot be captured.

    ``fn`` must have run once already (compiled, cuDNN algorithm chosen). As
    torch's docs ask, it runs once more on a side stream before the capture.
    """
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            fn()
    except Exception:
        torch.cuda.synchronize()  # raises if the failed capture broke the context
        return None
    return graph.replay


@dataclass(frozen=True)
class CudaTimer:
    settings: TimingSettings = TimingSettings()

    def measure(self, fn: Callable[[], object]) -> tuple[tuple[float, float, float], bool]:
        """((median_us, p20_us, p80_us), timed as a CUDA graph replay?)."""
        from triton.testing import do_bench

        s = self.settings
        replay = graph_of(fn) if s.cuda_graph else None
        ms = do_bench(replay or fn, warmup=s.warmup_ms, rep=s.rep_ms,
                      quantiles=list(s.quantiles))
        med, p20, p80 = (float(v) * 1000.0 for v in ms)
        return (med, p20, p80), replay is not None

    def time(self, fn: Callable[[], object]) -> tuple[float, float, float]:
        return self.measure(fn)[0]


def cudnn_fn(geom: ConvGeometry, x: torch.Tensor, w: torch.Tensor,
             bias: torch.Tensor | None) -> Callable[[], torch.Tensor]:
    """F.conv2d / F.conv3d on the sweep's own (channels_last) tensors."""
    from .inputs import torch_conv

    return lambda: torch_conv(geom, x, w, bias)


def candidate_fn(cand: Candidate, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None,
                 geom: ConvGeometry, out: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A forced candidate writing ``out``.

    The first call goes through ``run_candidate`` (which checks feasibility);
    the timed closure calls ``launch``, the function run_candidate ends in, so
    the per-call feasibility check is not part of the kernel's time.
    """
    from ..dispatcher import launch as launch_mod

    launch_mod.run_candidate(cand, x, w, bias, geom, out=out)
    launch = getattr(launch_mod, "launch", None)
    if launch is None:
        return lambda: launch_mod.run_candidate(cand, x, w, bias, geom, out=out)
    return lambda: launch(cand, x, w, bias, geom, out)


def grad_fn(cand: Candidate | None, direction: str, dy: torch.Tensor, x: torch.Tensor,
            w: torch.Tensor, geom: ConvGeometry, out: torch.Tensor) -> Callable[[], object]:
    """One gradient direction: a forced candidate writing ``out``, or cuDNN's backward
    (``cand`` None), on the same tensors. Direction "backward": dX and dW of one pass
    (``out`` their pair; cuDNN: one ``convolution_backward`` asked for both)."""
    from ..dispatcher import fused_pair
    from ..dispatcher import launch as launch_mod
    from .inputs import torch_grad

    if cand is None:
        return lambda: torch_grad(geom, direction, dy, x, w)
    launch_mod.run_grad_candidate(cand, direction, dy, x, w, geom, out=out)
    if direction == "backward":
        return lambda: fused_pair.run_candidate(geom, cand, dy, x, w, out=out)
    return lambda: launch_mod.launch_grad(cand, geom, dy, x=x, w=w, out=out)


def profiler_window(fn: Callable[[], object], warmup: int = 5) -> None:
    """``fn`` ``warmup`` times (compile, pick cuDNN's algorithm), then once between
    cudaProfilerStart/Stop: what ``ncu --profile-from-start off`` profiles."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
