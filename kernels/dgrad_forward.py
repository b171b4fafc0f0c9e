"""Gradient of the input through the forward kernels.

At stride 1, dX is a forward convolution of dY: input and output channels swapped
within each group, the filter's taps reversed (``transposed_geometry``). A 1x1
filter without padding needs no reversal at any stride: dX's pixels on the stride
lattice are dY times the transposed filter and every other pixel is zero
(``lattice_geometry``). At any other stride dX splits into stride phases
(``phase_problems``): the pixels h = stride * i + phase of each axis are reached only
by the taps r with (phase + pad - r * dilation) divisible by the stride, at dY rows
i + (phase + pad - r * dilation) / stride, so each phase of dX is a stride-1 forward
convolution of dY with those taps (a 3x3 filter at stride 2: phases of 1, 2, 2 and 4
taps), written through a strided view of dX; a phase no tap reaches is zero. The
phases write disjoint pixels, so their launches run on side streams
(``launcher.branches``) and overlap on the GPU: 1.1-1.8x on the strided layers of the
backward suite (validation/results/phase_streams_h100/). Each
family here runs one forward family's kernel and config space on those forward
problems, so the forward kernels' work (the tap loop, TMA tiles, packed groups, spans)
serves the backward pass too, without the masked taps a strided dgrad walks through.

The forward kernel reads the stored filter in place, with no copy and no extra launch:
- ungrouped: the GEMM launchers read the filter through strides, so the swapped
  channel axes are a stride swap (``ConvCall.transposed_w``) and the implicit GEMM
  walks the taps backwards (``ConvCall.flip_taps``).
- grouped (``grouped_packed``, ``grouped_rows``, ``grouped_flat``): the same stride swap,
  and the block-diagonal weight tile takes its rows from the group's stored output
  channels (``grouped_packed.filter_columns``; ``grouped_flat``'s TRANSPOSED offsets).
  Until the twenty-second session this was a regrouped copy, one launch more (2-3 us on
  an H100, call 104's profile).
- depthwise, one output channel a group: swapping a 1 x 1 channel block changes
  nothing, and the launchers read the taps backwards from the last one
  (``ConvCall.flip_taps``, ``common.oriented_filter``).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import torch
import triton
import triton.language as tl

from .base import Config, ConvCall, GradCall, KernelFamily
from .common import cdiv, needs_int64, strides5
from .depthwise import DepthwiseFamily
from .depthwise_span import span_grid
from .geometry import ConvGeometry
from .grad_common import GradFamily, GradGrid
from .grouped_flat import GroupedFlatFamily
from .grouped_packed import GroupedPackedFamily
from .grouped_rows import GroupedRowsFamily
from .implicit_gemm import ImplicitGemmFamily
from .implicit_gemm_tma import ImplicitGemmTmaFamily
from .launcher import branches, launch_kernel
from .pointwise import PointwiseFamily
from .pointwise_tma import PointwiseTmaFamily
from .splitk import SplitKFamily


@lru_cache(maxsize=4096)  # asked once per config of each family when candidates are listed
def transposed_geometry(geom: ConvGeometry) -> ConvGeometry | None:
    """The stride-1 forward convolution whose output is dX: dY convolved with the flipped
    filter (channels swapped), or None when the padding it needs would be negative."""
    if geom.stride != (1, 1, 1):
        return None
    taps = (geom.t, geom.r, geom.s)
    lo = tuple(dl * (t - 1) - p for dl, t, p in zip(geom.dilation, taps, geom.pad))
    out = geom.out_spatial
    hi = tuple(size - o + dl * (t - 1) - low for size, o, dl, t, low in
               zip((geom.d, geom.h, geom.w), out, geom.dilation, taps, lo))
    if min(lo + hi) < 0:
        return None
    return ConvGeometry(n=geom.n, c=geom.k, k=geom.c, g=geom.g, d=out[0], h=out[1], w=out[2],
                        t=geom.t, r=geom.r, s=geom.s, pad=lo, pad_hi=hi,
                        dilation=geom.dilation, dims=geom.dims, dtype=geom.dtype,
                        layout=geom.layout)


@lru_cache(maxsize=4096)
def lattice_geometry(geom: ConvGeometry) -> ConvGeometry | None:
    """For a strided 1x1 conv without padding: the 1x1 forward convolution of dY whose
    output is dX on the stride lattice (the other pixels of dX are zero); else None."""
    if not geom.is_pointwise or geom.stride == (1, 1, 1):
        return None
    od, oh, ow = geom.out_spatial
    return ConvGeometry(n=geom.n, c=geom.k, k=geom.c, g=geom.g, d=od, h=oh, w=ow, r=1, s=1,
                        dims=geom.dims, dtype=geom.dtype, layout=geom.layout)


def forward_problem(geom: ConvGeometry) -> ConvGeometry | None:
    """The forward convolution a dgrad-through-forward family runs for ``geom``, or None."""
    return transposed_geometry(geom) or lattice_geometry(geom)


@dataclass(frozen=True)
class Phase:
    """One stride phase of dX: its first pixel on each axis (the view
    dX[:, :, pd::std, ph::sth, pw::stw]), the filter taps that reach it (first tap and
    step on each axis, in increasing order; the forward kernel reads them reversed) and
    the stride-1 forward convolution of dY that computes it (None: no tap reaches it,
    the phase is zero)."""

    offset: tuple[int, int, int]
    first_tap: tuple[int, int, int]
    tap_step: tuple[int, int, int]
    geom: ConvGeometry | None


def _axis_phase(size: int, out: int, taps: int, dil: int, stride: int, pad: int,
                phase: int) -> tuple[int, int, int, int, int, int] | None:
    """(first tap, tap step, taps, pad_lo, pad_hi, dilation) of one axis' phase as a
    stride-1 forward conv of dY's ``out`` rows; (0, 1, 0, 0, 0, 1) when no tap reaches it;
    None when the padding it needs would be negative."""
    reach = [r for r in range(taps) if (phase + pad - r * dil) % stride == 0]
    if not reach or phase >= size:
        return 0, 1, 0, 0, 0, 1
    step = stride // math.gcd(stride, dil)
    n_taps = len(reach)
    sub_dil = dil * step // stride
    lo = -((phase + pad - reach[-1] * dil) // stride)  # the last tap reads dY row i - lo
    rows = -(-(size - phase) // stride)
    hi = rows - out - lo + sub_dil * (n_taps - 1)
    if lo < 0 or hi < 0:
        return None
    return reach[0], step, n_taps, lo, hi, sub_dil


@lru_cache(maxsize=4096)
def phase_problems(geom: ConvGeometry) -> tuple[Phase, ...] | None:
    """The stride phases of a strided conv's dX as stride-1 forward convolutions of dY
    (``Phase``; a 1x1 filter without padding reaches only phase 0, its lattice), or None
    at stride 1 or where a phase would need negative padding."""
    if geom.stride == (1, 1, 1):
        return None
    axes = list(zip((geom.d, geom.h, geom.w), geom.out_spatial, (geom.t, geom.r, geom.s),
                    geom.dilation, geom.stride, geom.pad))
    phases = []
    for offset in itertools.product(*(range(st) for st in geom.stride)):
        per_axis = [_axis_phase(*axis, ph) for axis, ph in zip(axes, offset)]
        if None in per_axis:
            return None
        first, step, taps, lo, hi, dil = zip(*per_axis)
        sub = None
        if min(taps) > 0:
            sub = ConvGeometry(n=geom.n, c=geom.k, k=geom.c, g=geom.g, d=geom.out_spatial[0],
                               h=geom.out_spatial[1], w=geom.out_spatial[2], t=taps[0],
                               r=taps[1], s=taps[2], pad=lo, pad_hi=hi, dilation=dil,
                               dims=geom.dims, dtype=geom.dtype, layout=geom.layout)
        phases.append(Phase(offset, first, step, sub))
    return tuple(phases)


@triton.jit(do_not_specialize=["TOTAL", "D", "H", "W"])
def zero_phases_kernel(dx_ptr, TOTAL, C, D, H, W, sn, sc, sd, sh, sw,
                       STD: tl.constexpr, STH: tl.constexpr, STW: tl.constexpr,
                       ZD: tl.constexpr, ZH: tl.constexpr, ZW: tl.constexpr,
                       BLOCK: tl.constexpr, INT64: tl.constexpr):
    """Zero every element of dX in a stride phase no filter tap reaches (its gradient is
    zero): bit p of ZD / ZH / ZW marks phase p of that axis as unreached (a 1x1 filter's
    lattice: every phase but 0). Other pixels are left alone."""
    if INT64:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = offs % C
    pix = offs // C
    w = pix % W
    h = (pix // W) % H
    d = (pix // (W * H)) % D
    n = pix // (W * H * D)
    off = (((ZH >> (h % STH)) & 1) | ((ZW >> (w % STW)) & 1) | ((ZD >> (d % STD)) & 1)) != 0
    ptr = dx_ptr + n * sn + c * sc + d * sd + h * sh + w * sw
    tl.store(ptr, tl.zeros([BLOCK], dtype=dx_ptr.dtype.element_ty), mask=(offs < TOTAL) & off)


def zero_phases(call: GradCall, unreached: tuple[int, int, int]) -> None:
    """Zero dX's pixels in the stride phases marked in ``unreached`` (a bit mask an axis)."""
    g = call.geom
    dx = call.out
    total = dx.numel()
    launch_kernel(zero_phases_kernel, (cdiv(total, 1024),), dx, total, g.c, g.d, g.h,
                  g.w, *strides5(dx), STD=g.stride[0], STH=g.stride[1], STW=g.stride[2],
                  ZD=unreached[0], ZH=unreached[1], ZW=unreached[2],
                  BLOCK=1024, INT64=needs_int64(call), num_warps=4)


