"""Gradient of the input through the forward kernels.

At stride 1, dX is a forward convolution of dY: input and output channels swapped
within each group, the filter's taps reversed (``transposed_geometry``). A 1x1
filter without padding needs no reversal at any stride: dX's pixels on the stride
lattice are dY times the transposed filter and every other pixel is zero
(``lattice_geometry``). Each family here runs one forward family's kernel and
config space on that forward problem, so the forward kernels' work (the tap loop,
TMA tiles, packed groups, spans) serves the backward pass too.

How the filter reaches the forward kernel:
- ungrouped: in place. The GEMM launchers read the filter through strides, so the
  swapped channel axes are a stride swap (``ConvCall.transposed_w``) and the
  implicit GEMM walks the taps backwards (``ConvCall.flip_taps``): no copy of a
  filter that can hold millions of values.
- grouped and depthwise: a copy, transposed within each group and flipped
  (``regroup_kernel``, into launch scratch): C x K/g x taps values, small next to
  dY and dX.
"""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from .base import Config, ConvCall, GradCall, KernelFamily
from .common import cdiv, needs_int64, pixel_grid, strides5
from .depthwise import DepthwiseFamily
from .depthwise_span import DepthwiseSpanFamily, span_grid
from .geometry import ConvGeometry
from .grad_common import GradFamily, GradGrid
from .grouped_packed import GroupedPackedFamily
from .grouped_rows import GroupedRowsFamily
from .implicit_gemm import ImplicitGemmFamily
from .implicit_gemm_tma import ImplicitGemmTmaFamily
from .launcher import launch_kernel, workspace
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


@triton.jit
def regroup_kernel(w_ptr, out_ptr, TOTAL, CG, KG, T, R, S,
                   swk, swc, swt, swr, sws, sok, soc, sot, sor, sos, BLOCK: tl.constexpr):
    """out[g*CG + c, k, t, r, s] = w[g*KG + k, c, T-1-t, R-1-r, S-1-s]: the filter of the
    transposed convolution (channels swapped within each group, taps reversed)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < TOTAL
    s = offs % S
    r = (offs // S) % R
    t = (offs // (S * R)) % T
    k = (offs // (S * R * T)) % KG
    co = offs // (S * R * T * KG)
    grp = co // CG
    src = ((grp * KG + k) * swk + (co % CG) * swc + (T - 1 - t) * swt + (R - 1 - r) * swr
           + (S - 1 - s) * sws)
    dst = co * sok + k * soc + t * sot + r * sor + s * sos
    tl.store(out_ptr + dst, tl.load(w_ptr + src, mask=mask), mask=mask)


@triton.jit(do_not_specialize=["TOTAL", "D", "H", "W"])
def zero_off_lattice_kernel(dx_ptr, TOTAL, C, D, H, W, sn, sc, sd, sh, sw,
                            STD: tl.constexpr, STH: tl.constexpr, STW: tl.constexpr,
                            BLOCK: tl.constexpr, INT64: tl.constexpr):
    """Zero every element of dX whose pixel is off the stride lattice (no output pixel's
    1x1 window reads it, so its gradient is zero); lattice pixels are left alone."""
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
    off = (h % STH != 0) | (w % STW != 0) | (d % STD != 0)
    ptr = dx_ptr + n * sn + c * sc + d * sd + h * sh + w * sw
    tl.store(ptr, tl.zeros([BLOCK], dtype=dx_ptr.dtype.element_ty), mask=(offs < TOTAL) & off)


def filter_strides(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """Strides of a dense [K, C, T, R, S] filter: channels innermost for channels_last."""
    k, c, t, r, s = shape
    if layout == "channels_last":
        return (t * r * s * c, 1, r * s * c, s * c, c)
    return (c * t * r * s, t * r * s, r * s, s, 1)


def regrouped_filter(call: GradCall, tg: ConvGeometry) -> torch.Tensor:
    """The transposed convolution's filter [C, K/g, T, R, S] in launch scratch (in ``tg``'s
    layout, so the forward kernel reads it as it reads a user's filter)."""
    g, w = call.geom, call.w
    shape = (g.c, g.kg, g.t, g.r, g.s)
    out = workspace(shape, w.device, w.dtype, strides=filter_strides(shape, tg.layout))
    total = out.numel()
    launch_kernel(regroup_kernel, (cdiv(total, 1024),), w, out, total, g.cg, g.kg,
                  g.t, g.r, g.s, *strides5(w), *strides5(out), BLOCK=1024)
    return out


