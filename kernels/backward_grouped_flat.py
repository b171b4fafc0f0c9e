"""Both gradients of a few-channel grouped conv in one kernel, dY read once (Gluon).

``wgrad_grouped_flat`` lays an item (ROWS rows of dY) out on a flat grid of stride-phase
images of X (``flat_grid``), and the dgrad choices beside it read dY again. Here one
program copies an item's X phase images and dY's image once and computes from them
- every tap's dW partial: dY's positions against X's run at the tap's shift, 16
  positions an mma (as ``wgrad_grouped_flat``; the positions past the item's ROWS rows,
  which dX reads, masked), split over items and added in a fixed order
  (``wgrad_gemm.reduce_splits``): no atomics;
- dX on the item's owned grid rows (ROWS of them from row A0 = pad // stride), a phase
  image at a time: phase position g receives dY[g - shift] times each of the phase's
  taps, so each tap is one mma of dY's [P, BLOCK] run D0 - shift positions into its
  image (which starts AMAX - A0 rows above the item) with the tap's transposed
  block-diagonal tile. Items cover both dY's rows and the grid rows holding X's
  (``item_consts``), so every pixel of dX is written once; a phase no tap reaches is
  written zero.

In 3D an item is rows of one input depth slice (of one image): its X phase images, and for
each depth tap the image of dY's output depth that meets the slice at that tap (zeros where
none does: the depth padding, or a depth stride that skips it). The slice's dX sums the
planes of those depth taps; each plane's dW takes its dY image against the slice, so one
program holds every plane's dW (27 accumulators for 3x3x3) and the depth taps that meet no
output depth are branched over. Every (output depth, depth tap) pair meets one input slice,
so the items cover dW's sum as in 2D.

dY crosses L2 once instead of twice, an item's copies are issued once, and no dgrad
stride-phase launches remain. Zeros of the block-diagonal tiles are multiplied, so Inf or
NaN spreads across a pack's groups as in the kernels it replaces. The dispatcher runs it
for a backward pass needing both gradients where the "backward" direction's choice is one
of its configs (``dispatcher/fused_pair.py``; ``backward_pair`` is the other choice).

Gluon has no interpreter: tests/test_backward_grouped_flat.py compiles it for sm_90 on the
CPU and replays its index arithmetic in torch; tests/test_gpu_fused_backward.py runs it.
"""

from __future__ import annotations

import dataclasses
import math

from .base import Config, GradCall, smem_check
from .common import cdiv, strides5
from .dependent import dependent_ok
from .flat_grid import FLAT_POSITIONS, flat_config_rejects, flat_consts, item_rejects
from .gluon_common import HAVE_GLUON, aligned_pixels, gluon_grouped_rejects, pack_rejects
from .grad_common import GradFamily, GradGrid
from .grad_packed import square_pack_gpt
from .launcher import launch_kernel
from .wgrad_gemm import split_slices, split_steps
from .wgrad_grouped_flat import WgradGroupedFlatFamily