def unreached_phases(phases: tuple[Phase, ...]) -> tuple[int, int, int]:
    """Bit masks of the phases no tap reaches, an axis (a phase is zero when one of its
    axes is unreached)."""
    masks = [0, 0, 0]
    for p in phases:
        if p.geom is None:
            for axis, off in enumerate(p.offset):
                reached = any(q.geom is not None and q.offset[axis] == off for q in phases)
                if not reached:
                    masks[axis] |= 1 << off
    return tuple(masks)  # type: ignore[return-value]


class ForwardDgradFamily(GradFamily):
    """dgrad by one forward family on the forward problem of ``forward_problem``.

    ``kind`` says how the forward kernel tiles its problem, for ``grid``: ``gemm``
    (pixels x output channels a group), ``packed`` (whole groups in one tile),
    ``direct`` (FMA over pixel blocks) or ``span`` (FMA over spans of a row).
    """

    direction = "dgrad"

    def __init__(self, forward: KernelFamily, kind: str, lattice: bool = True) -> None:
        self.forward = forward
        self.kind = kind
        self.lattice = lattice  # can write a strided 1x1's dX through a lattice view
        self.name = f"dgrad_{forward.name}"
        self.summary = f"gradient of the input by the forward {forward.name} kernel on dY"
        self.configs = forward.dgrad_configs
        self.dtypes = forward.dtypes
        self.always_offer = forward.always_offer
        self.interpreted = forward.interpreted
        self.fills_gpu = forward.fills_gpu
        # The GEMM and packed launchers read the stored filter with its channel axes
        # swapped (``ConvCall.transposed_w``); a depthwise filter's are 1 x 1 blocks.
        self.transposes = kind in ("gemm", "packed")

    def supports(self, geom) -> str | None:
        if self.kind == "gemm" and geom.g != 1:
            return f"{self.forward.name} is an ungrouped GEMM: ungrouped layers only"
        if self.kind != "gemm" and geom.g == 1:
            return "not a grouped convolution"
        problems = self.problems(geom)
        if not problems:
            return ("no forward equivalent: padding past the filter's reach (or, at a "
                    "stride, a stride phase that would need it)")
        if not self.lattice and geom.stride != (1, 1, 1):
            return f"{self.forward.name} cannot write dX's stride phases (strided views)"
        if self.forward.int32_offsets and geom.n * geom.c * geom.d * geom.h * geom.w >= 2 ** 31:
            return (f"dX of 2**31 elements or more: {self.forward.name}'s offsets into "
                    "dX's phase views are 32-bit")
        for tg in problems:
            if reason := self.forward.rejects(tg):
                return reason
        return None

    @staticmethod
    def problems(geom) -> list[ConvGeometry]:
        """The forward problems a launch runs: one at stride 1, else one a stride phase
        that a tap reaches."""
        if geom.stride == (1, 1, 1):
            tg = transposed_geometry(geom)
            return [tg] if tg is not None else []
        return [p.geom for p in phase_problems(geom) or () if p.geom is not None]

    def schedule(self, geom, cfg) -> str | None:
        return next((note for tg in self.problems(geom)
                     if (note := self.forward.schedule(tg, cfg)) is not None), None)

    def hard_ok(self, geom, cfg, device) -> str | None:
        for tg in self.problems(geom):
            if reason := self.forward.hard_ok(tg, cfg, device):
                return reason
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        for tg in self.problems(geom):
            if reason := self.forward.config_ok(tg, cfg, device):
                return reason
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return max(self.forward.smem_bytes(tg, cfg) for tg in self.problems(geom))

    def grid(self, geom, cfg: Config) -> GradGrid:
        """The forward kernel's launch grid on the forward problem (at a stride, on the
        first phase's: one launch a phase)."""
        tg = self.problems(geom)[0]
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        taps = tg.t * tg.r * tg.s
        if self.kind == "gemm":
            bk = cfg["BLOCK_K"]
            return GradGrid(m=tg.gemm_m, n=tg.kg, red=tg.gemm_k, block_m=bm, block_n=bn,
                            tiles_m=self.forward.pixel_tiles(tg, cfg),
                            tiles_n=cdiv(tg.kg, bn), mult=tg.g,
                            k_steps=taps * cdiv(tg.cg, bk), k_block=bk)
        if self.kind == "packed":
            gpt = max(1, min(bn // tg.kg, tg.g))
            run = gpt * tg.cg
            bk = cfg.get("BLOCK_K", run)
            return GradGrid(m=tg.gemm_m, n=gpt * tg.kg, red=taps * run, block_m=bm,
                            block_n=bn, tiles_m=self.forward.pixel_tiles(tg, cfg),
                            tiles_n=cdiv(tg.g, gpt), mult=1, k_steps=taps * cdiv(run, bk),
                            k_block=bk)
        if self.kind == "span":
            spans, tiles_h, programs = span_grid(tg, bm, bn)
            return GradGrid(m=tg.gemm_m, n=tg.k, red=taps, block_m=bm, block_n=bn,
                            tiles_m=programs, tiles_n=1, mult=1, k_steps=taps, k_block=1,
                            fma=True)
        return GradGrid(m=tg.gemm_m, n=tg.k, red=taps, block_m=bm, block_n=bn,
                        tiles_m=self.forward.pixel_tiles(tg, cfg),
                        tiles_n=cdiv(tg.k, bn), mult=1, k_steps=taps, k_block=1, fma=True)

    @staticmethod
    def dy_in_layout(call: GradCall) -> GradCall:
        """The call with dY dense in the geometry's layout (the forward tiles, and spans,
        assume it)."""
        fmt = (torch.channels_last_3d if call.geom.layout == "channels_last"
               else torch.contiguous_format)
        if call.dy.is_contiguous(memory_format=fmt):
            return call
        return dataclasses.replace(call, dy=call.dy.contiguous(memory_format=fmt))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        call = self.dy_in_layout(call)
        if g.stride == (1, 1, 1):
            self._launch_forward(call, cfg, transposed_geometry(g), call.out)
            return
        phases = phase_problems(g)  # one launch a reached phase, into dX's view of it
        st = g.stride
        jobs = [functools.partial(
            self._launch_forward, call, cfg, p.geom,
            call.out[:, :, p.offset[0]::st[0], p.offset[1]::st[1], p.offset[2]::st[2]],
            p.first_tap, p.tap_step) for p in phases if p.geom is not None]
        unreached = unreached_phases(phases)
        if any(unreached):
            jobs.append(functools.partial(zero_phases, call, unreached))
        # The phases write disjoint pixels of dX: their launches overlap on side streams.
        with branches(call.out.device, len(jobs)) as contexts:
            for context, job in zip(contexts, jobs):
                with context:
                    job()

    def _launch_forward(self, call: GradCall, cfg: Config, tg: ConvGeometry,
                        out: torch.Tensor, first: tuple[int, ...] = (0, 0, 0),
                        step: tuple[int, ...] = (1, 1, 1)) -> None:
        """Run the forward kernel on ``tg`` into ``out``, reading the stored filter in
        place over the taps ``first``, ``first + step``, ... (a stride phase's)."""
        w = call.w
        if (tg.t, tg.r, tg.s) != (call.geom.t, call.geom.r, call.geom.s):
            w = w[:, :, first[0]::step[0], first[1]::step[1], first[2]::step[2]]
            w = w[:, :, :tg.t, :tg.r, :tg.s]  # a phase's taps
        conv = ConvCall(x=call.dy, w=w, out=out, bias=None, residual=None, geom=tg,
                        allow_tf32=call.allow_tf32, transposed_w=self.transposes,
                        flip_taps=tg.t * tg.r * tg.s > 1)
        self.forward.launch(conv, cfg)


FORWARD_DGRAD_FAMILIES = (
    ForwardDgradFamily(ImplicitGemmFamily(), "gemm"),
    ForwardDgradFamily(SplitKFamily(), "gemm"),
    ForwardDgradFamily(PointwiseFamily(), "gemm"),
    # TMA stores need the output as one dense matrix, which a lattice view is not.
    ForwardDgradFamily(PointwiseTmaFamily(), "gemm", lattice=False),
    ForwardDgradFamily(ImplicitGemmTmaFamily(), "gemm", lattice=False),
    ForwardDgradFamily(GroupedPackedFamily(), "packed"),
    ForwardDgradFamily(GroupedRowsFamily(), "packed"),
    ForwardDgradFamily(GroupedFlatFamily(), "packed"),
    ForwardDgradFamily(DepthwiseFamily(), "direct"),
    # dgrad_depthwise_span (kernels/dgrad_depthwise_span.py) follows: at a stride it runs
    # a kernel of its own.
)
