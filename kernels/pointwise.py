"""1x1 (pointwise) convolution as a plain GEMM: [M, C] x [C, K], no spatial index math.

Each output row reads one input pixel (strided for stride > 1), so the K loop
only advances pointers along channels.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily
from .common import (
    cdiv,
    dot_precision,
    needs_int64,
    out_args,
    split_rows,
    store_tile,
    strides5,
    tile_ids,
    upcast_dot,
    weight_strides,
)
from .implicit_gemm import DENSE_TILES, gemm_smem, make_configs, tiles_fit
from .launcher import launch_kernel


@triton.jit(do_not_specialize=["M", "OD", "OH", "OW", "std", "sth", "stw"])
def pointwise_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, C, KTOT, OD, OH, OW, std, sth, stw,
    sxn, sxc, sxd, sxh, sxw, swk, swc,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, EVEN_C: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(KTOT, BLOCK_N),
                            GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_c = tl.arange(0, BLOCK_K)
    m_mask = offs_m < M
    n_mask = offs_n < KTOT
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    if INT64:
        x_row = n.to(tl.int64) * sxn + (od * std).to(tl.int64) * sxd \
            + (oh * sth).to(tl.int64) * sxh + (ow * stw).to(tl.int64) * sxw
        w_col = offs_n.to(tl.int64) * swk
    else:
        x_row = n * sxn + od * std * sxd + oh * sth * sxh + ow * stw * sxw
        w_col = offs_n * swk
    a_ptrs = x_ptr + x_row[:, None] + (offs_c * sxc)[None, :]
    b_ptrs = w_ptr + w_col[None, :] + (offs_c * swc)[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_K):
        if EVEN_C:
            a = tl.load(a_ptrs, mask=m_mask[:, None], other=0.0)
            b = tl.load(b_ptrs, mask=n_mask[None, :], other=0.0)
        else:
            c_ok = offs_c < C - c0
            a = tl.load(a_ptrs, mask=m_mask[:, None] & c_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=c_ok[:, None] & n_mask[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        a_ptrs += BLOCK_K * sxc
        b_ptrs += BLOCK_K * swc
    store_tile(acc, n, od, oh, ow, m_mask, offs_n, n_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


def launch_pointwise(call: ConvCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    grid = (cdiv(g.gemm_m, bm) * cdiv(g.k, bn),)
    sx = strides5(call.x)
    sw = weight_strides(call)
    launch_kernel(pointwise_kernel, grid,
        call.x, call.w, *out_args(call),
        g.gemm_m, g.c, g.k, *g.out_spatial, *g.stride, *sx, sw[0], sw[1],
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8),
        EVEN_C=g.c % bk == 0, ACT=call.activation, HAS_BIAS=call.bias is not None,
        HAS_RES=call.residual is not None, PREC=dot_precision(call),
        UPCAST=upcast_dot(call), INT64=needs_int64(call),
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )


class PointwiseFamily(KernelFamily):
    name = "pointwise"
    summary = "1x1 convolution as a GEMM over channels (any stride)"
    configs = make_configs(DENSE_TILES, GROUP_M=8)

    def supports(self, geom) -> str | None:
        if not geom.is_pointwise:
            return "filter is not 1x1 with zero padding"
        if geom.g != 1:
            return "grouped 1x1 convolutions go to grouped_gemm"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        return tiles_fit(geom, cfg) or super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_pointwise(call, cfg)