if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2

    from .flat_grid import (
        copy_layout,
        copy_phases,
        filter_tiles,
        row_layout,
        row_units,
        tap_dots,
        tile_swizzle,
        unit_rows,
    )
    from .gluon_wgrad import pack_channels, release_reduction, store_taps

    @gluon.jit
    def _run(units, FIRST: gl.constexpr, LEN: gl.constexpr, BUF: gl.constexpr,
             XP: gl.constexpr, BLOCK: gl.constexpr, SH: gl.constexpr):
        """Rows FIRST.. (LEN of them) of buffer BUF of dY's image, a [LEN, BLOCK] view."""
        return units.index((BUF * XP + FIRST) * row_units(BLOCK))._reinterpret(
            units.dtype, [LEN, BLOCK], SH)

    @gluon.jit
    def _slice(item, TILES_H, D, DEPTH: gl.constexpr):
        """(image, input depth) of the item: in 3D (DEPTH) items run over the input's depth
        slices, whose dX they own; in 2D depth 0."""
        img = item // TILES_H
        if DEPTH:
            return img // D, img % D
        else:
            return img, 0

    @gluon.jit
    def _reads(di, TD: gl.constexpr, OD, pdd, STD: gl.constexpr, DLD: gl.constexpr):
        """(the output depth whose dY depth tap TD meets input depth di at, whether there
        is one): di = od * STD - pdd + TD * DLD."""
        num = di + pdd - TD * DLD
        od = num // STD
        return od, (num >= 0) & (num % STD == 0) & (od < OD)

    @gluon.jit
    def _issue(item, end, x_units, y_units, x_ptr, dy_ptr, cx, cx_ok, ky, ky_ok, D, H, W, OD,
               OH, OW, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, syn, syd, syh, syw,
               BUF: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
               XNEED: gl.constexpr, XCOPY: gl.constexpr, YNEED: gl.constexpr,
               NPH: gl.constexpr, T: gl.constexpr, STD: gl.constexpr, STH: gl.constexpr,
               STW: gl.constexpr, DLD: gl.constexpr, YPH: gl.constexpr, YPW: gl.constexpr,
               DEPTH: gl.constexpr, LX: gl.constexpr):
        """Start copying the item's X phase images (of its input depth slice) and, for each
        depth tap, dY's image of the output depth that tap meets it at (zeros where there
        is none; from YPH rows above and YPW columns left of the item's first position)
        into buffer BUF, one cp.async group; zeros unless the item is live."""
        live = item < end
        n, di = _slice(item, TILES_H, D, DEPTH)
        oh0 = (item % TILES_H) * ROWS
        copy_phases(x_units, x_ptr + di * sxd, n, oh0, live, cx, cx_ok, H, W, pdh, pdw, sxn,
                    sxh, sxw, BUF, WP, XP, XNEED, XCOPY, NPH, STH, STW, LX)
        for td in gl.static_range(T):
            if DEPTH:
                od, ok = _reads(di, td, OD, pdd, STD, DLD)
                copy_phases(y_units, dy_ptr + od * syd, n, oh0, live & ok, ky, ky_ok, OH, OW,
                            YPH, YPW, syn, syh, syw, BUF * T + td, WP, XP, YNEED, XCOPY, 1,
                            1, 1, LX)
            else:
                copy_phases(y_units, dy_ptr, n, oh0, live, ky, ky_ok, OH, OW, YPH, YPW, syn,
                            syh, syw, BUF, WP, XP, YNEED, XCOPY, 1, 1, 1, LX)
        cp.commit_group()

    @gluon.jit
    def _dgrad_taps(acc, y_units, w_smem, IMG: gl.constexpr, TD: gl.constexpr,
                    PH: gl.constexpr, R: gl.constexpr, S: gl.constexpr, P: gl.constexpr,
                    WP: gl.constexpr, XP: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
                    DLH: gl.constexpr, DLW: gl.constexpr, D0: gl.constexpr,
                    BLOCK: gl.constexpr, YT: gl.constexpr, MMA: gl.constexpr):
        """``acc`` plus, for each tap of depth tap TD's plane in phase PH, one mma of dY's
        image IMG run D0 - (the tap's shift) positions in with the tap's transposed tile."""
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        for t in gl.static_range(R * S):
            if ((t // S) * DLH % STH) * STW + (t % S) * DLW % STW == PH:
                a = _run(y_units, D0 - ((t // S) * DLH // STH) * WP - (t % S) * DLW // STW,
                         P, IMG, XP, BLOCK, YT).load(A_L)
                b = w_smem.index(TD * R * S + t).permute((1, 0)).load(B_L)
                acc = mma_v2(a, b, acc)
        return acc

    @gluon.jit
    def _dgrad_phase(y_units, w_smem, BUF: gl.constexpr, PH: gl.constexpr, di, OD, pdd,
                     T: gl.constexpr, R: gl.constexpr, S: gl.constexpr, P: gl.constexpr,
                     WP: gl.constexpr, XP: gl.constexpr, STD: gl.constexpr,
                     STH: gl.constexpr, STW: gl.constexpr, DLD: gl.constexpr,
                     DLH: gl.constexpr, DLW: gl.constexpr, D0: gl.constexpr,
                     BLOCK: gl.constexpr, DEPTH: gl.constexpr, YT: gl.constexpr,
                     MMA: gl.constexpr):
        """dX's phase PH on the item's P grid positions from its first owned row: the taps
        of that phase (``_dgrad_taps``) of every depth tap that meets the item's depth
        slice (a phase no tap reaches stays zero)."""
        acc = gl.zeros([P, BLOCK], gl.float32, MMA)
        for td in gl.static_range(T):
            if DEPTH:
                _, ok = _reads(di, td, OD, pdd, STD, DLD)
                if ok:
                    acc = _dgrad_taps(acc, y_units, w_smem, BUF * T + td, td, PH, R, S, P,
                                      WP, XP, STH, STW, DLH, DLW, D0, BLOCK, YT, MMA)
            else:
                acc = _dgrad_taps(acc, y_units, w_smem, BUF, 0, PH, R, S, P, WP, XP, STH,
                                  STW, DLH, DLW, D0, BLOCK, YT, MMA)
        return acc

    @gluon.jit
    def _plane(accs, TD: gl.constexpr, RS: gl.constexpr):
        """Depth tap TD's RS accumulators of ``accs``."""
        sub = ()
        for t in gl.static_range(RS):
            sub = sub + (accs[TD * RS + t],)
        return sub

    @gluon.jit
    def _wgrad(accs, x_units, y_units, BUF: gl.constexpr, IMG: gl.constexpr,
               R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
               XP: gl.constexpr, NPH: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
               DLH: gl.constexpr, DLW: gl.constexpr, Y0: gl.constexpr, BLOCK: gl.constexpr,
               XT16: gl.constexpr, YT16: gl.constexpr, MMA: gl.constexpr):
        """A plane's taps' dots over the item in buffer BUF (dY's image IMG), 16 positions
        at a time: dY's positions from Y0 into its image; those past the item's ROWS rows
        (which dX reads) are masked out, and chunks wholly past them not run."""
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        LIVE: gl.constexpr = ROWS * WP
        for i in gl.static_range((LIVE + 15) // 16):
            a = _run(y_units, Y0 + i * 16, 16, IMG, XP, BLOCK, YT16).permute((1, 0)).load(A_L)
            if (i + 1) * 16 > LIVE:
                f = gl.arange(0, 16, layout=gl.SliceLayout(0, A_L))
                a = gl.where(gl.expand_dims(f < LIVE - i * 16, 0), a, gl.zeros_like(a))
            accs = tap_dots(accs, a, x_units, i * 16, BUF, R, S, WP, XP, NPH, STH, STW, DLH,
                            DLW, BLOCK, XT16, B_L)
        return accs

    @gluon.jit
    def _wgrad_planes(accs, x_units, y_units, BUF: gl.constexpr, di, OD, pdd,
                      T: gl.constexpr, R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr,
                      WP: gl.constexpr, XP: gl.constexpr, NPH: gl.constexpr,
                      STD: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
                      DLD: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr,
                      Y0: gl.constexpr, BLOCK: gl.constexpr, DEPTH: gl.constexpr,
                      XT16: gl.constexpr, YT16: gl.constexpr, MMA: gl.constexpr):
        """Every depth tap's plane of dW (``_wgrad``) that meets the item's depth slice."""
        if DEPTH:
            new = ()
            for td in gl.static_range(T):
                sub = _plane(accs, td, R * S)
                _, ok = _reads(di, td, OD, pdd, STD, DLD)
                if ok:
                    sub = _wgrad(sub, x_units, y_units, BUF, BUF * T + td, R, S, ROWS, WP, XP,
                                 NPH, STH, STW, DLH, DLW, Y0, BLOCK, XT16, YT16, MMA)
                new = new + sub
            return new
        else:
            return _wgrad(accs, x_units, y_units, BUF, BUF, R, S, ROWS, WP, XP, NPH, STH,
                          STW, DLH, DLW, Y0, BLOCK, XT16, YT16, MMA)

    @gluon.jit
    def _store_dx(acc, item, end, pack, dx_ptr, sdn, sdc, sdd, sdh, sdw, CTOT, D, H, W, pdh,
                  pdw, TILES_H, PH: gl.constexpr, CG: gl.constexpr, GPT: gl.constexpr,
                  ROWS: gl.constexpr, WP: gl.constexpr, P: gl.constexpr, A0: gl.constexpr,
                  STH: gl.constexpr, STW: gl.constexpr, BLOCK: gl.constexpr,
                  DEPTH: gl.constexpr, MMA: gl.constexpr):
        """Phase PH of the item's owned grid rows (ROWS from row A0) of its depth slice
        where they are pixels of dX (none unless the item is live)."""
        n, di = _slice(item, TILES_H, D, DEPTH)
        a0 = (item % TILES_H) * ROWS + A0
        f = gl.arange(0, P, layout=gl.SliceLayout(1, MMA))
        j = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, MMA))
        p = f // WP
        h = (a0 + p) * STH + PH // STW - pdh
        w = (f % WP) * STW + PH % STW - pdw
        c = pack * (GPT * CG) + j
        ok = (gl.expand_dims((item < end) & (p < ROWS) & (h >= 0) & (h < H) & (w >= 0)
                             & (w < W), 1)
              & gl.expand_dims((j < GPT * CG) & (c < CTOT), 0))
        off = (gl.expand_dims(n * sdn + di * sdd + h * sdh + w * sdw, 1)
               + gl.expand_dims(c * sdc, 0))
        gl.store(dx_ptr + off, acc.to(dx_ptr.dtype.element_ty), mask=ok)

    @gluon.jit
    def backward_grouped_flat_kernel(
        dy_ptr, x_ptr, w_ptr, dx_ptr, dw_ptr, ws_ptr,
        CTOT, KTOT, D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, ITEMS, ITEMS_PER_SPLIT,
        WS_STRIDE, syn, syd, syh, syw, sxn, sxd, sxh, sxw, sdn, sdc, sdd, sdh, sdw,
        sfk, sfc, sft, sfr, sfs, swk, swc, swt, swr, sws,
        CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, T: gl.constexpr,
        R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
        P: gl.constexpr, XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
        NPH: gl.constexpr, YNEED: gl.constexpr, A0: gl.constexpr, AMAX: gl.constexpr,
        BMAX: gl.constexpr, BLOCK: gl.constexpr, STD: gl.constexpr, STH: gl.constexpr,
        STW: gl.constexpr, DLD: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr,
        DEPTH: gl.constexpr, SPLIT: gl.constexpr, NEXT: gl.constexpr,
    ):
        release_reduction(SPLIT, NEXT)
        NW: gl.constexpr = gl.num_warps()
        LX: gl.constexpr = copy_layout(BLOCK, NW)
        L_CH: gl.constexpr = gl.SliceLayout(0, LX)
        # dX's mma warps split the positions, dW's the tile's columns.
        MMA_D: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0],
                                                        warps_per_cta=[NW, 1],
                                                        instr_shape=[16, 8])
        MMA_W: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0],
                                                        warps_per_cta=[1, NW],
                                                        instr_shape=[16, 8])
        SW: gl.constexpr = tile_swizzle(BLOCK)
        # dY's image starts AMAX - A0 rows above and BMAX columns left of the item's first
        # position: position D0 of it is where dX's first owned grid position reads at a
        # shift of 0, Y0 the item's first dY position.
        D0: gl.constexpr = AMAX * WP + BMAX
        Y0: gl.constexpr = D0 - A0 * WP
        pack = gl.program_id(0)
        pid_s = gl.program_id(1)
        # A buffer: X's NPH phase images, then dY's T images (one a depth tap).
        XR: gl.constexpr = 2 * NPH * XP
        YR: gl.constexpr = 2 * T * XP
        x_units = unit_rows(x_ptr.dtype.element_ty, XR, BLOCK)
        y_units = unit_rows(dy_ptr.dtype.element_ty, YR, BLOCK)
        YT: gl.constexpr = row_layout(P, BLOCK, YR)
        XT16: gl.constexpr = row_layout(16, BLOCK, XR)
        YT16: gl.constexpr = row_layout(16, BLOCK, YR)
        w_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [T * R * S, BLOCK, BLOCK],
                                           SW)
        # T * R * S accumulators: every plane's taps.
        c_glob, c_ok, k_glob, k_ok, first, end, accs = pack_channels(
            pack, pid_s, CTOT, KTOT, ITEMS, ITEMS_PER_SPLIT, CG, KG, GPT, BLOCK, T * R, S,
            L_CH, MMA_W)
        cx = gl.expand_dims(c_glob, 0)
        cx_ok = gl.expand_dims(c_ok, 0)
        ky = gl.expand_dims(k_glob, 0)
        ky_ok = gl.expand_dims(k_ok, 0)
        _issue(first, end, x_units, y_units, x_ptr, dy_ptr, cx, cx_ok, ky, ky_ok, D, H, W, OD,
               OH, OW, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, syn, syd, syh, syw, 0, ROWS,
               WP, XP, XNEED, XCOPY, YNEED, NPH, T, STD, STH, STW, DLD, AMAX - A0, BMAX,
               DEPTH, LX)
        # dX's tiles, while the first copies are in flight: tile t is tap t's filter read
        # transposed (rows dX's channels c, columns dY's k), as dX's conv of dY takes it.
        # Tap by tap, as this family's rows were measured (grouped_flat loads a plane at
        # once: validation/results/filter_burst_h100/).
        for td in gl.static_range(T):
            filter_tiles(w_smem, td * R * S, w_ptr + td * sft, pack, CTOT, sfc, sfk, sfr,
                         sfs, CG, KG, GPT, R, S, BLOCK, True, LX, False)
        for it in range(0, ITEMS_PER_SPLIT, 2):
            for buf in gl.static_range(2):
                item = first + it + buf
                _issue(item + 1, end, x_units, y_units, x_ptr, dy_ptr, cx, cx_ok, ky, ky_ok,
                       D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, syn,
                       syd, syh, syw, 1 - buf, ROWS, WP, XP, XNEED, XCOPY, YNEED, NPH, T, STD,
                       STH, STW, DLD, AMAX - A0, BMAX, DEPTH, LX)
                _, di = _slice(item, TILES_H, D, DEPTH)
                cp.wait_group(1)
                gl.thread_barrier()
                if STH * STW == 1:
                    acc = _dgrad_phase(y_units, w_smem, buf, 0, di, OD, pdd, T, R, S, P, WP,
                                       XP, STD, STH, STW, DLD, DLH, DLW, D0, BLOCK, DEPTH,
                                       YT, MMA_D)
                    accs = _wgrad_planes(accs, x_units, y_units, buf, di, OD, pdd, T, R, S,
                                         ROWS, WP, XP, NPH, STD, STH, STW, DLD, DLH, DLW, Y0,
                                         BLOCK, DEPTH, XT16, YT16, MMA_W)
                    # The next copies overwrite the buffer just read.
                    gl.thread_barrier()
                    _store_dx(acc, item, end, pack, dx_ptr, sdn, sdc, sdd, sdh, sdw, CTOT, D,
                              H, W, pdh, pdw, TILES_H, 0, CG, GPT, ROWS, WP, P, A0, STH, STW,
                              BLOCK, DEPTH, MMA_D)
                else:
                    # A phase at a time: four [P, BLOCK] accumulators beside dW's would not
                    # fit the registers.
                    accs = _wgrad_planes(accs, x_units, y_units, buf, di, OD, pdd, T, R, S,
                                         ROWS, WP, XP, NPH, STD, STH, STW, DLD, DLH, DLW, Y0,
                                         BLOCK, DEPTH, XT16, YT16, MMA_W)
                    for ph in gl.static_range(STH * STW):
                        acc = _dgrad_phase(y_units, w_smem, buf, ph, di, OD, pdd, T, R, S, P,
                                           WP, XP, STD, STH, STW, DLD, DLH, DLW, D0, BLOCK,
                                           DEPTH, YT, MMA_D)
                        _store_dx(acc, item, end, pack, dx_ptr, sdn, sdc, sdd, sdh, sdw,
                                  CTOT, D, H, W, pdh, pdw, TILES_H, ph, CG, GPT, ROWS, WP, P,
                                  A0, STH, STW, BLOCK, DEPTH, MMA_D)
                    gl.thread_barrier()
        cp.wait_group(0)
        # Depth tap td's plane: dW's taps (td, r, s), the workspace's taps td * R*S + t.
        for td in gl.static_range(T):
            store_taps(_plane(accs, td, R * S), pack, pid_s, dw_ptr + td * swt,
                       ws_ptr + td * (R * S * KTOT * CG), CTOT, KTOT, WS_STRIDE, swk, swc,
                       swr, sws, CG, KG, GPT, BLOCK, R, S, SPLIT, MMA_W)


