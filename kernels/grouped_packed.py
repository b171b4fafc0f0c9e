"""Packed block-diagonal implicit GEMM for grouped convolutions with few channels a group.

ResNeXt-style layers (4..32 channels a group) make per-group GEMMs too narrow
for the matrix units. Here one program covers BLOCK_M output pixels x
``GPT = BLOCK_N // KG`` whole groups. Those groups read one contiguous run of
``GPT * CG`` input channels (contiguous in NHWC), so each filter tap loads the
input tile once for all of them; the weight tile is block-diagonal (zero
where an input channel and an output channel belong to different groups),
built by a masked load. The zeros cost matrix-unit work, but these layers are
bound by memory traffic, not arithmetic.

With TILE_W set, a program's BLOCK_M pixels are a TILE_H x TILE_W block of one
image instead of a flat run: with unpipelined (num_stages=1) loads, which go
through L1, the nine taps of a 3x3 filter then re-read a small halo from L1
instead of the whole tile from L2 once per tap. L1_TAPS=1 keeps the software
pipeline and still goes through L1: its input copies are 8-byte ``cp.async.ca``
instead of 16-byte ``cp.async.cg`` (which bypass L1).

With SPLIT_K > 1 (layers of fewer tiles than two waves, such as 3D ResNeXt at batch 1:
32 tiles of 27 taps), program axis 1 splits the (tap, channel block) steps into SPLIT_K
runs whose float32 partial sums go to a workspace; ``splitk``'s reduce pass adds them in
a fixed order (deterministic) and applies the epilogue.

With a BLOCK_K of two or more whole taps of the tile's channel run (``PACKED_TAP_TILES``,
``taps_per_step``), a step gathers TAPS taps at once: 27 taps of 32 channels take 7 steps
of 128 instead of 27, which is what a layer of one or two programs an SM waits on (3D
ResNeXt at batch 1), without a split's second kernel.

Because the zeros are multiplied, an Inf or NaN in one group's input turns
the same pixel's outputs of the other groups in the tile into NaN (torch
keeps them finite); finite inputs give exact group isolation.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide, next_pow2, tile_fits
from .common import (
    cdiv,
    dot_precision,
    first_step,
    inside,
    needs_int64,
    next_step,
    oriented_filter,
    out_args,
    pixel_block,
    pixel_grid,
    split_rows,
    store_tile,
    strides5,
    tap_at,
    tap_origin,
    upcast_dot,
)
from .implicit_gemm import gemm_smem
from .launcher import launch_kernel, workspace
from .splitk import launch_split_reduce, split_rejects

# Spatial sizes, strides, pads and the loop length vary per layer without
# changing the code; channel counts (C, K, CG, KG) stay specialised because
# their divisibility proves the channel-run offsets 16-byte aligned.
_RUNTIME_INTS = ["M", "D", "H", "W", "OD", "OH", "OW", "R", "S", "TILES_H", "TILES_W",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw", "K_ITERS",
                 "ITERS_PER_SPLIT", "TRS"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def packed_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw, ws_ptr,
    M, C, K, D, H, W, OD, OH, OW, R, S, TILES_H, TILES_W,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    K_ITERS, ITERS_PER_SPLIT, TRS,
    CG: tl.constexpr, KG: tl.constexpr, GPT: tl.constexpr, SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    TILE_W: tl.constexpr, EVEN_C: tl.constexpr, HAS_DEPTH: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr, L1_VEC: tl.constexpr = 0,
    TRANSPOSED: tl.constexpr = False, W_VEC: tl.constexpr = 1, TAPS: tl.constexpr = 1,
):
    CRUN: tl.constexpr = GPT * CG  # input channels of the tile's groups
    KRUN: tl.constexpr = GPT * KG  # output channels of the tile's groups
    C_BLOCKS: tl.constexpr = (CRUN + BLOCK_K - 1) // BLOCK_K
    pid = tl.program_id(0)
    num_n = tl.cdiv(K, KRUN)
    # N-tiles of one pixel tile are neighbours: they read adjacent channel runs
    # of the same pixels, which then share cache lines in L2.
    pid_m = pid // num_n
    pid_n = pid % num_n
    if TILE_W == 0:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        m_mask = offs_m < M
        n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    else:
        n, od, oh, ow, m_mask = pixel_block(pid_m, OD, OH, OW, TILES_H, TILES_W,
                                            BLOCK_M // TILE_W, TILE_W)
    cols = tl.arange(0, BLOCK_N)
    k_glob = pid_n * KRUN + cols
    k_mask = (cols < KRUN) & (k_glob < K)
    k_grp = cols // KG  # group of each column, relative to the tile
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    c_first = pid_n * CRUN
    if INT64:
        x_row = n.to(tl.int64) * sxn + c_first.to(tl.int64) * sxc
    else:
        x_row = n * sxn + c_first * sxc
    w_col = filter_columns(k_glob, cols, k_grp, c_first, swk, swc, CG, KG, TRANSPOSED, INT64)
    x_origin = tap_origin(x_row, id0, ih0, iw0, sxd, sxh, sxw, HAS_DEPTH)
    offs_c0 = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # Program axis 1 is the split: steps [i * K_ITERS // SPLIT_K, (i + 1) * K_ITERS //
    # SPLIT_K), at most ITERS_PER_SPLIT (the loop's steps past the run load nothing).
    it = tl.program_id(1) * K_ITERS // SPLIT_K
    it_end = (tl.program_id(1) + 1) * K_ITERS // SPLIT_K
    cb, ks, kr, kt = first_step(it, C_BLOCKS, R, S)
    # One flattened loop over (t, r, s, channel block) so the software pipeline
    # spans all taps; its bound does not depend on program ids (interpreter).
    if TAPS > 1:
        # A step is TAPS whole taps: reduction index j reads channel j % CRUN of tap
        # it * TAPS + j // CRUN (``taps_per_step``).
        c_run = offs_c0 % CRUN
        tap_rel = offs_c0 // CRUN
        c_run_ok = c_first + c_run < C
        # (Written so, Triton proves it constant in runs of CG and B's copies stay 16-byte
        # ones; as c_run // CG it did not.)
        c_grp = (offs_c0 // CG) % GPT
    for _ in range(0, ITERS_PER_SPLIT):
        if TAPS > 1:
            a, b = multi_tap_operands(
                x_ptr, w_ptr, it, it_end, tap_rel, c_run, c_run_ok, c_grp, k_grp, k_mask, m_mask,
                x_origin, w_col, id0, ih0, iw0, D, H, W, R, S, TRS, dld, dlh, dlw,
                sxc, sxd, sxh, sxw, swc, swt, swr, sws, CG, TAPS, EVEN_C, SPLIT_K, HAS_DEPTH,
                W_VEC)
        else:
            a, b = tap_operands(x_ptr, w_ptr, it, it_end, cb, ks, kr, kt, k_grp, k_mask,
                                m_mask, x_origin, w_col, id0, ih0, iw0, D, H, W, c_first, C,
                                offs_c0, dld, dlh, dlw, sxc, sxd, sxh, sxw, swc, swt, swr,
                                sws, CG, CRUN, BLOCK_K, SPLIT_K, EVEN_C, HAS_DEPTH, L1_VEC,
                                W_VEC)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        if TAPS == 1:
            cb, ks, kr, kt = next_step(cb, ks, kr, kt, C_BLOCKS, R, S)
        it += 1
    if SPLIT_K == 1:
        store_tile(acc, n, od, oh, ow, m_mask, k_glob, k_mask,
                   out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh,
                   srw, HAS_BIAS, HAS_RES, ACT, INT64)
    else:
        # Partial sums into the [SPLIT_K, M, K] float32 workspace, rows in output-pixel
        # order; splitk's reduce pass adds them in a fixed order and applies the epilogue.
        m_flat = ((n * OD + od) * OH + oh) * OW + ow
        ws_off = (tl.program_id(1).to(tl.int64) * M + m_flat)[:, None] * K + k_glob[None, :]
        tl.store(ws_ptr + ws_off, acc, mask=m_mask[:, None] & k_mask[None, :])


@triton.jit
def tap_operands(x_ptr, w_ptr, it, it_end, cb, ks, kr, kt, k_grp, k_mask, m_mask, x_origin,
                 w_col, id0, ih0, iw0, D, H, W, c_first, C, offs_c0, dld, dlh, dlw, sxc, sxd,
                 sxh, sxw, swc, swt, swr, sws, CG: tl.constexpr, CRUN: tl.constexpr,
                 BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_C: tl.constexpr,
                 HAS_DEPTH: tl.constexpr, L1_VEC: tl.constexpr, W_VEC: tl.constexpr):
    """Step ``it``'s A [BLOCK_M, BLOCK_K] and block-diagonal B [BLOCK_K, BLOCK_N] where a
    step is channel block ``cb`` of tap (kt, kr, ks)."""
    row_ok, x_off, w_off = tap_at(
        ks, kr, kt, m_mask, D, H, W, x_origin, id0, ih0, iw0, dld, dlh, dlw,
        sxd, sxh, sxw, w_col, swt, swr, sws, HAS_DEPTH)
    if SPLIT_K > 1:
        row_ok = row_ok & (it < it_end)
    c_rel = cb * BLOCK_K + offs_c0
    a_offs = x_off[:, None] + (c_rel * sxc)[None, :]
    if L1_VEC:
        # Pipelined 16-byte copies bypass L1 (cp.async.cg); promising only L1_VEC-element
        # alignment makes them 8-byte cp.async.ca, which allocate in L1, so the taps of a
        # pixel block re-read their neighbours' input from L1 instead of L2.
        a_offs = tl.multiple_of(a_offs, [L1_VEC, L1_VEC])
    a_ptrs = x_ptr + a_offs
    if EVEN_C:
        a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
    else:
        c_ok = (c_rel < CRUN) & (c_first + c_rel < C)
        a = tl.load(a_ptrs, mask=row_ok[:, None] & c_ok[None, :], other=0.0)
    # Block-diagonal weights: B[c, k] = w[k, c - group(k) * CG, tap] inside
    # the column's group, else 0 (which also covers c past the run or C).
    diag = ((c_rel // CG)[:, None] == k_grp[None, :]) & k_mask[None, :]
    if SPLIT_K > 1:
        diag = diag & (it < it_end)
    b_offs = w_off[None, :] + (c_rel * swc)[:, None]
    if W_VEC > 1:
        # Every column's offset is a multiple of W_VEC (``filter_vector``): the group's
        # channel run then loads in 16-byte copies, which stride divisibility alone
        # does not prove where C/G x taps is no multiple of 16 (8 channels a group).
        b_offs = tl.multiple_of(b_offs, [W_VEC, 1])
    b_ptrs = w_ptr + b_offs
    b = tl.load(b_ptrs, mask=diag, other=0.0)
    return a, b


@triton.jit
def multi_tap_operands(x_ptr, w_ptr, it, it_end, tap_rel, c_run, c_run_ok, c_grp, k_grp, k_mask,
                       m_mask, x_origin, w_col, id0, ih0, iw0, D, H, W, R, S, TRS,
                       dld, dlh, dlw, sxc, sxd, sxh, sxw, swc, swt, swr, sws,
                       CG: tl.constexpr, TAPS: tl.constexpr, EVEN_C: tl.constexpr,
                       SPLIT_K: tl.constexpr, HAS_DEPTH: tl.constexpr, W_VEC: tl.constexpr):
    """Step ``it``'s A [BLOCK_M, BLOCK_K] and block-diagonal B [BLOCK_K, BLOCK_N] where a
    step is TAPS whole taps of the tile's CRUN channels: reduction index j is channel
    ``c_run[j]`` (of group ``c_grp[j]`` of the tile) of tap it * TAPS + ``tap_rel[j]``
    (zeros past the last of the TRS taps,
    past the input's edges and, split, past the run's end ``it_end``)."""
    tap = it * TAPS + tap_rel
    tap_ok = tap < TRS
    if SPLIT_K > 1:
        tap_ok = tap_ok & (it < it_end)
    if not EVEN_C:
        tap_ok = tap_ok & c_run_ok
    # (The divisions are by run-time filter sizes, but on a [BLOCK_K] vector constant in
    # runs of CRUN: the compiled code keeps one a run.)
    ks = tap % S
    tr = tap // S
    kr = tr % R
    dh = kr * dlh
    dw = ks * dlw
    x_tap = dh * sxh + dw * sxw + c_run * sxc
    w_tap = kr * swr + ks * sws + c_run * swc
    ok = (m_mask[:, None] & tap_ok[None, :] & inside(ih0[:, None] + dh[None, :], H)
          & inside(iw0[:, None] + dw[None, :], W))
    if HAS_DEPTH:
        dd = (tr // R) * dld
        ok = ok & inside(id0[:, None] + dd[None, :], D)
        x_tap += dd * sxd
        w_tap += (tr // R) * swt
    a_offs = x_origin[:, None] + x_tap[None, :]
    a = tl.load(x_ptr + a_offs, mask=ok, other=0.0)
    diag = (c_grp[:, None] == k_grp[None, :]) & k_mask[None, :] & tap_ok[:, None]
    b_offs = w_col[None, :] + w_tap[:, None]
    if W_VEC > 1:
        b_offs = tl.multiple_of(b_offs, [W_VEC, 1])
    b = tl.load(w_ptr + b_offs, mask=diag, other=0.0)
    return a, b


@triton.jit
def filter_columns(k_glob, cols, k_grp, c_first, swk, swc, CG: tl.constexpr,
                   KG: tl.constexpr, TRANSPOSED: tl.constexpr, INT64: tl.constexpr):
    """Offset of each output column's filter entries at the tile's first input channel
    (the block-diagonal B adds ``c_rel * swc``). TRANSPOSED (a dgrad call reading the
    stored forward filter in place, ``weight_strides``): the stored filter's rows are
    this problem's input channels and its columns a group's output channels."""
    if TRANSPOSED:
        if INT64:
            return (cols % KG).to(tl.int64) * swk + c_first.to(tl.int64) * swc
        return (cols % KG) * swk + c_first * swc
    if INT64:
        return k_glob.to(tl.int64) * swk - (k_grp * CG).to(tl.int64) * swc
    return k_glob * swk - (k_grp * CG) * swc


def filter_vector(call: ConvCall, sw: tuple) -> int:
    """Filter elements every column offset of ``packed_kernel`` is a multiple of, at most
    16 bytes' worth (1 where the filter's channels are not unit-stride, or read transposed),
    for the filter strides ``sw`` the launch passes (``oriented_filter``'s): the largest
    power of two dividing the column and tap strides and C/G (a column's offset is
    k * swk - group * C/G + taps). Triton specialises an integer argument as a multiple of
    16 or not at all, so C/G = 8 with 27 taps (216) proves nothing."""
    g = call.geom
    swk, swc, swt, swr, sws = sw
    if call.transposed_w or swc != 1:
        return 1
    terms = [swk, g.cg] + [st for st, taps in ((swt, g.t), (swr, g.r), (sws, g.s))
                           if taps > 1]
    vec = 16 // call.x.element_size()
    while vec > 1 and any(t % vec for t in terms):
        vec //= 2
    return vec


def groups_per_tile(geom, block_n: int) -> int:
    """Whole groups one program's BLOCK_N output channels cover (0: a group does not fit)."""
    return min(block_n // geom.kg, geom.g)


def no_whole_group(geom, block_n: int) -> str | None:
    """Why BLOCK_N output channels hold no whole group (None when they hold one)."""
    if groups_per_tile(geom, block_n) < 1:
        return f"BLOCK_N={block_n} holds no whole group of {geom.kg} channels"
    return None


def idle_tile(geom, block_n: int) -> str | None:
    """Why a packed tile of BLOCK_N output channels leaves over a quarter of its columns
    without a group (None when it does not)."""
    gpt = groups_per_tile(geom, block_n)
    if gpt >= 1 and 4 * gpt * geom.kg < 3 * block_n:
        return (f"BLOCK_N={block_n} holds {gpt} groups of {geom.kg} channels: "
                f"over a quarter of the tile idle")
    return None


def l1_copies_misaligned(geom, block_n: int) -> str | None:
    """Why L1_TAPS's promise (every input channel run starts 8 bytes aligned) fails for
    this geometry (None when it holds)."""
    if geom.layout != "channels_last":
        return "L1_TAPS needs channels_last input (8-byte runs of channels)"
    if geom.c * geom.elem_bytes % 8 or channel_run(geom, block_n) * geom.elem_bytes % 8:
        return (f"L1_TAPS needs 8-byte aligned channel runs: C={geom.c} and runs of "
                f"{channel_run(geom, block_n)} channels of {geom.elem_bytes} bytes")
    return None


def channel_run(geom, block_n: int) -> int:
    """Input channels of one program's groups: the reduction width of each tap."""
    return groups_per_tile(geom, block_n) * geom.cg


def taps_per_step(geom, block_n: int, block_k: int) -> int:
    """Whole taps one reduction step of BLOCK_K covers: BLOCK_K / the tile's channel run
    where that run is a power of two of at least 16 channels and BLOCK_K at least twice it,
    else 1 (a step is a channel block of one tap)."""
    run = channel_run(geom, block_n)
    if run >= 16 and run & (run - 1) == 0 and block_k >= 2 * run:
        return block_k // run
    return 1


def packed_iters(geom, block_n: int, block_k: int) -> int:
    """Reduction steps of a packed tile: every tap x the channel blocks of its run, or the
    taps in steps of ``taps_per_step``."""
    taps = geom.t * geom.r * geom.s
    per_step = taps_per_step(geom, block_n, block_k)
    if per_step > 1:
        return cdiv(taps, per_step)
    return taps * cdiv(channel_run(geom, block_n), block_k)


def tap_step_rejects(geom, block_n: int, block_k: int) -> str | None:
    """Why a BLOCK_K of whole taps (``PACKED_TAP_TILES``) does not suit ``geom``: the run
    is not a power of two of 16 channels or more, BLOCK_K is not two runs or more, or half
    as many taps a step would take as many steps."""
    run = channel_run(geom, block_n)
    per_step = taps_per_step(geom, block_n, block_k)
    if per_step == 1:
        return (f"BLOCK_K={block_k} is not 2 or more taps of the {run}-channel run (a power "
                "of two of 16 or more)")
    taps = geom.t * geom.r * geom.s
    if cdiv(taps, per_step) == cdiv(taps, per_step // 2):
        return f"{per_step} taps a step take as many steps as {per_step // 2} ({taps} taps)"
    return None


def launch_packed(call: ConvCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    gpt = groups_per_tile(g, bn)
    if gpt < 1:
        raise ValueError(f"BLOCK_N={bn} is smaller than the {g.kg} output channels a group")
    crun = channel_run(g, bn)
    iters = packed_iters(g, bn, bk)
    taps = taps_per_step(g, bn, bk)
    split = cfg.get("SPLIT_K", 1)
    ws = workspace((split, g.gemm_m, g.k), call.x.device) if split > 1 else call.out
    tw = cfg.get("TILE_W", 0)
    pixel_programs, tiles_h, tiles_w = pixel_grid(g, bm, tw)
    grid = (pixel_programs * cdiv(g.g, gpt), split)
    w, sw = oriented_filter(call)
    launch_kernel(packed_kernel, grid,
        call.x, w, *out_args(call), ws,
        g.gemm_m, g.c, g.k, g.d, g.h, g.w, *g.out_spatial, g.r, g.s, tiles_h, tiles_w,
        *g.stride, *g.pad, *g.dilation, *strides5(call.x), *sw,
        iters, cdiv(iters, split), g.t * g.r * g.s,
        CG=g.cg, KG=g.kg, GPT=gpt, SPLIT_K=split, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        TILE_W=tw, EVEN_C=(crun % bk == 0 or taps > 1) and g.g % gpt == 0,
        HAS_DEPTH=g.has_depth,
        ACT=call.activation, HAS_BIAS=call.bias is not None,
        HAS_RES=call.residual is not None, PREC=dot_precision(call), UPCAST=upcast_dot(call),
        INT64=needs_int64(call), L1_VEC=8 // call.x.element_size() if cfg.get("L1_TAPS") else 0,
        TRANSPOSED=call.transposed_w, W_VEC=filter_vector(call, sw), TAPS=taps,
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )
    if split > 1:
        launch_split_reduce(call, ws, split)


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages). BLOCK_K is the channel
# chunk of one tap; tl.dot needs every tile side >= 16. On an H100 (fp16, ResNeXt-50
# layers) narrow N tiles won for 4..16 channels a group (a 32-wide tile holds 2..8
# groups, so little matrix work is wasted) and 64-wide ones for 32 channels a group.
PACKED_TILES = (
    (32, 32, 32, 4, 3),
    (64, 16, 16, 4, 3), (64, 32, 32, 4, 3), (64, 32, 32, 4, 4), (64, 64, 64, 4, 3),
    (128, 16, 16, 4, 3), (128, 16, 16, 4, 4), (128, 32, 16, 4, 4), (128, 32, 32, 4, 3),
    (128, 32, 32, 4, 4), (128, 64, 64, 4, 4), (128, 64, 64, 8, 3), (128, 128, 64, 8, 3),
    (256, 16, 16, 4, 3), (256, 32, 32, 4, 3), (256, 32, 32, 4, 4), (256, 32, 32, 8, 3),
    (256, 64, 64, 8, 3),
)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, TILE_W): 2D pixel blocks
# (8x8, 8x16, 16x8, 16x16) read through L1 (unpipelined) or double-buffered.
PACKED_2D_TILES = (
    (64, 16, 16, 4, 1, 8), (64, 32, 32, 4, 1, 8), (64, 64, 64, 4, 1, 8),
    (128, 16, 16, 4, 1, 16), (128, 16, 16, 4, 1, 8), (128, 32, 32, 4, 1, 16),
    (128, 32, 32, 8, 1, 16), (128, 32, 32, 4, 1, 8), (128, 64, 64, 8, 1, 16),
    (256, 16, 16, 8, 1, 16), (256, 32, 32, 8, 1, 16),
    (128, 16, 16, 4, 2, 16), (128, 32, 32, 4, 2, 16), (128, 64, 64, 8, 2, 16),
)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, TILE_W) of pipelined tiles whose
# input copies are 8-byte cp.async.ca (L1_TAPS=1): the nine taps of a 3x3 filter re-read
# their pixel block's overlapping input from L1. 16-byte copies (every other pipelined
# config) bypass L1, and the H100 profile of ResNeXt-50's layer1.0 showed L2 88% busy at
# an L1 hit rate of 10%.
PACKED_L1_TILES = (
    (64, 32, 32, 4, 4, 0), (128, 16, 16, 4, 4, 0), (128, 32, 32, 4, 3, 0),
    (128, 32, 32, 4, 4, 0), (128, 64, 64, 4, 4, 0), (256, 32, 32, 4, 3, 0),
    (64, 32, 32, 4, 4, 8), (128, 16, 16, 4, 4, 16), (128, 32, 32, 4, 3, 16),
    (128, 32, 32, 4, 4, 8), (128, 64, 64, 4, 3, 16), (256, 32, 32, 8, 3, 16),
)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of split-K tiles x SPLITS: where a
# layer makes fewer tiles than two waves (3D ResNeXt at batch 1: 32 tiles of 27 taps), the
# splits run a tap range each into a float32 workspace and splitk's reduce pass adds them.
PACKED_SPLIT_TILES = ((32, 32, 32, 4, 3), (64, 16, 16, 4, 3), (64, 32, 32, 4, 3),
                      (64, 64, 64, 4, 3), (128, 16, 16, 4, 3), (128, 32, 32, 4, 3),
                      (128, 64, 64, 4, 4))
SPLITS = (2, 3, 4, 8)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) whose BLOCK_K spans several whole
# taps of the tile's channel run (``taps_per_step``; 128 = 4 taps of 32 channels or 8 of
# 16). A layer of few programs a SM, such as 3D ResNeXt at batch 1 (27 taps), waits on
# its loop's steps one after another: 7 steps of 4 taps instead of 27, without the split
# configs' second kernel. The deeper pipelines (4-6 stages) keep more of a program's
# steps in flight where the SMs have a program or two each.
PACKED_TAP_TILES = ((32, 32, 128, 4, 3), (32, 32, 256, 4, 2), (64, 32, 128, 4, 3),
                    (64, 32, 256, 4, 2), (128, 32, 128, 4, 3), (128, 32, 128, 8, 3),
                    (64, 16, 64, 4, 3), (64, 16, 128, 4, 3), (128, 16, 64, 4, 3),
                    (128, 16, 128, 4, 3), (64, 64, 128, 4, 3), (64, 64, 256, 4, 2),
                    (128, 64, 128, 8, 3),
                    (32, 32, 128, 4, 6), (64, 32, 128, 4, 5), (64, 16, 64, 4, 6),
                    (128, 16, 64, 4, 5), (64, 64, 128, 4, 4))

