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
    reads its operands from HBM) and times each call with its own CUDA events;
    the flush also keeps the GPU busy while the host launches the next call.
    """

    warmup_ms: int = 25
    rep_ms: int = 100
    quantiles: tuple[float, float, float] = (0.5, 0.2, 0.8)
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


@dataclass(frozen=True)
class CudaTimer:
    settings: TimingSettings = TimingSettings()

    def time(self, fn: Callable[[], object]) -> tuple[float, float, float]:
        from triton.testing import do_bench

        s = self.settings
        ms = do_bench(fn, warmup=s.warmup_ms, rep=s.rep_ms, quantiles=list(s.quantiles))
        med, p20, p80 = (float(v) * 1000.0 for v in ms)
        return med, p20, p80


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