DTYPES = ("float16", "bfloat16")
MAX_TAPS = 9  # taps of a filter plane (as wgrad_grouped_flat)
# dW accumulators a program holds, one a filter tap: 3x3x3 in 3D.
MAX_ACCUMULATORS = 27
# Packs of one 16-wide tile, two warps. A 32-wide tile (groups of 17-32 channels) was slower
# than the two kernels it replaces: ResNeXt-50 layer4.1 at batch 32, 25.3 against 21.1 us
# (call 199), its nine [32, 32] accumulators and dX's beside them in every program.
BLOCK, WARPS = 16, 2
# Splits of the items: every split's programs compute dX's items too.
SPLITS = (1, 2, 4, 8, 16, 32, 64, 128)
CONFIGS = tuple(Config(BLOCK_M=pos, BLOCK_N=BLOCK, SPLIT_K=sk, num_warps=WARPS, num_stages=2)
                for sk in SPLITS for pos in FLAT_POSITIONS)
# The rule's config (``rule_config``; the rule chooser's): items of 128 positions where a row of the
# grid fits, else 64, else 256 (strided: 64 first); splits giving about PROGRAMS_PER_SM
# programs an SM. On every layer calls 199-202 measured, that was the fastest config:
# ResNeXt-50 layer1.0, layer2.1 and layer3.1 at batch 32 (SPLIT_K 32, 16, 8; 256 programs
# for 132 SMs), and its stride-2 layer2.0 and layer3.0, whose four phase images a buffer
# make items of 128 positions 1.14 and 1.08x slower than of 64 (call 202).
POSITIONS_ORDER = (128, 64, 256)
STRIDED_POSITIONS_ORDER = (64, 128, 256)
PROGRAMS_PER_SM = 2
# Whether an image's rows are shared evenly among its items (``item_consts``; a switch for
# measuring what that brings).
BALANCED_ROWS = True


