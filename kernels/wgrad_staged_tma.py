"""Gradient of any filter as one plain GEMM a tap over staged copies of X and dY (Hopper).

``wgrad_implicit_gemm_tma`` reads one pixel row a step (16 or 8 pixels deep on 14x14 and
7x7 maps) and cannot take strides; ``wgrad_gemm`` splits every pixel index into n, d, h,
w each step. Here one pre-pass launch copies X and dY into layouts where every tap is a
constant row shift:

- dY goes to dYp [N, Dq, Hq, Wq, K]: dY at the top-left corner, zeros elsewhere;
- X goes to Xs [phases, N, Dq, Hq, Wq, C]: per stride phase b (of each dim), the input
  pixels s * i + b - pad that the taps landing on phase b read, zeros past the edges.

With both flattened to rows, tap (kt, kr, ks) of output row q reads X row
q + ``StagedLayout.tap_rows(kt, kr, ks)``, so dW[:, :, tap] = dYp^T Xs[shift:] is one
GEMM over Q = N*Dq*Hq*Wq rows, both operands plain 2D TMA boxes. dYp's rows past the
output are zeros, so the X rows they meet add nothing (but cost time: Q is 1.31x the
output pixels on a 14x14 map, 1.65x on 7x7; and an infinite input value there would
turn 0 * inf into NaN). Any stride, dilation and padding; grouped filters with as many
input as output channels a group (16 or more) run whole groups a tile, block diagonal.
Splits add float32 slices in a fixed order (``reduce_splits``): no atomics. ResNet-50's
layer3.1.conv2 wgrad at batch 32: 61.9 -> 34.4 us, of which the copies take 6-10
(validation/results/wgrad_staged_h100/).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .base import Config, GradCall, next_pow2
from .common import cdiv, dot_precision, split_rows, strides5, tile_ids, upcast_dot
from .grad_common import GradGrid
from .implicit_gemm import make_configs
from .launcher import launch_kernel, workspace
from .pointwise_tma import rows_view
from .wgrad_gemm import MAX_WORKSPACE_BYTES, split_slices
from .wgrad_pointwise_tma import WgradTmaFamily

MIN_GROUP_CHANNELS = 16  # a block-diagonal tile of smaller groups is mostly zeros


@dataclass(frozen=True)
class _DimStage:
    """How one spatial dim is staged: output extent ``out``, staged extent ``q``,
    ``phases`` images (1 when every tap lands on the same phase ``phase0``, else
    ``stride`` and ``phase0`` 0), tap k's phase (k * dil + shift) % stride and row
    (k * dil + shift) // stride, and where staged row i of phase image p reads the input:
    stride * (i + base) + p + phase0."""

    size: int
    out: int
    q: int
    stride: int
    dil: int
    shift: int
    base: int
    phases: int
    phase0: int

    @classmethod
    def of(cls, size, out, taps, stride, dil, pad) -> _DimStage:
        k0 = -(-pad // stride)
        shift = stride * k0 - pad  # in [0, stride): tap offsets stay non-negative
        hits = {(k * dil + shift) % stride for k in range(taps)}
        last = ((taps - 1) * dil + shift) // stride
        several = len(hits) > 1
        return cls(size, out, out + last, stride, dil, shift, -k0,
                   stride if several else 1, 0 if several else min(hits))

    def tap(self, k: int) -> tuple[int, int]:
        """(phase image, staged row offset) of tap ``k``."""
        e = k * self.dil + self.shift
        return (e % self.stride if self.phases > 1 else 0), e // self.stride


@dataclass(frozen=True)
class StagedLayout:
    """The staged copies of one geometry: ``dims`` (d, h, w) and the row counts."""

    n: int
    dims: tuple[_DimStage, _DimStage, _DimStage]

    @classmethod
    @lru_cache(maxsize=1024)
    def of(cls, geom) -> StagedLayout:
        """The layout of ``geom`` (cached: the feasibility rule, every config's grid and
        each launch ask for it)."""
        taps = (geom.t, geom.r, geom.s)
        size = (geom.d, geom.h, geom.w)
        return cls(geom.n, tuple(_DimStage.of(size[i], geom.out_spatial[i], taps[i],
                                              geom.stride[i], geom.dilation[i], geom.pad[i])
                                 for i in range(3)))

    @property
    def image_rows(self) -> int:
        """Rows of dYp, and of one phase image of Xs: N * Dq * Hq * Wq."""
        d, h, w = self.dims
        return self.n * d.q * h.q * w.q

    @property
    def phases(self) -> int:
        d, h, w = self.dims
        return d.phases * h.phases * w.phases

    def tap_rows(self, kt: int, kr: int, ks: int) -> int:
        """X row of output row q for tap (kt, kr, ks): q + this (the kernel's formula)."""
        (pd, ad), (ph, ah), (pw, aw) = (dim.tap(k) for dim, k in zip(self.dims, (kt, kr, ks)))
        d, h, w = self.dims
        phase = (pd * h.phases + ph) * w.phases + pw
        return phase * self.image_rows + (ad * h.q + ah) * w.q + aw

    def waste(self, geom) -> float:
        """Staged rows a GEMM reduces over per output pixel (>= 1)."""
        return self.image_rows / max(geom.gemm_m, 1)

    def dy_staged(self) -> bool:
        """False when dYp is dY itself (a 1x1 filter: no staged rows past the output)."""
        return any(dim.q != dim.out for dim in self.dims)

    def bytes(self, geom) -> int:
        """Scratch bytes of the staged copies (16-byte channel rows)."""
        rows = self.image_rows
        total = rows * self.phases * _pitch(geom.c, geom.elem_bytes)
        if self.dy_staged():
            total += rows * _pitch(geom.k, geom.elem_bytes)
        return total * geom.elem_bytes


def _pitch(channels: int, elem_bytes: int) -> int:
    """Channels a staged row holds: ``channels`` rounded up to 16 bytes (TMA's pitch)."""
    per = max(16 // elem_bytes, 1)
    return -(-channels // per) * per


@triton.jit
def _stage_rows(block, rows, src_ptr, dst_ptr, C, N, DQ, HQ, WQ, D, H, W, sn, sc, sd, sh, sw,
                st_d, st_h, st_w, base_d, base_h, base_w, ph0_d, ph0_h, ph0_w,
                PH_D: tl.constexpr, PH_H: tl.constexpr, PH_W: tl.constexpr,
                PITCH: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr,
                BLOCK_C: tl.constexpr):
    """BLOCK_R staged rows of pixels ([phase_d, phase_h, phase_w, N, DQ, HQ]) of dst from
    row ``block * BLOCK_R``, BLOCK_W columns x BLOCK_C channels each: the source pixels
    they read, zero past the source's edges. A row is decoded once (int32), not a pixel."""
    row = block * BLOCK_R + tl.arange(0, BLOCK_R)
    phase, n, idd, ih = split_rows(row, N, DQ, HQ)
    pd, _, ph, pw = split_rows(phase, 1, PH_H, PH_W)
    iw = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    c = tl.program_id(2) * BLOCK_C + tl.arange(0, BLOCK_C)
    # Staged row i of phase image p reads input st * (i + base) + p + ph0 (one of p, ph0
    # is zero: p when a dim has one phase image, ph0 when it has several).
    xd = st_d * (idd + base_d) + pd + ph0_d
    xh = st_h * (ih + base_h) + ph + ph0_h
    row_in = (row < rows) & (xd >= 0) & (xd < D) & (xh >= 0) & (xh < H)
    xw = st_w * (iw[None, :] + base_w) + (pw + ph0_w)[:, None]  # [rows, columns]
    inside = row_in[:, None] & (xw >= 0) & (xw < W)  # [rows, columns]
    c_ok = c < C
    src_row = n.to(tl.int64) * sn + xd.to(tl.int64) * sd + xh.to(tl.int64) * sh
    src_off = (src_row[:, None] + xw * sw)[:, :, None] + (c * sc)[None, None, :]
    v = tl.load(src_ptr + src_off, mask=inside[:, :, None] & c_ok[None, None, :], other=0.0)
    dst_off = ((row.to(tl.int64) * WQ)[:, None] + iw[None, :]) * PITCH
    keep = ((row < rows)[:, None] & (iw < WQ)[None, :])[:, :, None] & c_ok[None, None, :]
    tl.store(dst_ptr + dst_off[:, :, None] + c[None, None, :], v, mask=keep)


@triton.jit
def stage_kernel(
    x_ptr, xs_ptr, C, D, H, W, sxn, sxc, sxd, sxh, sxw, dy_ptr, dys_ptr, K, OD, OH, OW, syn,
    syc, syd, syh, syw, N, DQ, HQ, WQ, X_ROWS, X_BLOCKS, Y_ROWS, st_d, st_h, st_w, base_d,
    base_h, base_w, ph0_d, ph0_h, ph0_w, PH_D: tl.constexpr, PH_H: tl.constexpr, PH_W: tl.constexpr,
    X_PITCH: tl.constexpr, Y_PITCH: tl.constexpr, STAGE_DY: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_C: tl.constexpr,
):
    """Both staged copies in one launch: the first X_BLOCKS blocks of rows of pixels are
    Xs's, the rest dYp's (dY at the top-left corner: its row i is output row i)."""
    block = tl.program_id(0)
    if block < X_BLOCKS:
        _stage_rows(block, X_ROWS, x_ptr, xs_ptr, C, N, DQ, HQ, WQ, D, H, W, sxn, sxc, sxd, sxh,
                    sxw, st_d, st_h, st_w, base_d, base_h, base_w, ph0_d, ph0_h, ph0_w,
                    PH_D, PH_H, PH_W, X_PITCH, BLOCK_R, BLOCK_W, BLOCK_C)
    elif STAGE_DY:
        _stage_rows(block - X_BLOCKS, Y_ROWS, dy_ptr, dys_ptr, K, N, DQ, HQ, WQ, OD, OH, OW,
                    syn, syc, syd, syh, syw, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, Y_PITCH, BLOCK_R,
                    BLOCK_W, BLOCK_C)


STAGE_BLOCK = 8192  # elements a staging program moves: 64 a thread over 4 warps


def stage(x, dy, geom, layout: StagedLayout):
    """(Xs, dYp): the staged copies as [rows, channels] views of scratch buffers with
    16-byte rows, one launch. dYp is dY itself where no row needs staging and dY's rows
    are dense (a 1x1 filter)."""
    c, k = geom.c, geom.k
    d, h, w = layout.dims
    x_pitch, y_pitch = _pitch(c, x.element_size()), _pitch(k, dy.element_size())
    xs = workspace((layout.image_rows * layout.phases, x_pitch), x.device, x.dtype)
    dys = None if layout.dy_staged() else rows_view(dy, k)
    staged_dy = dys is None
    if staged_dy:
        dys = workspace((layout.image_rows, y_pitch), dy.device, dy.dtype)
    y_rows = layout.n * d.q * h.q  # rows of pixels
    x_rows = layout.phases * y_rows
    channels = max(c, k if staged_dy else 1)
    block_c = min(max(next_pow2(channels), 8), 128)
    block_w = min(next_pow2(w.q), max(STAGE_BLOCK // block_c, 1))
    block_r = min(max(STAGE_BLOCK // (block_w * block_c), 1), 16)
    x_blocks = cdiv(x_rows, block_r)
    blocks = x_blocks + (cdiv(y_rows, block_r) if staged_dy else 0)
    launch_kernel(stage_kernel, (blocks, cdiv(w.q, block_w), cdiv(channels, block_c)),
                  x, xs, c, d.size, h.size, w.size, *strides5(x),
                  dy, dys, k, d.out, h.out, w.out, *strides5(dy),
                  layout.n, d.q, h.q, w.q, x_rows, x_blocks, y_rows,
                  *(dim.stride for dim in layout.dims), *(dim.base for dim in layout.dims),
                  *(dim.phase0 for dim in layout.dims),
                  PH_D=d.phases, PH_H=h.phases, PH_W=w.phases, X_PITCH=x_pitch,
                  Y_PITCH=y_pitch, STAGE_DY=staged_dy, BLOCK_R=block_r, BLOCK_W=block_w,
                  BLOCK_C=block_c,
                  num_warps=4)
    return xs, dys


@triton.jit
def _tap_row(k, dil, shift, st, PHASES: tl.constexpr):
    """(phase image, staged row offset) of tap ``k`` of one dim (``_DimStage.tap``)."""
    e = k * dil + shift
    if PHASES > 1:
        return e % st, e // st
    return 0, e // st


@triton.jit
def wgrad_staged_kernel(
    dy_desc, x_desc, dw_ptr, ws_ptr, KTOT, CTOT, KG, CG, R, S, IMAGE_ROWS, HQ, WQ,
    dl_d, dl_h, dl_w, sh_d, sh_h, sh_w, st_d, st_h, st_w, ITERS_PER_SPLIT, WS_STRIDE,
    swk, swc, swt, swr, sws,
    PH_D: tl.constexpr, PH_H: tl.constexpr, PH_W: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, PACKED: tl.constexpr, SPLIT_K: tl.constexpr, PREC: tl.constexpr,
    UPCAST: tl.constexpr,
):
    if PACKED:  # a tile holds whole groups: the same channels of dY and X
        pid_m = tl.program_id(0)
        pid_n = pid_m
    else:
        pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(KTOT, BLOCK_M),
                                tl.cdiv(CTOT, BLOCK_N), GROUP_M)
    tap = tl.program_id(1)
    pid_k = tl.program_id(2)
    ks = tap % S
    kr = (tap // S) % R
    kt = tap // (S * R)
    pd, ad = _tap_row(kt, dl_d, sh_d, st_d, PH_D)
    ph, ah = _tap_row(kr, dl_h, sh_h, st_h, PH_H)
    pw, aw = _tap_row(ks, dl_w, sh_w, st_w, PH_W)
    shift = ((pd * PH_H + ph) * PH_W + pw) * IMAGE_ROWS + (ad * HQ + ah) * WQ + aw
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    q = pid_k * ITERS_PER_SPLIT * BLOCK_K
    for _ in range(0, ITERS_PER_SPLIT):
        a = dy_desc.load([q, off_m])  # [rows, output channels]; zeros past the end
        b = x_desc.load([q + shift, off_n])  # [rows, input channels] of the tap
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a.T, b, acc, input_precision=PREC)
        q += BLOCK_K
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_n = off_n + tl.arange(0, BLOCK_N)
    # Dense: KG = KTOT and CG = CTOT, one group. Packed: the block-diagonal part.
    mask = ((offs_m < KTOT)[:, None] & (offs_n < CTOT)[None, :]
            & ((offs_m // KG)[:, None] == (offs_n // CG)[None, :]))
    c_loc = offs_n % CG
    if SPLIT_K == 1:
        w_off = ((offs_m * swk)[:, None] + (c_loc * swc)[None, :]
                 + kt * swt + kr * swr + ks * sws)
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, taps, K, C/G] of reduce_splits.
        ws_off = tap * KTOT * CG + (offs_m * CG)[:, None] + c_loc[None, :]
        tl.store(ws_ptr + pid_k.to(tl.int64) * WS_STRIDE + ws_off, acc, mask=mask)


def packed(geom) -> bool:
    """Grouped: a tile holds whole groups (block diagonal)."""
    return geom.g > 1


def staged_grid(geom, cfg: Config) -> GradGrid:
    """Channel tiles (packs of whole groups when grouped) per tap, reducing over the
    staged rows."""
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    rows = StagedLayout.of(geom).image_rows
    taps = geom.t * geom.r * geom.s
    if packed(geom):
        return GradGrid(m=bm, n=bn, red=rows, block_m=bm, block_n=bn, tiles_m=1, tiles_n=1,
                        mult=cdiv(geom.k, bm) * taps, k_steps=cdiv(rows, bk), k_block=bk)
    return GradGrid(m=geom.k, n=geom.c, red=rows, block_m=bm, block_n=bn,
                    tiles_m=cdiv(geom.k, bm), tiles_n=cdiv(geom.c, bn), mult=taps,
                    k_steps=cdiv(rows, bk), k_block=bk)


def launch_wgrad_staged(call: GradCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    layout = StagedLayout.of(g)
    xs, dys = stage(call.x, call.dy, g, layout)
    split = cfg.get("SPLIT_K", 1)
    tiles = staged_grid(g, cfg)
    taps = g.t * g.r * g.s
    d, h, w = layout.dims
    grouped = packed(g)
    with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
        launch_kernel(wgrad_staged_kernel,
            (cdiv(g.k, bm) if grouped else tiles.tiles_m * tiles.tiles_n, taps, slices),
            TensorDescriptor(dys, [dys.shape[0], g.k], [dys.stride(0), 1], [bk, bm]),
            TensorDescriptor(xs, [xs.shape[0], g.c], [xs.stride(0), 1], [bk, bn]),
            call.out, ws, g.k, g.c, g.kg, g.cg, g.r, g.s, layout.image_rows, h.q, w.q,
            d.dil, h.dil, w.dil, d.shift, h.shift, w.shift, d.stride, h.stride, w.stride,
            per_split, g.k * g.cg * taps, *strides5(call.out),
            PH_D=d.phases, PH_H=h.phases, PH_W=w.phases,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 4),
            PACKED=grouped, SPLIT_K=split, PREC=dot_precision(call), UPCAST=upcast_dot(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )


# (BLOCK_M over output channels, BLOCK_N over input channels, BLOCK_K staged rows a step,
# num_warps, num_stages): wgrad_pointwise_tma's tiles, the same GEMM.
STAGED_TILES = (
    (64, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 128, 64, 8, 3),
    (128, 128, 128, 8, 3), (128, 256, 64, 8, 3),
)
# wgrad_gemm's splits with 2, 3 and 8: ResNet-50's 3x3 on 14x14 maps at batch 32 has 72
# tiles of 64 x 128, two programs an SM fit: 4 splits make 288 programs for 264 places,
# a second wave of 24 (Nsight Compute, call 101), 3 make 216.
STAGED_SPLITS = (1, 2, 3, 4, 8, 16, 64)


class WgradStagedTmaFamily(WgradTmaFamily):
    name = "wgrad_staged_tma"
    summary = ("gradient of any filter: X and dY copied once into zero-padded, "
               "stride-phase layouts where each tap is a plain GEMM at a row shift, TMA "
               "boxes, split with a fixed-order reduction")
    configs = tuple(c for s in STAGED_SPLITS
                    for c in make_configs(STAGED_TILES, GROUP_M=4, SPLIT_K=s))

    def supports(self, geom) -> str | None:
        if geom.is_pointwise and geom.stride == (1, 1, 1) and geom.pad == (0, 0, 0):
            return "1x1 without stride or padding: wgrad_pointwise_tma reads it as it is"
        if geom.g > 1:
            if geom.cg != geom.kg:
                return (f"{geom.cg} in / {geom.kg} out channels a group: a packed tile "
                        "needs as many of each")
            if geom.cg < MIN_GROUP_CHANNELS:
                return (f"{geom.cg} channels a group: a block-diagonal tile of fewer than "
                        f"{MIN_GROUP_CHANNELS} is mostly zeros")
        need = StagedLayout.of(geom).bytes(geom)
        if need > MAX_WORKSPACE_BYTES:
            return f"the staged copies need {need >> 20} MiB"
        return None

    def grid(self, geom, cfg: Config) -> GradGrid:
        return staged_grid(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        if packed(geom):
            if cfg["BLOCK_M"] != cfg["BLOCK_N"] or cfg["BLOCK_M"] % geom.cg:
                return (f"BLOCK_M={cfg['BLOCK_M']} x BLOCK_N={cfg['BLOCK_N']} does not hold "
                        f"whole groups of {geom.cg} channels on its diagonal")
        return super().config_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_wgrad_staged(call, cfg)