MAX_CG = 32  # wider groups fill a matrix-unit tile on their own: grouped_gemm
MAX_KG = 64
# A tile of P groups does P times the useful matrix work; on an H100 (4 channels a
# group) 32 groups a tile ran at half the speed of 8.
MAX_PACK = 16


class GroupedPackedFamily(KernelFamily):
    name = "grouped_packed"
    summary = "block-diagonal implicit GEMM packing several small groups into one tile"
    configs = tuple(Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp, num_stages=st)
                    for bm, bn, bk, wp, st in PACKED_TILES) + tuple(
        Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp, num_stages=st, TILE_W=tw)
        for bm, bn, bk, wp, st, tw in PACKED_2D_TILES) + tuple(
        Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp, num_stages=st, L1_TAPS=1,
               **({"TILE_W": tw} if tw else {}))
        for bm, bn, bk, wp, st, tw in PACKED_L1_TILES) + tuple(
        Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp, num_stages=st, SPLIT_K=sp)
        for sp in SPLITS for bm, bn, bk, wp, st in PACKED_SPLIT_TILES)
    tap_step_configs = tuple(Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp,
                                    num_stages=st) for bm, bn, bk, wp, st in PACKED_TAP_TILES)
    # The dgrad twin's sweep rows were measured without the tap steps.
    dgrad_configs = configs
    configs = configs + tap_step_configs

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "not a grouped convolution"
        if geom.cg < 2:
            return "depthwise (1 input channel a group) goes to grouped_direct"
        if geom.cg > MAX_CG:
            return f"{geom.cg} input channels per group: grouped_gemm fills its tiles"
        if geom.kg > MAX_KG:
            return f"{geom.kg} output channels per group: more than a packed tile holds"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def hard_ok(self, geom, cfg: Config, device) -> str | None:
        why = no_whole_group(geom, cfg["BLOCK_N"])
        if why is None and cfg.get("L1_TAPS"):
            why = l1_copies_misaligned(geom, cfg["BLOCK_N"])
        return why or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg: Config, device) -> str | None:
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        gpt = groups_per_tile(geom, bn)
        if not tile_fits(bm, geom.gemm_m, 32):
            return f"BLOCK_M={bm} exceeds the {geom.gemm_m} output pixels"
        tw = cfg.get("TILE_W", 0)
        _, oh, ow = geom.out_spatial
        if tw and (tw > max(8, next_pow2(ow)) or bm // tw > max(8, next_pow2(oh))):
            return f"a {bm // tw}x{tw} pixel block exceeds the {oh}x{ow} output"
        idle = channel_tile_too_wide(geom, bn) or idle_tile(geom, bn)
        if idle:
            return idle
        if gpt > MAX_PACK:
            return (f"BLOCK_N={bn} packs {gpt} groups: {gpt}x the useful matrix work "
                    f"(over {MAX_PACK}x was slower on an H100)")
        if cfg in self.tap_step_configs:
            if why := tap_step_rejects(geom, bn, bk):
                return why
        elif gpt >= 1 and bk > max(16, next_pow2(gpt * geom.cg)):
            return f"BLOCK_K={bk} exceeds the {gpt * geom.cg}-channel run of a tile"
        split = cfg.get("SPLIT_K", 1)
        if split > 1 and gpt >= 1 and (why := split_rejects(
                cdiv(geom.gemm_m, bm) * cdiv(geom.g, gpt), packed_iters(geom, bn, bk), split,
                device)):
            return why
        return self.hard_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_packed(call, cfg)