def coverage_rejects(geom) -> str | None:
    """Why the items' owned grid rows and columns (``item_consts``) do not cover dX: a top
    padding past the filter's reach (the first owned row would start inside dY's halo)
    or columns right of the grid."""
    c = flat_consts(geom, FLAT_POSITIONS[-1])
    _, sth, stw = geom.stride
    amax = (geom.r - 1) * geom.dilation[1] // sth
    if geom.pad[1] // sth > amax:
        return f"top padding {geom.pad[1]} past the filter's reach at stride {sth}"
    if c["WP"] * stw - geom.pad[2] < geom.w:
        return f"a {c['WP']}-wide grid at stride {stw} leaves columns of the {geom.w} wide"
    return None


def supports(geom) -> str | None:
    """Why the fused kernel does not take ``geom``."""
    if geom.dtype not in DTYPES:
        return f"{geom.dtype}: the kernel takes {' and '.join(DTYPES)}"
    if reason := (gluon_grouped_rejects(geom, MAX_TAPS, geom.c, geom.k, depth=True)
                  or item_rejects(geom, FLAT_POSITIONS[-1]) or coverage_rejects(geom)):
        return reason
    if geom.t * geom.r * geom.s > MAX_ACCUMULATORS:
        return (f"{geom.t}x{geom.r}x{geom.s} filter: more than the {MAX_ACCUMULATORS} taps "
                "it holds")
    if max(geom.cg, geom.kg) > BLOCK:
        return f"groups of {max(geom.cg, geom.kg)} channels: packs of one {BLOCK}-wide tile"
    return None


