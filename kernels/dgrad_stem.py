"""Gradient of the input for few-input-channel stems (C <= 8, e.g. RGB 7x7/s2).

``dgrad_gemm`` makes the C input channels its N dimension: for C = 3 a 16-wide
matrix tile is mostly padding, and the reduction walks K x taps in short steps.
Here the gradient runs in two passes, both without atomics:

1. columns: dcol[p, (t, r, s, c)] = sum over k of dY[p, k] W[k, c, t, r, s], one
   dense GEMM of output pixels x the T*R*S*C flattened filter columns (147 for a
   7x7 RGB stem), reduced over the K output channels, into a float32 workspace;
2. col2im: every input element gathers the columns of the output pixels whose
   window covers it (at most ceil(R/stride) x ceil(S/stride) of them) in a fixed
   order, and is written once (zero where no window reaches it).

Images are processed in chunks whose workspace stays under ``MAX_COL_BYTES``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2, tile_fits
from .common import cdiv, dot_precision, needs_int64, split_rows, strides5, upcast_dot
from .grad_common import GradGrid, grad_acc
from .implicit_gemm import make_configs
from .launcher import launch_kernel, workspace
from .stem import StemGradFamily, filter_cols, filter_columns

_RUNTIME_INTS = ["M", "D", "H", "W", "OD", "OH", "OW", "std", "sth", "stw", "pdd", "pdh",
                 "pdw", "dld", "dlh", "dlw", "N0"]
# Most float32 column workspace one chunk of images may use.
MAX_COL_BYTES = 256 << 20
# Input pixels a col2im program gathers.
GATHER_BLOCK = 128


def col_stride(geom) -> int:
    """Row length of the column workspace: the filter columns, rounded to 16 bytes."""
    return cdiv(filter_cols(geom), 4) * 4


@triton.jit(do_not_specialize=["M", "KTOT", "COLS", "OD", "OH", "OW", "ROW0"])
def dgrad_stem_cols_kernel(
    dy_ptr, w_ptr, col_ptr, M, KTOT, COLS, OD, OH, OW, ROW0,
    syn, syc, syd, syh, syw, swk, swc, swt, swr, sws,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, KC: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    PREC: tl.constexpr, ACC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    """dcol[M pixels, filter columns] = dY[M, K] x W[K, columns] for the chunk of images
    whose first output pixel is ROW0."""
    KDIM: tl.constexpr = KT * KR * KS * KC
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_j = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    j_mask = offs_j < KDIM
    kt, kr, ks, c = filter_columns(offs_j, KR, KS, KC)
    w_col = c * swc + kt * swt + kr * swr + ks * sws
    n, od, oh, ow = split_rows(ROW0 + offs_m, OD, OH, OW)
    if INT64:
        n = n.to(tl.int64)
    y_row = n * syn + od * syd + oh * syh + ow * syw
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, KTOT, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        k_ok = kk < KTOT
        a = tl.load(dy_ptr + y_row[:, None] + (kk * syc)[None, :],
                    mask=m_mask[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptr + (kk * swk)[:, None] + w_col[None, :],
                    mask=k_ok[:, None] & j_mask[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=ACC)
    tl.store(col_ptr + (offs_m * COLS)[:, None] + offs_j[None, :], acc,
             mask=m_mask[:, None] & j_mask[None, :])


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def dgrad_stem_gather_kernel(
    col_ptr, dx_ptr, M, COLS, D, H, W, OD, OH, OW,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, N0,
    sxn, sxc, sxd, sxh, sxw,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, KC: tl.constexpr,
    C_P2: tl.constexpr, BLOCK: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
):
    """dX[input pixels of the chunk, C] = sum over the taps whose output pixel exists of
    dcol[that pixel, (tap, c)], in tap order."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cs = tl.arange(0, C_P2)
    p_ok = offs < M
    c_ok = cs < KC
    n, idd, ih, iw = split_rows(offs, D, H, W)
    acc = tl.zeros((BLOCK, C_P2), dtype=ACC)
    for kt in tl.static_range(KT):
        td = idd + pdd - kt * dld
        od = td // std
        ok_d = (td >= 0) & (td % std == 0) & (od < OD)
        for kr in tl.static_range(KR):
            th = ih + pdh - kr * dlh
            oh = th // sth
            ok_h = ok_d & (th >= 0) & (th % sth == 0) & (oh < OH)
            for ks in tl.static_range(KS):
                tw = iw + pdw - ks * dlw
                ow = tw // stw
                ok = p_ok & ok_h & (tw >= 0) & (tw % stw == 0) & (ow < OW)
                row = ((n * OD + od) * OH + oh) * OW + ow
                if INT64:
                    row = row.to(tl.int64)
                col = ((kt * KR + kr) * KS + ks) * KC + cs
                v = tl.load(col_ptr + (row * COLS)[:, None] + col[None, :],
                            mask=ok[:, None] & c_ok[None, :], other=0.0)
                acc += v
    n_img = n + N0
    if INT64:
        n_img = n_img.to(tl.int64)
    x_off = n_img * sxn + idd * sxd + ih * sxh + iw * sxw
    tl.store(dx_ptr + x_off[:, None] + (cs * sxc)[None, :], acc.to(dx_ptr.dtype.element_ty),
             mask=p_ok[:, None] & c_ok[None, :])