def zero_off_lattice(call: GradCall) -> None:
    g = call.geom
    dx = call.out
    total = dx.numel()
    launch_kernel(zero_off_lattice_kernel, (cdiv(total, 1024),), dx, total, g.c, g.d, g.h,
                  g.w, *strides5(dx), STD=g.stride[0], STH=g.stride[1], STW=g.stride[2],
                  BLOCK=1024, INT64=needs_int64(call), num_warps=4)


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
        self.configs = forward.configs
        self.dtypes = forward.dtypes
        self.always_offer = forward.always_offer
        # Ungrouped GEMM launchers read the stored filter in place (strides); the others
        # get a regrouped copy.
        self.in_place = kind == "gemm"

    def supports(self, geom) -> str | None:
        if self.in_place and geom.g != 1:
            return f"{self.forward.name} reads the filter in place: ungrouped layers only"
        if not self.in_place and geom.g == 1:
            return "not a grouped convolution"
        tg = forward_problem(geom)
        if tg is None:
            return ("no forward equivalent: stride > 1 (other than a 1x1 filter without "
                    "padding) or padding past the filter's reach")
        if not self.lattice and tg.stride != geom.stride:
            return f"{self.forward.name} cannot write dX's stride lattice (a strided view)"
        return self.forward.rejects(tg)

    def hard_ok(self, geom, cfg, device) -> str | None:
        return self.forward.hard_ok(forward_problem(geom), cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        return self.forward.config_ok(forward_problem(geom), cfg, device)

    def smem_bytes(self, geom, cfg: Config) -> int:
        return self.forward.smem_bytes(forward_problem(geom), cfg)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """The forward kernel's launch grid on the forward problem."""
        tg = forward_problem(geom)
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        taps = tg.t * tg.r * tg.s
        if self.kind == "gemm":
            bk = cfg["BLOCK_K"]
            return GradGrid(m=tg.gemm_m, n=tg.kg, red=tg.gemm_k, block_m=bm, block_n=bn,
                            tiles_m=pixel_grid(tg, bm, cfg.get("TILE_W", 0))[0],
                            tiles_n=cdiv(tg.kg, bn), mult=tg.g,
                            k_steps=taps * cdiv(tg.cg, bk), k_block=bk)
        if self.kind == "packed":
            gpt = max(1, min(bn // tg.kg, tg.g))
            run = gpt * tg.cg
            bk = cfg.get("BLOCK_K", run)
            return GradGrid(m=tg.gemm_m, n=gpt * tg.kg, red=taps * run, block_m=bm,
                            block_n=bn, tiles_m=pixel_grid(tg, bm, cfg.get("TILE_W", 0))[0],
                            tiles_n=cdiv(tg.g, gpt), mult=1, k_steps=taps * cdiv(run, bk),
                            k_block=bk)
        if self.kind == "span":
            spans, tiles_h, programs = span_grid(tg, bm, bn)
            return GradGrid(m=tg.gemm_m, n=tg.k, red=taps, block_m=bm, block_n=bn,
                            tiles_m=programs, tiles_n=1, mult=1, k_steps=taps, k_block=1,
                            fma=True)
        return GradGrid(m=tg.gemm_m, n=tg.k, red=taps, block_m=bm, block_n=bn,
                        tiles_m=pixel_grid(tg, bm, cfg.get("TILE_W", 0))[0],
                        tiles_n=cdiv(tg.k, bn), mult=1, k_steps=taps, k_block=1, fma=True)

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        tg = forward_problem(g)
        dy = call.dy
        fmt = torch.channels_last_3d if tg.layout == "channels_last" else torch.contiguous_format
        if not dy.is_contiguous(memory_format=fmt):  # forward tiles assume tg's layout
            dy = dy.contiguous(memory_format=fmt)
        out = call.out
        if tg.stride != g.stride:  # 1x1 lattice: the forward output is every stride-th pixel
            out = out[:, :, ::g.stride[0], ::g.stride[1], ::g.stride[2]]
        if self.in_place:
            conv = ConvCall(x=dy, w=call.w, out=out, bias=None, residual=None, geom=tg,
                            allow_tf32=call.allow_tf32, transposed_w=True,
                            flip_taps=tg.t * tg.r * tg.s > 1)
        else:
            conv = ConvCall(x=dy, w=regrouped_filter(call, tg), out=out, bias=None,
                            residual=None, geom=tg, allow_tf32=call.allow_tf32)
        self.forward.launch(conv, cfg)
        if out is not call.out:
            zero_off_lattice(call)


FORWARD_DGRAD_FAMILIES = (
    ForwardDgradFamily(ImplicitGemmFamily(), "gemm"),
    ForwardDgradFamily(SplitKFamily(), "gemm"),
    ForwardDgradFamily(PointwiseFamily(), "gemm"),
    # TMA stores need the output as one dense matrix, which a lattice view is not.
    ForwardDgradFamily(PointwiseTmaFamily(), "gemm", lattice=False),
    ForwardDgradFamily(ImplicitGemmTmaFamily(), "gemm", lattice=False),
    ForwardDgradFamily(GroupedPackedFamily(), "packed"),
    ForwardDgradFamily(GroupedRowsFamily(), "packed"),
    ForwardDgradFamily(DepthwiseFamily(), "direct"),
    ForwardDgradFamily(DepthwiseSpanFamily(), "span"),
)