def packs(geom) -> int:
    """Packs of GPT whole groups a 16-wide tile: the grid's first dimension."""
    return cdiv(geom.g, square_pack_gpt(geom, BLOCK))


def rule_config(geom, device) -> Config | None:
    """The rule's config (the rule chooser's, and the one measured best before the
    backward sweep): the first of POSITIONS_ORDER (STRIDED_POSITIONS_ORDER) that fits,
    split (no more ways than items) so that the programs come closest (in powers of two)
    to PROGRAMS_PER_SM an SM; None where none fits."""
    if supports(geom) is not None:
        return None
    want = math.log2(max(PROGRAMS_PER_SM * device.sm_count / packs(geom), 1))
    strided = geom.stride[1:] != (1, 1)
    for pos in STRIDED_POSITIONS_ORDER if strided else POSITIONS_ORDER:
        n_items = items(geom, Config(BLOCK_M=pos))
        split = min((s for s in SPLITS if s <= n_items),
                    key=lambda s: (abs(math.log2(s) - want), s))
        cfg = Config(BLOCK_M=pos, BLOCK_N=BLOCK, SPLIT_K=split, num_warps=WARPS, num_stages=2)
        if config_rejects(geom, cfg, device) is None:
            return cfg
    return None


def pair_config(geom, device) -> Config | None:
    """``rule_config``, or None where, by the rule (``fused_pair.rule_fuses``), a backward
    pass of ``geom`` on ``device`` keeps the two directions' kernels: its programs would
    still be fewer than the SMs."""
    cfg = rule_config(geom, device)
    if cfg is None:
        return None
    # Fewer programs than SMs (small batches) were never measured against the two kernels,
    # which then overlap on side streams: those passes keep them.
    programs = packs(geom) * split_steps(items(geom, cfg), cfg["SPLIT_K"])[1]
    return cfg if programs >= device.sm_count else None