# (BLOCK_M over output pixels, BLOCK_N over the flattened filter columns, BLOCK_K over
# output channels, num_warps, num_stages)
DGRAD_STEM_TILES = (
    (64, 64, 32, 4, 3), (64, 64, 64, 4, 3), (128, 32, 64, 4, 3), (128, 64, 32, 4, 3),
    (128, 64, 64, 4, 3), (128, 128, 32, 8, 3), (128, 256, 32, 8, 3), (256, 64, 32, 8, 3),
)


def chunk_images(geom) -> int:
    """Images a chunk holds so that its column workspace fits MAX_COL_BYTES."""
    od, oh, ow = geom.out_spatial
    per_image = od * oh * ow * col_stride(geom) * 4
    return max(1, min(geom.n, MAX_COL_BYTES // max(per_image, 1)))


class DgradStemFamily(StemGradFamily):
    name = "dgrad_stem"
    summary = ("gradient of the input for few input channels: a dense GEMM into the "
               "flattened filter columns, then a fixed-order col2im gather")
    direction = "dgrad"
    configs = make_configs(DGRAD_STEM_TILES)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """The column GEMM: output pixels x filter columns, reduced over K."""
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        cols = filter_cols(geom)
        return GradGrid(m=geom.gemm_m, n=cols, red=geom.k, block_m=bm, block_n=bn,
                        tiles_m=cdiv(geom.gemm_m, bm), tiles_n=cdiv(cols, bn), mult=1,
                        k_steps=cdiv(geom.k, bk), k_block=bk)

    def config_ok(self, geom, cfg, device) -> str | None:
        cols = filter_cols(geom)
        if not tile_fits(cfg["BLOCK_N"], cols, 32):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {cols} filter columns"
        if not tile_fits(cfg["BLOCK_K"], geom.k, 32):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {geom.k} output channels"
        if not tile_fits(cfg["BLOCK_M"], geom.gemm_m, 64):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.gemm_m} output pixels"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        import torch

        g = call.geom
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        od, oh, ow = g.out_spatial
        per_img_out, per_img_in = od * oh * ow, g.d * g.h * g.w
        cols, stride = filter_cols(g), col_stride(g)
        chunk = chunk_images(g)
        acc_dtype = torch.float64 if g.dtype == "float64" else torch.float32
        col = workspace((chunk * per_img_out, stride), call.dy.device, acc_dtype)
        int64 = needs_int64(call)
        for n0 in range(0, g.n, chunk):
            imgs = min(chunk, g.n - n0)
            m_out, m_in = imgs * per_img_out, imgs * per_img_in
            launch_kernel(dgrad_stem_cols_kernel, (cdiv(m_out, bm), cdiv(cols, bn)),
                call.dy, call.w, col, m_out, g.k, stride, od, oh, ow, n0 * per_img_out,
                *strides5(call.dy), *strides5(call.w),
                KT=g.t, KR=g.r, KS=g.s, KC=g.c, BLOCK_M=bm, BLOCK_N=bn,
                BLOCK_K=cfg["BLOCK_K"], PREC=dot_precision(call), ACC=grad_acc(call),
                UPCAST=upcast_dot(call), INT64=int64,
                num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
            )
            launch_kernel(dgrad_stem_gather_kernel, (cdiv(m_in, GATHER_BLOCK),),
                col, call.out, m_in, stride, g.d, g.h, g.w, od, oh, ow,
                *g.stride, *g.pad, *g.dilation, n0, *strides5(call.out),
                KT=g.t, KR=g.r, KS=g.s, KC=g.c, C_P2=next_pow2(g.c), BLOCK=GATHER_BLOCK,
                ACC=grad_acc(call), INT64=int64, num_warps=4,
            )