def config_rejects(geom, cfg: Config, device) -> str | None:
    """Why ``cfg`` cannot run (or is mostly idle) on ``geom``."""
    bn = cfg["BLOCK_N"]
    if reason := (pack_rejects(geom, bn, device, geom.cg, geom.kg)
                  or item_rejects(geom, cfg["BLOCK_M"])
                  or flat_config_rejects(geom, cfg, FLAT_POSITIONS[0])):
        return reason
    if cfg["num_warps"] > bn // 8:
        return f"num_warps={cfg['num_warps']} exceeds BLOCK_N={bn} / 8"
    if cfg["num_warps"] > cfg["BLOCK_M"] // 16:
        return f"num_warps={cfg['num_warps']} exceeds BLOCK_M={cfg['BLOCK_M']} / 16"
    if reason := smem_check(smem_bytes(geom, cfg), device):
        return reason
    if cfg["SPLIT_K"] > items(geom, cfg):
        return f"SPLIT_K={cfg['SPLIT_K']} exceeds the {items(geom, cfg)} items"
    return None


def smem_bytes(geom, cfg: Config) -> int:
    """Two buffers of X's phase images and dY's images (one a depth tap), and dX's filter
    tiles."""
    c, bn = item_consts(geom, cfg["BLOCK_M"]), cfg["BLOCK_N"]
    return ((2 * (c["NPH"] + geom.t) * c["XP"] + geom.t * geom.r * geom.s * bn) * bn
            * geom.elem_bytes)


def item_consts(geom, positions: int) -> dict:
    """``flat_consts`` for the fused kernel. An item is ROWS rows of dY (dW's positions) and
    owns ROWS grid rows of X's phase images from row A0 (dX's pixels there), so items
    cover both dY's OH rows and the grid rows holding X's: TILES_H an image, rows shared
    evenly among them (dW's mmas stop at an item's last row: 14 rows in items of 7 run 7
    chunks of 16 positions an item, where 8 and 6 would run 8). dY's image starts
    AMAX - A0 rows above the item (dX's taps reach that far back); YNEED of its positions
    hold what the owned rows read."""
    c = flat_consts(geom, positions)
    _, sth, stw = geom.stride
    oh, ow = geom.out_spatial[1:]
    amax = (geom.r - 1) * geom.dilation[1] // sth
    bmax = (geom.s - 1) * geom.dilation[2] // stw
    a0 = geom.pad[1] // sth
    needed = max(oh, (geom.h - 1 + geom.pad[1]) // sth - a0 + 1)
    tiles = cdiv(needed, c["ROWS"])
    if BALANCED_ROWS:
        c["ROWS"] = cdiv(needed, tiles)
    c["TILES_H"] = cdiv(needed, c["ROWS"])
    c["XNEED"] = (c["ROWS"] + amax) * c["WP"]
    c["YNEED"] = min(c["ROWS"] * c["WP"] + amax * c["WP"] + bmax, c["XCOPY"])
    c.update(A0=a0, AMAX=amax, BMAX=bmax)
    return c


def items(geom, cfg: Config) -> int:
    """Items of ``geom``: TILES_H an image (in 3D, a depth slice of the input)."""
    return geom.n * geom.d * item_consts(geom, cfg["BLOCK_M"])["TILES_H"]


def constexprs(geom, cfg: Config) -> dict:
    """The kernel's constexpr arguments for ``geom`` and ``cfg`` (but SPLIT and NEXT)."""
    c = item_consts(geom, cfg["BLOCK_M"])
    return dict(CG=geom.cg, KG=geom.kg, GPT=square_pack_gpt(geom, cfg["BLOCK_N"]), T=geom.t,
                R=geom.r, S=geom.s, **{k: c[k] for k in KERNEL_CONSTS}, BLOCK=cfg["BLOCK_N"],
                STD=geom.stride[0], STH=geom.stride[1], STW=geom.stride[2],
                DLD=geom.dilation[0], DLH=geom.dilation[1], DLW=geom.dilation[2],
                DEPTH=geom.dims == 3)


def launch(dy, x, w, dx, dw, geom, cfg: Config) -> None:
    """dX into ``dx`` and dW into ``dw`` (``empty_grad``'s layouts; 5D views) of the batched
    conv ``geom``, for the output gradient ``dy`` (4D tensors or their 5D views)."""
    dy, x, w, dx, dw = (t.unsqueeze(2) if t.dim() == 4 else t for t in (dy, x, w, dx, dw))
    split = cfg["SPLIT_K"]
    cons = constexprs(geom, cfg)
    dy, x = aligned_pixels(dy), aligned_pixels(x)
    syn, _, syd, syh, syw = strides5(dy)
    sxn, _, sxd, sxh, sxw = strides5(x)
    n_items = items(geom, cfg)
    od, oh, ow = geom.out_spatial
    call = GradCall(dy=dy, x=x, w=None, out=dw, geom=geom)
    with split_slices(call, split, n_items) as (per_split, ws, slices):
        launch_kernel(
            backward_grouped_flat_kernel, (packs(geom), slices),
            dy, x, w, dx, dw, ws,
            geom.c, geom.k, geom.d, geom.h, geom.w, od, oh, ow, *geom.pad,
            item_consts(geom, cfg["BLOCK_M"])["TILES_H"], n_items, per_split,
            geom.k * geom.cg * geom.t * geom.r * geom.s,
            syn, syd, syh, syw, sxn, sxd, sxh, sxw, *strides5(dx), *strides5(w),
            *strides5(dw), **cons, SPLIT=split > 1, NEXT=dependent_ok(dw.device),
            num_warps=cfg["num_warps"])


# ``item_consts``'s entries the kernel takes as constexprs.
KERNEL_CONSTS = ("ROWS", "WP", "P", "XP", "XNEED", "XCOPY", "NPH", "YNEED", "A0", "AMAX",
                 "BMAX")


# The kernel this one extends, whose launch grid dW's reduction has.
_WGRAD = WgradGroupedFlatFamily()


class BackwardGroupedFlatFamily(GradFamily):
    """The fused kernel as a family of its own direction ("backward": dX and dW of one
    pass), so that the sweep measures its configs and a model of that direction ranks
    them beside ``backward_pair``. ``dispatcher/fused_pair.py`` runs a pass with it where
    that direction's choice is one of its configs (``pair_config``) and launches it
    (``launch``); ``GradCall`` holds one output, so the family's own ``launch`` is not
    used."""

    name = "backward_grouped_flat"
    direction = "backward"
    summary = ("dX and dW of a few-channel grouped conv in one kernel (Gluon): "
               "wgrad_grouped_flat's items and copies, dX from the same copy of dY")
    dtypes = DTYPES
    interpreted = False
    configs = CONFIGS

    def supports(self, geom) -> str | None:
        return supports(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """dW's reduction (as ``wgrad_grouped_flat``'s in 2D): packs of GPT groups, each
        reducing every tap (in 3D every plane's: one program for all depth taps) over the
        items."""
        c = item_consts(geom, cfg["BLOCK_M"])
        grid = _WGRAD.pack_grid(geom, cfg, items(geom, cfg), c["P"])
        return dataclasses.replace(grid, n=grid.n * geom.t, block_n=grid.block_n * geom.t,
                                   mult=packs(geom))

    def smem_bytes(self, geom, cfg: Config) -> int:
        return smem_bytes(geom, cfg)

    def hard_ok(self, geom, cfg, device) -> str | None:
        return config_rejects(geom, cfg, device) or super().hard_ok(geom, cfg, device)

    def rule_config(self, geom, device) -> Config | None:
        return rule_config(geom, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        raise NotImplementedError("backward_grouped_flat writes dX and dW: "
                                  "dispatcher.fused_pair.run launches it")
