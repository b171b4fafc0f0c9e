"""Grouped convolution (2D, 3D) with few channels a group, on a flat grid of stride phases
(Gluon).

``grouped_packed`` loads its input tile once a filter tap (nine times from L2 for 3x3)
and ``grouped_rows`` sums TILE_W >= 16 columns a dot, so 7- and 14-column maps idle most
of every tile. Here an item is ROWS output rows of one image laid out on the flat grid of
``flat_grid`` (P positions), for a pack of GPT whole groups (BLOCK output channels): a
program copies an item's input once into shared memory as stride-phase images
(cp.async), holds every tap's block-diagonal [BLOCK, BLOCK] filter tile beside it (every
plane's tiles as cp.async copies in flight with the first item's where ``filter_async``
allows, else loaded a filter plane at once: ``flat_grid.filter_tiles``), and
each tap is one mma of the [P, BLOCK] run of rows at the tap's flat shift with that tile,
accumulated in registers; the epilogue (bias, residual, activation) stores the
positions that are output pixels. A program walks its items (the filter tiles load
once), the next item's copies in flight while this one's mmas run; one item a program
of a 3D conv where two would leave SMs idle (``ONE_ITEM``). 2D tiles 16
channels wide keep every tap's filter tile in registers for all the items
(``filter_in_registers``) instead of reading it from shared memory each item.

Row reuse (``row_reuse``): on a grid rounded to 16 columns, the taps that read one phase
at one column shift differ by whole runs of 16 rows, so each warp holds its P / num_warps
positions as runs of 16 (an accumulator each) and loads each run of the buffer once for
every such tap (``flat_grid.reuse_plan``): 0.3 to 0.67 of the shared-memory operand
loads it took (ResNeXt-50 layer2.1, 8 runs a warp: 36 a plane where 72 were).

WGMMA (Hopper): each tap is warpgroup mmas that read both operands from shared memory,
the tap's shifted run of rows and its filter tile, issued back to back and waited for
once a step: no ldmatrix, no operand registers. The rows are swizzled over their width
(32, 64 or 128 bytes), which a view may start on any row of, as the swizzle follows the
shared-memory address (``flat_grid.row_layout``). Its tiles are 4 or 8 warps (a
warpgroup takes 64 positions), and 32 wide also for groups of 16 channels or fewer: the
block-diagonal zeros cost matrix work that is now cheap, and a copy moves 64 bytes a
pixel (ResNeXt-50 layer2.0 at batch 32, stride 2: the best row 40.0 -> 35.3 us, call 284;
validation/results/flat_wgmma_h100/). Where a 32-wide tile's groups fit its 16-channel
halves, each half of the rows meets only its diagonal 16 x 16 block of the filter tile,
the only part of it held (``diag_blocks``): half the filter bytes and matrix work. Tiles 64
wide (128 bytes a pixel a copy) hold and multiply their four blocks alone; they were faster
than the narrower tiles on few layers (validation/results/wide_tiles_h200/).

TMA (WGMMA configs with TMA=1, Hopper): each buffer's phase images are TMA boxes of
whole grid rows of 5D views of the input's phases ([N, D, H / STH, W / STW, C]:
``phase_descriptors``), one thread issuing them and an mbarrier a buffer waiting for
them, where every thread issued 16-byte cp.async copies. Boxes are powers of two, so the
grid is next_pow2(OW + BMAX) wide (``flat_consts(tma=True)``; ``tma_rejects`` takes it
where that is at most 1.2x the flat grid) and an item's input rows are one or two boxes;
the padding is the zeros TMA reads outside a view. On an H200 the prototype of this path
was 1.07x faster a config over 578 configs of 14 of the issue-6 suite's grouped layers
(validation/results/grouped_stages_h200/).

In 3D an item is ROWS output rows of one output depth slice, and a program steps through
its depth taps: each step copies the input slice that depth tap reads (zeros where that
is padding: ``flat_grid.depth_slice``) and adds that plane's taps to the item's
accumulator, the epilogue running after the last. Every tap's tile (27 for 3x3x3) stays
in shared memory; the steps, not the items, cycle through the buffers: two, a step's
copies issued as the step before it starts, or, for one item a program of a WGMMA tile, a
buffer a depth tap, every step's copies in flight at once (``input_buffers``).

As in ``grouped_packed``, the zeros of the block-diagonal tile are multiplied: an Inf
or NaN in one group's input turns the same pixel's outputs of the pack's other groups
into NaN. Through ``dgrad_forward`` the same kernel computes the gradient of the input
(``dgrad_grouped_flat``): it reads the stored filter transposed (TRANSPOSED) and its taps
reversed (negative tap strides from the last tap).

Gluon has no interpreter: tests/test_flat_grid.py compiles it (WGMMA too) for sm_90 on the CPU;
tests/test_gpu_families.py and tests/test_gpu_grad.py run it.
"""

from __future__ import annotations

from .base import Config, ConvCall, KernelFamily
from .common import cdiv, oriented_filter, out_args, strides5
from .flat_grid import (
    FLAT_POSITIONS,
    flat_config_rejects,
    flat_consts,
    item_rejects,
    reuse_loads,
    tma_rejects,
)
from .gluon_common import HAVE_GLUON, aligned_pixels, gluon_grouped_rejects, pack_rejects
from .grad_packed import square_pack_gpt
from .grouped_packed import filter_vector
from .launcher import launch_kernel

if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2
    from triton.experimental.gluon.language.nvidia.hopper import (
        fence_async_shared,
        mbarrier,
        tma,
        warpgroup_mma,
        warpgroup_mma_wait,
    )

    from .flat_grid import (
        copy_layout,
        copy_phases,
        depth_slice,
        filter_tiles,
        reuse_at,
        reuse_plan,
        row_layout,
        row_units,
        tap_rows,
        tile_swizzle,
        unit_rows,
        warp_rows_layout,
    )

    @gluon.jit
    def _activate(x, ACT: gl.constexpr):
        """``common.activate``'s activations (NaN propagates as in torch)."""
        if ACT == 1:
            x = gl.where(x < 0, 0.0, x)
        elif ACT == 2:
            x = gl.where(x < 0, 0.0, gl.where(x > 6.0, 6.0, x))
        elif ACT == 3:
            x = 0.5 * x * (1.0 + gl.erf(x * 0.7071067811865476))
        elif ACT == 4:
            x = x / (1.0 + gl.exp(-x))
        return x

    @gluon.jit
    def _issue(item, end, td, x_units, x_ptr, ch, cok, D, H, W, OD, pdd, pdh, pdw, TILES_H,
               sxn, sxd, sxh, sxw, BUF: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
               XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
               NPH: gl.constexpr, DEPTH: gl.constexpr, STD: gl.constexpr,
               DLD: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr, LX: gl.constexpr,
               SWZ: gl.constexpr):
        """Start copying the phase images of the input slice that depth tap ``td`` of an
        item reads into buffer BUF (one cp.async group; zeros where it is padding)."""
        n, _, di, live = depth_slice(item // TILES_H, td, item < end, OD, D, pdd, DEPTH,
                                     STD, DLD)
        copy_phases(x_units, x_ptr + di * sxd, n, (item % TILES_H) * ROWS, live, ch, cok, H,
                    W, pdh, pdw, sxn, sxh, sxw, BUF, WP, XP, XNEED, XCOPY, NPH, STH, STW, LX,
                    SWZ)
        cp.commit_group()

    @gluon.jit
    def _tma_issue(item, td, items, da0, db0, da1, db1, da2, db2, da3, db3, x_units, bar,
                   pack, TILES_H, OD, pdd, BUF: gl.constexpr, NPH: gl.constexpr,
                   STD: gl.constexpr, DLD: gl.constexpr, ROWS: gl.constexpr,
                   RA: gl.constexpr, RB: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
                   BLOCK: gl.constexpr, OFF: gl.constexpr):
        """``_issue`` by TMA: the phase images of the input slice that depth tap ``td`` of
        ``item`` (clamped to the last: its copies are not read) reads, into buffer BUF, as
        boxes of RA and RB whole grid rows of 5D views of the phases ([N, D, H / STH,
        W / STW, C]; OFF: each phase's (row, column) offset in its view), completing on
        ``bar``; zeros where a box leaves its view (the padding, in depth too)."""
        it = gl.minimum(item, items - 1)
        img = it // TILES_H
        di = (img % OD) * STD - pdd + td * DLD
        n = img // OD
        oh0 = (it % TILES_H) * ROWS
        mbarrier.expect(bar, NPH * (RA + RB) * WP * BLOCK * 2)
        descs_a = (da0, da1, da2, da3)
        descs_b = (db0, db1, db2, db3)
        L5: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=2 * BLOCK,
                                                element_bitwidth=16, rank=5)
        for ph in gl.static_range(NPH):
            base = (BUF * NPH + ph) * XP
            tma.async_copy_global_to_shared(
                descs_a[ph], [n, di, oh0 + OFF[ph][0], OFF[ph][1], pack * BLOCK], bar,
                x_units.index(base * (BLOCK // 8))._reinterpret(
                    x_units.dtype, [1, 1, RA, WP, BLOCK], L5))
            if RB > 0:
                tma.async_copy_global_to_shared(
                    descs_b[ph], [n, di, oh0 + RA + OFF[ph][0], OFF[ph][1], pack * BLOCK],
                    bar, x_units.index((base + RA * WP) * (BLOCK // 8))._reinterpret(
                        x_units.dtype, [1, 1, RB, WP, BLOCK], L5))

    @gluon.jit
    def _taps(acc, x_units, w_smem, TAP0, BUF: gl.constexpr, R: gl.constexpr,
              S: gl.constexpr, P: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
              NPH: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr, DLH: gl.constexpr,
              DLW: gl.constexpr, BLOCK: gl.constexpr, XT: gl.constexpr, A_L: gl.constexpr,
              B_L: gl.constexpr):
        """``acc`` plus, for every tap of a plane (its tiles from TAP0 in ``w_smem``), the
        mma of the P-row run it reads in buffer BUF with its tile."""
        for t in gl.static_range(R * S):
            a = tap_rows(x_units, t, 0, P, BUF, S, WP, XP, NPH, STH, STW, DLH, DLW, BLOCK,
                         XT).load(A_L)
            b = w_smem.index(TAP0 + t).permute((1, 0)).load(B_L)
            acc = mma_v2(a, b, acc)
        return acc

    @gluon.jit
    def _taps_wgmma(accs, x_units, w_smem, TAP0, BUF: gl.constexpr, R: gl.constexpr,
                    S: gl.constexpr, P: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
                    NPH: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
                    DLH: gl.constexpr, DLW: gl.constexpr, BLOCK: gl.constexpr,
                    XT: gl.constexpr, DIAG: gl.constexpr):
        """``_taps`` as warpgroup mmas that read both operands from shared memory: each
        tap's shifted run of rows (XT: swizzled rows) and its filter tile, issued
        back to back without waiting; waits for all before returning (the next copies
        overwrite the buffer). ``accs``: an accumulator a diagonal block (DIAG of them,
        ``diag_blocks``; one: the whole tile), each block's columns of the rows against
        its own diagonal block of the filter tile (``w_smem`` holds those blocks alone:
        [BLOCK, BLOCK / DIAG] a tap): the same rows read, 1 / DIAG of the filter bytes and
        of the matrix work."""
        DB: gl.constexpr = BLOCK // DIAG
        for t in gl.static_range(R * S):
            a = tap_rows(x_units, t, 0, P, BUF, S, WP, XP, NPH, STH, STW, DLH, DLW, BLOCK,
                         XT, True)
            w = w_smem.index(TAP0 + t)
            new = ()
            for j in gl.static_range(DIAG):
                if DIAG == 1:
                    new = new + (warpgroup_mma(a, w.permute((1, 0)), accs[j],
                                               is_async=True),)
                else:
                    new = new + (warpgroup_mma(a.slice(j * DB, DB, 1),
                                               w.slice(j * DB, DB, 0).permute((1, 0)),
                                               accs[j], is_async=True),)
            accs = new
        # (One return: Triton compares every return's type, a dead branch's too.)
        if DIAG == 1:
            out = (warpgroup_mma_wait(0, deps=[accs[0]]),)
        else:
            out = warpgroup_mma_wait(0, deps=accs)
        return out

    @gluon.jit
    def _filter_regs(w_smem, TAPS: gl.constexpr, B_L: gl.constexpr):
        """Every tap's filter tile as an mma operand in registers (tuple index = tap)."""
        bs = ()
        for t in gl.static_range(TAPS):
            bs = bs + (w_smem.index(t).permute((1, 0)).load(B_L),)
        return bs

    @gluon.jit
    def _taps_regs(acc, x_units, bs, BUF: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
                   P: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr, NPH: gl.constexpr,
                   STH: gl.constexpr, STW: gl.constexpr, DLH: gl.constexpr,
                   DLW: gl.constexpr, BLOCK: gl.constexpr, XT: gl.constexpr,
                   A_L: gl.constexpr):
        """``_taps`` with the filter tiles already in registers (``_filter_regs``)."""
        for t in gl.static_range(R * S):
            a = tap_rows(x_units, t, 0, P, BUF, S, WP, XP, NPH, STH, STW, DLH, DLW, BLOCK,
                         XT).load(A_L)
            acc = mma_v2(a, bs[t], acc)
        return acc

    @gluon.jit
    def _taps_reuse(accs, x_units, w_smem, bs, TAP0, BUF: gl.constexpr, R: gl.constexpr,
                    S: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr, NPH: gl.constexpr,
                    STH: gl.constexpr, STW: gl.constexpr, DLH: gl.constexpr,
                    DLW: gl.constexpr, BLOCK: gl.constexpr, SPAN: gl.constexpr,
                    XR: gl.constexpr, B_REGS: gl.constexpr, A_L: gl.constexpr,
                    B_L: gl.constexpr):
        """``_taps`` on accumulators of 16 positions a warp (``accs[i]``: run i of each
        warp's SPAN positions), each run of the buffer loaded once for every tap that
        reads it (``flat_grid.reuse_plan``); the group's filter tiles are loaded (or taken
        from ``bs``) before its runs."""
        NW: gl.constexpr = gl.num_warps()
        # (One constant plan; ``reuse_at`` reads its entries.)
        PLAN: gl.constexpr = reuse_plan(R, S, STH, STW, DLH, DLW, WP, SPAN // 16)
        for g in gl.static_range(reuse_at(PLAN, "groups", 0, 0, 0)):
            gb = ()
            for u in gl.static_range(reuse_at(PLAN, "ntaps", g, 0, 0)):
                if B_REGS:
                    gb = gb + (bs[reuse_at(PLAN, "tap", g, u, 0)],)
                else:
                    gb = gb + (w_smem.index(TAP0 + reuse_at(PLAN, "tap", g, u, 0)
                                            ).permute((1, 0)).load(B_L),)
            for n in gl.static_range(reuse_at(PLAN, "nloads", g, 0, 0)):
                a = x_units.index(
                    ((BUF * NPH + reuse_at(PLAN, "phase", g, 0, 0)) * XP
                     + 16 * reuse_at(PLAN, "run", g, n, 0)
                     + reuse_at(PLAN, "col", g, 0, 0))
                    * row_units(BLOCK)
                )._reinterpret(x_units.dtype, [16 * NW, BLOCK],
                               warp_rows_layout(NW, BLOCK, SPAN, XR)).load(A_L)
                new = ()
                for i in gl.static_range(SPAN // 16):
                    if reuse_at(PLAN, "use", g, n, i) >= 0:
                        new = new + (mma_v2(a, gb[reuse_at(PLAN, "use", g, n, i)], accs[i]),)
                    else:
                        new = new + (accs[i],)
                accs = new
        return accs

    @gluon.jit
    def _zero_runs(M: gl.constexpr, BLOCK: gl.constexpr, RUNS: gl.constexpr,
                   MMA: gl.constexpr):
        """RUNS float32 accumulators of [M, BLOCK] (``_taps_reuse``)."""
        accs = ()
        for _ in gl.static_range(RUNS):
            accs = accs + (gl.zeros([M, BLOCK], gl.float32, MMA),)
        return accs

    @gluon.jit
    def _places(item, end, oh0, pack, K, OH, OW, KG: gl.constexpr, GPT: gl.constexpr,
                ROWS: gl.constexpr, WP: gl.constexpr, M: gl.constexpr, SPAN: gl.constexpr,
                FIRST: gl.constexpr, BLOCK: gl.constexpr, L: gl.constexpr,
                CH0: gl.constexpr = 0):
        """Of an [M, BLOCK] tile of an item in layout L, its row m the item's position
        (m // 16) * SPAN + FIRST + m % 16 (the whole item: SPAN 16, FIRST 0; run i of each
        warp's SPAN positions: FIRST 16 i): each position's output row and column, whether
        it is an output pixel (none unless the item is below ``end``), each column's output
        channel and whether it is one of the pack's (the tile's columns from the pack's
        channel CH0)."""
        f = gl.arange(0, M, layout=gl.SliceLayout(1, L))
        if SPAN != 16:
            f = (f // 16) * SPAN + FIRST + f % 16
        j = CH0 + gl.arange(0, BLOCK, layout=gl.SliceLayout(0, L))
        oh = oh0 + f // WP
        q = f % WP
        m_ok = (item < end) & (f // WP < ROWS) & (q < OW) & (oh < OH)
        k_glob = pack * (GPT * KG) + j
        k_ok = (j < GPT * KG) & (k_glob < K)
        return oh, q, m_ok, k_glob, k_ok

    @gluon.jit
    def _epilogue(acc, item, end, pack, out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr,
                  srn, src, srd, srh, srw, K, OD, OH, OW, TILES_H, KG: gl.constexpr,
                  GPT: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr, M: gl.constexpr,
                  SPAN: gl.constexpr, FIRST: gl.constexpr,
                  BLOCK: gl.constexpr, DEPTH: gl.constexpr, ACT: gl.constexpr,
                  HAS_BIAS: gl.constexpr, HAS_RES: gl.constexpr, MMA: gl.constexpr,
                  LY: gl.constexpr, CH0: gl.constexpr = 0):
        """Bias, residual and activation in the mma layout, then the store from layout LY of
        the positions of ``acc`` (an [M, BLOCK] tile: ``_places``) that are output pixels
        (none unless the item is below ``end``)."""
        n, od, _, _ = depth_slice(item // TILES_H, 0, True, OD, 1, 0, DEPTH, 1, 1)
        oh0 = (item % TILES_H) * ROWS
        if HAS_BIAS or HAS_RES:
            oh, q, m_ok, k_glob, k_ok = _places(item, end, oh0, pack, K, OH, OW, KG, GPT,
                                                ROWS, WP, M, SPAN, FIRST, BLOCK, MMA, CH0)
            if HAS_BIAS:
                bias = gl.load(bias_ptr + k_glob, mask=k_ok, other=0.0)
                acc = acc + gl.expand_dims(bias.to(gl.float32), 0)
            if HAS_RES:
                r_off = (gl.expand_dims(n * srn + od * srd + oh * srh + q * srw, 1)
                         + gl.expand_dims(k_glob * src, 0))
                r_ok = gl.expand_dims(m_ok, 1) & gl.expand_dims(k_ok, 0)
                acc = acc + gl.load(res_ptr + r_off, mask=r_ok, other=0.0).to(gl.float32)
        acc = _activate(acc, ACT)
        # The mma layout holds 2 channels (4 bytes) of a position a thread, so a store
        # from it writes half of each 32-byte sector (two writes a sector); LY holds 8
        # (16 bytes, ``copy_layout``).
        y = gl.convert_layout(acc.to(out_ptr.dtype.element_ty), LY)
        oh, q, m_ok, k_glob, k_ok = _places(item, end, oh0, pack, K, OH, OW, KG, GPT, ROWS,
                                            WP, M, SPAN, FIRST, BLOCK, LY, CH0)
        y_off = (gl.expand_dims(n * syn + od * syd + oh * syh + q * syw, 1)
                 + gl.expand_dims(k_glob * syc, 0))
        gl.store(out_ptr + y_off, y, mask=gl.expand_dims(m_ok, 1) & gl.expand_dims(k_ok, 0))

    # (ITEMS_PER_PROGRAM = 1 specialised as a constant folds the step loop away, and
    # Triton 3.6 then failed an LLVM assertion on some 2D tiles: call 297.)
    @gluon.jit(do_not_specialize=["ITEMS_PER_PROGRAM"])
    def grouped_flat_kernel(
        x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
        bias_ptr, res_ptr, srn, src, srd, srh, srw,
        C, K, D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, ITEMS, ITEMS_PER_PROGRAM,
        sxn, sxd, sxh, sxw, swk, swc, swt, swr, sws, da0, db0, da1, db1, da2, db2, da3, db3,
        CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, T: gl.constexpr,
        R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
        P: gl.constexpr, XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
        NPH: gl.constexpr, BLOCK: gl.constexpr, STD: gl.constexpr, STH: gl.constexpr,
        STW: gl.constexpr, DLD: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr,
        DEPTH: gl.constexpr, ACT: gl.constexpr, HAS_BIAS: gl.constexpr,
        HAS_RES: gl.constexpr, TRANSPOSED: gl.constexpr, B_REGS: gl.constexpr = False,
        REUSE: gl.constexpr = False, W_VEC: gl.constexpr = 1, WGMMA: gl.constexpr = False,
        TMA: gl.constexpr = False, RA: gl.constexpr = 0, RB: gl.constexpr = 0,
        OFF: gl.constexpr = (), W_ASYNC: gl.constexpr = False, BUFS: gl.constexpr = 2,
        DIAG: gl.constexpr = 1,
    ):
        NW: gl.constexpr = gl.num_warps()
        LX: gl.constexpr = copy_layout(BLOCK, NW)
        if WGMMA:
            # Warpgroup mmas of 64 positions x BLOCK channels x 16, both operands read
            # from shared memory (no ldmatrix, no operand registers), issued back to back.
            # (DIAG > 1: an accumulator of BLOCK / DIAG channels a diagonal block, and the
            # filter tiles hold those blocks alone: ``_taps_wgmma``.)
            MMA: gl.constexpr = gl.NVMMADistributedLayout(
                version=[3, 0], warps_per_cta=[NW, 1], instr_shape=[16, BLOCK // DIAG, 16])
            SW: gl.constexpr = row_layout(BLOCK, BLOCK // DIAG, BLOCK, True)
        else:
            MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0],
                                                          warps_per_cta=[NW, 1],
                                                          instr_shape=[16, 8])
            SW: gl.constexpr = tile_swizzle(BLOCK)
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        pack = gl.program_id(0)
        first = gl.program_id(1) * ITEMS_PER_PROGRAM
        end = gl.minimum(first + ITEMS_PER_PROGRAM, ITEMS)
        # Phase images (flat_grid.row_layout), read and written through views of 16-byte
        # units, so that a view starts on any row.
        # BUFS buffers: a step's copies are issued BUFS - 1 steps ahead (``input_buffers``).
        XR: gl.constexpr = BUFS * NPH * XP
        x_units = unit_rows(x_ptr.dtype.element_ty, XR, BLOCK, WGMMA)
        XT: gl.constexpr = row_layout(P, BLOCK, XR, WGMMA)
        # Every tap's filter tile, rows = output channels of the pack (its diagonal blocks'
        # columns alone where DIAG > 1).
        w_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty,
                                           [T * R * S, BLOCK, BLOCK // DIAG], SW)
        ch = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, LX))
        c_glob = gl.expand_dims(pack * (GPT * CG) + ch, 0)
        cok = gl.expand_dims(ch < GPT * CG, 0) & (c_glob < C)
        if TMA:
            # (TMA: one mbarrier a buffer, its copies' completion.)
            bars = gl.allocate_shared_memory(gl.int64, [BUFS, 1], mbarrier.MBarrierLayout())
            for i in gl.static_range(BUFS):
                mbarrier.init(bars.index(i), count=1)
            _tma_issue(first, 0, ITEMS, da0, db0, da1, db1, da2, db2, da3, db3, x_units,
                       bars.index(0), pack, TILES_H, OD, pdd, 0, NPH, STD, DLD, ROWS, RA, RB,
                       WP, XP, BLOCK, OFF)
        else:
            _issue(first, end, 0, x_units, x_ptr, c_glob, cok, D, H, W, OD, pdd, pdh, pdw,
                   TILES_H, sxn, sxd, sxh, sxw, 0, ROWS, WP, XP, XNEED, XCOPY, NPH, DEPTH,
                   STD, DLD, STH, STW, LX, WGMMA)
        # The filter tiles load while the first item's copies are in flight, a plane at
        # once (``filter_tiles``' BURST: 1.14x over the issue-6 layers' fastest flat
        # tiles, up to 1.5x on 3D ones; validation/results/filter_burst_h100/).
        # In vector loads where W_VEC > 1 (1.025x a config over the family's rows, 1.11x on
        # 3D ones; validation/results/flat_filter_vectors_h100/).
        # W_ASYNC: every plane's tiles as cp.async copies, one group in flight beside the
        # first item's copies (``filter_async``), where a plane at once waited on a round
        # trip a plane.
        for plane in gl.static_range(T):
            filter_tiles(w_smem, plane * R * S, w_ptr, pack, K, swk, swc, swr, sws, KG, CG,
                         GPT, R, S, BLOCK, TRANSPOSED, copy_layout(BLOCK // DIAG, NW), True,
                         W_VEC, plane * swt, W_ASYNC, BLOCK // DIAG if DIAG > 1 else 0)
        if W_ASYNC:
            cp.commit_group()
        for s in gl.static_range(1, BUFS - 1):
            # (The further steps a deeper pipeline has in flight before the loop.)
            if TMA:
                _tma_issue(first + s // T, s % T, ITEMS, da0, db0, da1, db1, da2, db2, da3,
                           db3, x_units, bars.index(s), pack, TILES_H, OD, pdd, s, NPH, STD,
                           DLD, ROWS, RA, RB, WP, XP, BLOCK, OFF)
            else:
                _issue(first + s // T, end, s % T, x_units, x_ptr, c_glob, cok, D, H, W, OD,
                       pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, s, ROWS, WP, XP, XNEED,
                       XCOPY, NPH, DEPTH, STD, DLD, STH, STW, LX, WGMMA)
        if B_REGS:
            # Loaded once a program, not once an item: the shared-memory reads of the
            # filter tiles were a fifth to a third of an item's (2 warps reading each).
            gl.thread_barrier()
            bs = _filter_regs(w_smem, R * S, B_L)
        else:
            bs = ()
        # REUSE: each warp holds SPAN consecutive positions as runs of 16, one accumulator
        # a run (``_taps_reuse``); else one [P, BLOCK] accumulator.
        SPAN: gl.constexpr = P // NW if REUSE else 16
        RUNS: gl.constexpr = SPAN // 16 if REUSE else 1
        M: gl.constexpr = 16 * NW if REUSE else P
        # DIAG: an accumulator a diagonal block of the channels (AW wide), each its own
        # epilogue.
        AW: gl.constexpr = BLOCK // DIAG
        # A step is one depth tap of an item (T of them an item, summed in ``acc``); BUFS
        # steps an iteration, one a buffer, so every shared-memory offset is constant.
        acc = _zero_runs(M, AW, RUNS * DIAG, MMA)
        for it in range(0, ITEMS_PER_PROGRAM * T, BUFS):
            for buf in gl.static_range(BUFS):
                item = first + (it + buf) // T
                td = (it + buf) % T if T > 1 else 0
                # The copies of the step BUFS - 1 ahead, into the buffer the last step read.
                ahead = it + buf + BUFS - 1
                if TMA:
                    _tma_issue(first + ahead // T, ahead % T, ITEMS, da0, db0, da1, db1, da2,
                               db2, da3, db3, x_units, bars.index((buf + BUFS - 1) % BUFS),
                               pack, TILES_H, OD, pdd, (buf + BUFS - 1) % BUFS, NPH, STD, DLD,
                               ROWS, RA, RB, WP, XP, BLOCK, OFF)
                    # (Each buffer completes once an iteration.)
                    mbarrier.wait(bars.index(buf), (it // BUFS) & 1)
                    if W_ASYNC:
                        cp.wait_group(0)
                else:
                    _issue(first + ahead // T, end, ahead % T, x_units, x_ptr, c_glob, cok, D,
                           H, W, OD, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw,
                           (buf + BUFS - 1) % BUFS, ROWS, WP, XP, XNEED, XCOPY, NPH, DEPTH,
                           STD, DLD, STH, STW, LX, WGMMA)
                    cp.wait_group(BUFS - 1)
                if WGMMA:
                    # The copies (and the filter tiles' stores) are read by the async proxy.
                    fence_async_shared()
                gl.thread_barrier()
                if WGMMA:
                    acc = _taps_wgmma(acc, x_units, w_smem, td * (R * S), buf, R, S, P, WP, XP,
                                      NPH, STH, STW, DLH, DLW, BLOCK, XT, DIAG)
                elif REUSE:
                    acc = _taps_reuse(acc, x_units, w_smem, bs, td * (R * S), buf, R, S, WP,
                                      XP, NPH, STH, STW, DLH, DLW, BLOCK, SPAN, XR, B_REGS,
                                      A_L, B_L)
                elif B_REGS:
                    acc = (_taps_regs(acc[0], x_units, bs, buf, R, S, P, WP, XP, NPH, STH,
                                      STW, DLH, DLW, BLOCK, XT, A_L),)
                else:
                    acc = (_taps(acc[0], x_units, w_smem, td * (R * S), buf, R, S, P, WP, XP,
                                 NPH, STH, STW, DLH, DLW, BLOCK, XT, A_L, B_L),)
                # The next copies overwrite the buffer just read.
                gl.thread_barrier()
                if td == T - 1:
                    # Accumulator i: run i of each warp's positions (REUSE), or the channels
                    # from i * AW (DIAG); never both (REUSE is mma.sync's).
                    for i in gl.static_range(RUNS * DIAG):
                        _epilogue(acc[i], item, end, pack, out_ptr, syn, syc, syd, syh, syw,
                                  bias_ptr, res_ptr, srn, src, srd, srh, srw, K, OD, OH, OW,
                                  TILES_H, KG, GPT, ROWS, WP, M, SPAN,
                                  0 if DIAG > 1 else 16 * i, AW, DEPTH, ACT, HAS_BIAS,
                                  HAS_RES, MMA, copy_layout(AW, NW), i * AW if DIAG > 1 else 0)
                    acc = _zero_runs(M, AW, RUNS * DIAG, MMA)
        if TMA:
            # The copies issued past the last step (into buffers 0 .. BUFS - 2) land before
            # the end. (Each of those buffers takes one copy more than the loop's
            # iterations, ceil(ITEMS * T / BUFS): its last completion's parity is theirs.)
            for b in gl.static_range(BUFS - 1):
                mbarrier.wait(bars.index(b),
                              ((ITEMS_PER_PROGRAM * T + BUFS - 1) // BUFS) & 1)
        else:
            cp.wait_group(0)


# Filter taps the kernel unrolls (each a [BLOCK, BLOCK] tile in shared memory).
MAX_FLAT_TAPS = 9
# (BLOCK_N, num_warps): the mma warps split the positions in sixteens; ITEMS a program
# walks (its filter tiles load once, its items alternate buffers in pairs).
FLAT_TILES = ((16, 2), (16, 4), (32, 2), (32, 4))
# The 64-wide WGMMA tile: a copy moves 128 bytes a pixel (a copy-only kernel moved the
# ResNeXt-50 layers' phase images in 5-9% less time with 128 bytes than with 64, call 291:
# validation/results/grouped_stages_h200/), its filter tiles the diagonal blocks alone.
FLAT_WIDE = 64
# (BLOCK_N, num_warps) of the WGMMA tiles: warpgroup mmas of 64 positions (8 warps: two
# warpgroups, items of 128 positions or more).
FLAT_WGMMA_TILES = ((16, 4), (32, 4), (16, 8), (32, 8), (FLAT_WIDE, 4), (FLAT_WIDE, 8))
# ITEMS offered to every geometry (4 and 8 only where the programs still cover the SMs);
# the dgrad twin's only ones.
FLAT_ITEMS = (2, 4, 8)
# The fill ladder: a geometry is also offered, for each FILL_LEVELS k, the fewest items a
# program of FILL_ITEMS that leave at most k programs an SM (a value of FLAT_ITEMS keeps
# its own rule, so the dgrad twin's candidates do not change). Where the programs are more
# than the SMs hold at once, the last ones run as a second wave on a mostly idle GPU
# (ResNeXt-50 layer1.0 at batch 32, 128 positions, 2 warps: 8 items, 896 programs for 6
# an SM, 62.9 us; 20 items, 360 programs, 44.4 us: validation/results/flat_fill_h100/).
# Even counts only: items go in pairs, so an odd count idles half its last step.
FILL_ITEMS = (2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64)
FILL_LEVELS = (1, 2, 3, 4, 6)
# One item a program, offered to 3D convs where two leave SMs idle: twice the programs, each
# with fewer steps (at three depth taps, 3 for 6 on WGMMA tiles, a buffer a step:
# ``input_buffers``; 4 on mma.sync ones, whose steps go in pairs). On the
# small 3D layers of the issue-6 suite (ResNeXt3D-50 layer2.x-4.0 at batch 1, 32 to 128
# programs of two items) the fastest config a layer took 0.86-0.96 of the time of the
# fastest with two items or more (H200, call 301: validation/results/filter_async_h200/).
# Not to 2D ones: a program runs two steps either way (the second dead), and on ResNeXt3D-50
# layer4.1, one depth tap live, it was never faster.
ONE_ITEM = 1


class GroupedFlatFamily(KernelFamily):
    name = "grouped_flat"
    summary = ("grouped conv (2D, 3D), few channels a group (Gluon): an item's input copied "
               "once as stride-phase images on a flat grid (a slice a depth tap in 3D), "
               "each tap one mma of a shifted run of rows with a block-diagonal filter "
               "tile")
    dtypes = ("float16", "bfloat16")
    interpreted = False
    int32_offsets = True
    fills_gpu = True
    configs = tuple(Config(BLOCK_M=pos, BLOCK_N=bn, ITEMS=items, num_warps=wp, num_stages=1)
                    for items in (ONE_ITEM, *FILL_ITEMS) for pos in FLAT_POSITIONS
                    for bn, wp in FLAT_TILES)
    # The dgrad twin keeps the mma.sync tiles its rows were measured with.
    dgrad_configs = tuple(c for c in configs if c["ITEMS"] in FLAT_ITEMS)
    configs = configs + tuple(
        Config(BLOCK_M=pos, BLOCK_N=bn, ITEMS=items, num_warps=wp, num_stages=1, WGMMA=1,
               **tma)
        for tma in ({}, {"TMA": 1})
        for items in (ONE_ITEM, *FILL_ITEMS) for pos in FLAT_POSITIONS
        for bn, wp in FLAT_WGMMA_TILES)

    def supports(self, geom) -> str | None:
        return (gluon_grouped_rejects(geom, MAX_FLAT_TAPS, geom.c, depth=True)
                or item_rejects(geom, FLAT_POSITIONS[-1]))

    @staticmethod
    def gpt(geom, cfg: Config) -> int:
        """Whole groups a BLOCK_N x BLOCK_N filter tile packs."""
        return square_pack_gpt(geom, cfg["BLOCK_N"])

    def items(self, geom, cfg: Config) -> int:
        """Items of ``geom``: ROWS output rows of one image (and output depth) each."""
        od, oh, _ = geom.out_spatial
        return geom.n * od * cdiv(oh, flat_item(geom, cfg)["ROWS"])

    def packs(self, geom, cfg: Config) -> int:
        """Programs along the groups (launch grid axis 0): packs of ``gpt`` whole groups."""
        return cdiv(geom.g, self.gpt(geom, cfg))

    def pixel_tiles(self, geom, cfg: Config) -> int:
        """Programs along the output pixels (launch grid axis 1): ITEMS items each."""
        return cdiv(self.items(geom, cfg), cfg["ITEMS"])

    def smem_bytes(self, geom, cfg: Config) -> int:
        c = flat_item(geom, cfg)
        bn = cfg["BLOCK_N"]
        cols = bn // diag_blocks(geom, cfg, False)
        return ((input_buffers(geom, cfg) * c["NPH"] * c["XP"] * bn
                 + geom.t * geom.r * geom.s * bn * cols) * geom.elem_bytes)

    def schedule(self, geom, cfg: Config) -> str | None:
        """What this family's rules choose for ``cfg``'s launch on ``geom`` (row reuse,
        diagonal blocks, more than two input buffers), or None where they choose none."""
        notes = []
        if row_reuse(geom, cfg):
            without, with_reuse = reuse_loads(geom, cfg["BLOCK_M"], cfg["num_warps"])
            wp = flat_consts(geom, cfg["BLOCK_M"], reuse=True)["WP"]
            notes.append(f"row reuse: a {wp}-wide grid, each run of 16 rows loaded once for "
                         f"every tap that reads it ({with_reuse} of {without} operand loads a "
                         "filter plane)")
        if (blocks := diag_blocks(geom, cfg, False)) > 1:
            notes.append(f"{blocks} diagonal blocks of {DIAG_WIDTH} channels: the filter "
                         "tiles' zeros neither held nor multiplied")
        if (bufs := input_buffers(geom, cfg)) > 2:
            notes.append(f"{bufs} input buffers: every depth tap's copies in flight at once")
        return "; ".join(notes) or None

    def hard_ok(self, geom, cfg, device) -> str | None:
        if reason := (pack_rejects(geom, cfg["BLOCK_N"], device, geom.cg)
                      or item_rejects(geom, cfg["BLOCK_M"])):
            return reason
        if cfg["num_warps"] > cfg["BLOCK_M"] // 16:
            return f"num_warps={cfg['num_warps']} exceeds BLOCK_M={cfg['BLOCK_M']} / 16"
        if cfg.get("WGMMA") and device.key != "interpreter" and not device.is_hopper:
            return "WGMMA needs warpgroup mma (compute capability 9.x)"
        if reason := wide_rejects(geom, cfg):
            return reason
        if cfg.get("TMA") and (reason := tma_rejects(geom, cfg["BLOCK_M"], cfg["BLOCK_N"],
                                                     self.gpt(geom, cfg) * geom.cg)):
            return reason
        return super().hard_ok(geom, cfg, device)

    def fill_items(self, geom, cfg: Config, sm_count: int) -> tuple[int, ...]:
        """The ITEMS of the fill ladder offered to ``cfg``'s tile on ``geom``: for each
        FILL_LEVELS k, the fewest of FILL_ITEMS that leave at most k programs an SM; where
        none does (more packs of groups than k an SM), the fewest that take all of a pack's
        items in one program (a program steps through ITEMS items, real or not), else the
        last."""
        items, packs = self.items(geom, cfg), self.packs(geom, cfg)
        return tuple(sorted({next((i for i in FILL_ITEMS
                                   if packs * cdiv(items, i) <= k * sm_count or i >= items),
                                  FILL_ITEMS[-1])
                             for k in FILL_LEVELS}))

    def config_ok(self, geom, cfg, device) -> str | None:
        if reason := flat_config_rejects(geom, cfg, FLAT_POSITIONS[0]):
            return reason
        items = cfg["ITEMS"]
        if items == ONE_ITEM:
            if geom.t == 1:
                return ("ITEMS=1: a program with one depth tap runs two steps either way "
                        "(items go in pairs)")
            pair = Config(**{**cfg, "ITEMS": FLAT_ITEMS[0]})
            programs = self.pixel_tiles(geom, pair) * self.packs(geom, cfg)
            if programs >= device.sm_count:
                return (f"ITEMS=1: {programs} programs of two items already cover the "
                        f"{device.sm_count} SMs")
            return self.hard_ok(geom, cfg, device)
        have = self.items(geom, cfg)
        if items - FLAT_ITEMS[0] >= have:
            # The same grid with fewer steps: a program steps through ITEMS items, real or not.
            return f"ITEMS={items}: {items - FLAT_ITEMS[0]} give the same grid ({have} items)"
        if items not in FLAT_ITEMS:
            fills = self.fill_items(geom, cfg, device.sm_count)
            if items not in fills:
                return (f"ITEMS={items} is not on this geometry's fill ladder {fills} (the "
                        f"fewest items that leave at most {FILL_LEVELS} programs an SM)")
        elif items > FLAT_ITEMS[0]:
            programs = self.pixel_tiles(geom, cfg) * self.packs(geom, cfg)
            if programs < device.sm_count:
                return f"ITEMS={items} leaves {programs} programs for {device.sm_count} SMs"
        return self.hard_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        bn = cfg["BLOCK_N"]
        reuse = row_reuse(g, cfg)
        c = flat_item(g, cfg)
        gpt = self.gpt(g, cfg)
        od, oh, ow = g.out_spatial
        x = aligned_pixels(call.x)
        with_tma = bool(cfg.get("TMA"))
        if with_tma:
            x = tma_pixels(x)
            descs, offs = phase_descriptors(x, g, c, bn)
        else:
            descs, offs = (None,) * 8, ()
        sxn, _, sxd, sxh, sxw = strides5(x)
        w, sw = oriented_filter(call)
        w_vec = filter_vector(call, sw)
        launch_kernel(
            grouped_flat_kernel, (self.packs(g, cfg), self.pixel_tiles(g, cfg)),
            x, w, *out_args(call), g.c, g.k, g.d, g.h, g.w, od, oh, ow, *g.pad,
            cdiv(oh, c["ROWS"]), self.items(g, cfg), cfg["ITEMS"], sxn, sxd, sxh, sxw, *sw,
            *descs,
            CG=g.cg, KG=g.kg, GPT=gpt, T=g.t, R=g.r, S=g.s, BLOCK=bn, STD=g.stride[0],
            STH=g.stride[1], STW=g.stride[2], DLD=g.dilation[0], DLH=g.dilation[1],
            DLW=g.dilation[2], DEPTH=g.dims == 3, ACT=call.activation,
            HAS_BIAS=call.bias is not None, HAS_RES=call.residual is not None,
            TRANSPOSED=call.transposed_w,
            B_REGS=filter_regs(g, cfg, call.transposed_w),
            REUSE=reuse, W_VEC=w_vec, WGMMA=bool(cfg.get("WGMMA")),
            TMA=with_tma, OFF=offs,
            W_ASYNC=filter_async(g, cfg, call.transposed_w, w_vec, w.data_ptr()),
            BUFS=input_buffers(g, cfg), DIAG=diag_blocks(g, cfg, call.transposed_w),
            num_warps=cfg["num_warps"], **{"RA": 0, "RB": 0, **c})


def tma_pixels(x):
    """``x`` (a 5D view, channels innermost and 16-byte aligned: ``aligned_pixels``) with
    every stride a multiple of 16 bytes, as TMA descriptors need: itself, else a
    channels_last copy (``tma_rejects`` has checked that C channels are)."""
    import torch

    if all(st * x.element_size() % 16 == 0 for st in x.stride()[:1] + x.stride()[2:]):
        return x
    return x.clone(memory_format=torch.channels_last_3d)


def phase_descriptors(x, geom, consts: dict, block: int) -> tuple[tuple, tuple]:
    """The TMA descriptors of ``geom``'s stride-phase images (``flat_consts(tma=True)``'s
    layout ``consts``): for each of 4 phases (unused ones repeat the first), the boxes of
    RA and RB rows of a 5D view [N, D, H / STH, W / STW, C] of the phase, and each
    phase's (row, column) offset in its view (-1 where its first row or column is
    padding)."""
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _, sth, stw = geom.stride
    _, pdh, pdw = geom.pad
    n, ch, d, h, w = x.shape
    sn, _, sd, sh, sw = x.stride()
    layout = gl.NVMMASharedLayout(swizzle_byte_width=2 * block, element_bitwidth=16, rank=5)
    descs, offs = [], []
    for ph in range(sth * stw):
        rho, sig = divmod(ph, stw)
        a, b = (rho - pdh) % sth, (sig - pdw) % stw
        offs.append(((rho - pdh) // sth, (sig - pdw) // stw))
        view = x.as_strided((n, d, cdiv(h - a, sth), cdiv(w - b, stw), ch),
                            (sn, sd, sth * sh, stw * sw, 1), x.storage_offset() + a * sh + b * sw)
        for rows in (consts["RA"], max(consts["RB"], 1)):
            descs.append(TensorDescriptor(view, list(view.shape), list(view.stride()),
                                          [1, 1, rows, consts["WP"], block], layout))
    while len(descs) < 8:
        descs += descs[:2]
        offs.append(offs[0])
    return tuple(descs), tuple(offs)


def filter_regs(geom, cfg: Config, transposed: bool) -> bool:
    """B_REGS of ``cfg``'s launch: ``filter_in_registers``, but not for the dgrad twin
    (``transposed``: it keeps the loads its sweep rows measured) nor for WGMMA (its mmas
    read the filter tiles from shared memory)."""
    return (filter_in_registers(geom, cfg["BLOCK_N"]) and not transposed
            and not cfg.get("WGMMA"))


# A thread's 16-byte input copies a step (cp.async configs) up to which a 32-wide tile takes
# its halves' diagonal blocks: ResNeXt-50 layer2.0's 128-position 4-warp tile (20 copies a
# thread) spills with them (ptxas: 255 registers and 12 bytes of spills; none without) and
# ran 0.92x (H200, call 308); no tile of 12 or fewer that ptxas_registers.py compiles
# spills (validation/results/flat_buffers_h200/ptxas_registers.txt).
HALVES_MAX_COPIES = 12


# The width of the diagonal blocks (``diag_blocks``): one wgmma of N = 16 a block.
DIAG_WIDTH = 16


def diag_fits(geom) -> bool:
    """Whether ``geom``'s groups fit DIAG_WIDTH-channel diagonal blocks: as many input as
    output channels a group, a divisor of DIAG_WIDTH."""
    return geom.cg == geom.kg and DIAG_WIDTH % geom.cg == 0


def diag_blocks(geom, cfg: Config, transposed: bool) -> int:
    """DIAG of ``cfg``'s launch on ``geom``: the diagonal blocks of DIAG_WIDTH channels a
    WGMMA tile's filter tile is held and multiplied as, each against its own columns of
    the rows, where the rest of the tile is zeros (``_taps_wgmma``); 1: the whole tile.
    A 32-wide tile's halves: 1.03x a config on the 3D layers, 1.00x on the 2D ones (H200,
    call 308: validation/results/flat_buffers_h200/), not where a thread issues more than
    HALVES_MAX_COPIES copies a step (``copies_per_thread``). A 64-wide tile's quarters
    always (it is offered only where they fit: ``wide_rejects``). Never for the dgrad
    twin (``transposed``)."""
    bn = cfg["BLOCK_N"]
    if not cfg.get("WGMMA") or transposed or bn <= DIAG_WIDTH or not diag_fits(geom):
        return 1
    if bn == 32 and copies_per_thread(geom, cfg) > HALVES_MAX_COPIES:
        return 1
    return bn // DIAG_WIDTH


def wide_rejects(geom, cfg: Config) -> str | None:
    """Why the 64-wide WGMMA tile (``FLAT_WIDE``) does not run ``cfg`` on ``geom``: its
    filter tiles are held as diagonal blocks alone (``diag_blocks``), so its groups must
    fit them (32-channel groups as two blocks of 32 were slower than the narrower tiles on
    every layer measured, ResNeXt-50 layer4.x and ResNeXt3D-50 layer4.x, and spilled at 4
    warps: call 310, validation/results/wide_tiles_h200/); and a warpgroup takes 64
    positions (ptxas on ResNeXt-50 layer1.0 and layer2.1: 128 positions over 4 warps
    spilled over 1 KB, 256 over 8 reached 255 registers; 64 over 4 and 128 over 8 took
    215-225 without spills: ptxas_registers.txt there)."""
    if cfg["BLOCK_N"] != FLAT_WIDE:
        return None
    if not diag_fits(geom):
        return (f"BLOCK_N={FLAT_WIDE}: groups of {geom.cg} in / {geom.kg} out channels do "
                f"not fit {DIAG_WIDTH}-channel diagonal blocks")
    if cfg["BLOCK_M"] > 16 * cfg["num_warps"]:
        return (f"BLOCK_N={FLAT_WIDE}: {cfg['BLOCK_M']} positions over {cfg['num_warps']} "
                "warps hold 64 accumulator registers a thread and spill")
    return None


def copies_per_thread(geom, cfg: Config) -> int:
    """The 16-byte cp.async copies of an item's input a thread issues a step (none with TMA:
    one thread issues boxes)."""
    if cfg.get("TMA"):
        return 0
    c = flat_item(geom, cfg)
    return cdiv(c["NPH"] * c["XCOPY"] * cfg["BLOCK_N"] // 8, 32 * cfg["num_warps"])


def input_buffers(geom, cfg: Config) -> int:
    """BUFS of ``cfg``'s launch on ``geom`` (its live depth taps): the input buffers a
    program cycles through, a step's copies issued BUFS - 1 steps ahead. Two, but a buffer
    a depth tap for one item a program of a WGMMA tile: every step's copies in flight at
    once."""
    # Each step of two buffers waited out most of a round trip to memory (the next step's
    # copies issued as a step starts). ResNeXt3D-50 layer2.x-3.x at batch 1 and layer3.1
    # at batch 8, one item a program, three buffers: 1.07x a config (1.01-1.12), every one of
    # 22 in float16 and bfloat16 (H200, call 304: validation/results/flat_buffers_h200/). Not
    # with more items a program: there the deeper pipeline lost as often as it won on 3D
    # layers (0.75-1.07x) and lost on 2D ones (0.49-1.01x; the loop, unrolled a buffer a
    # step, spills at 4 warps: ptxas, ResNeXt-50 layer2.0's 128 x 32 tile, no spills at two
    # buffers, 172-216 bytes at three: ptxas_registers.txt); 8-warp tiles, which do not
    # spill, with no dead steps, 0.93-1.06x a layer's geomean (call 306).
    if cfg["ITEMS"] == ONE_ITEM and cfg.get("WGMMA"):
        return max(2, geom.t)
    return 2


def exact_phases(geom, cfg: Config) -> bool:
    """Whether ``cfg``'s phase images on ``geom`` are held at their copied length
    (``flat_consts``' ``exact``) rather than a power of two of rows: with more than two
    buffers, and in 64-wide tiles (twice the bytes a row), as measured (swizzled rows,
    whose layout does not depend on the buffers' total rows; on their own, call 288:
    1.00-1.04x)."""
    return input_buffers(geom, cfg) > 2 or cfg["BLOCK_N"] == FLAT_WIDE


def filter_async(geom, cfg: Config, transposed: bool, w_vec: int, w_address: int) -> bool:
    """W_ASYNC of ``cfg``'s launch: the filter tiles copied with cp.async, every plane in
    flight at once (a 3D filter's planes were a round trip each), where every copy is 16
    bytes (``filter_vector``'s W_VEC elements from a 16-byte aligned filter at
    ``w_address``: Triton proves no narrower vector that cp.async takes, and a 2-byte one
    does not compile), the tiles stay in shared memory (not ``filter_regs``) and the
    filter is read as stored (not the dgrad twin's transposed reads, which keep what
    their rows measured)."""
    return (not transposed and w_vec * geom.elem_bytes == 16 and w_address % 16 == 0
            and not filter_regs(geom, cfg, transposed))


def filter_in_registers(geom, block: int) -> bool:
    """Whether a program holds its filter tiles in registers for all its items: 2D tiles 16
    channels wide (9 taps of a 3x3 filter: 36 registers a thread; 32-wide tiles would take
    144, a 3D filter's 27 taps 108)."""
    return geom.t == 1 and block == 16 and geom.r * geom.s <= MAX_FLAT_TAPS


# Taps' mmas a loaded run of 16 rows feeds, on average, from which an item takes the
# row-reuse schedule (``flat_grid.reuse_plan``). Call 268 ran it wherever it loads at most
# 1 / 1.2 of the runs (validation/results/row_reuse_h100/derived.md): per config 1.10x
# (train) at stride 1 with 16-channel tiles where the rounded grid keeps the item's rows
# (at most 1 / 1.5 of the runs loaded there: a filter column's taps share a phase); 0.99x
# at stride 2; 0.74-1.03x at 32-channel tiles; 0.74-0.96x where the rounding cost an item
# rows.
REUSE_MIN_GAIN = 1.5


def row_reuse(geom, cfg: Config) -> bool:
    """Whether ``cfg`` runs the row-reuse schedule on ``geom``: each warp's positions in
    runs of 16 on a grid rounded to 16 columns, each run loaded once for every tap that
    reads it. Taken by 16-channel tiles at stride 1 along H and W (as measured; a 3D
    conv's depth stride only picks the input slices) where the rounded grid holds as many
    rows an item and that loads at most 1 / REUSE_MIN_GAIN of the runs a plane."""
    positions, nw = cfg["BLOCK_M"], cfg["num_warps"]
    if (cfg["BLOCK_N"] != 16 or positions < 16 * nw or geom.stride[1:] != (1, 1)
            or cfg.get("WGMMA")):
        return False
    if flat_consts(geom, positions, reuse=True)["ROWS"] != flat_consts(geom, positions)["ROWS"]:
        return False
    without, with_reuse = reuse_loads(geom, positions, nw)
    return without >= REUSE_MIN_GAIN * with_reuse


def flat_item(geom, cfg: Config) -> dict:
    """``flat_consts`` of ``cfg``'s items on ``geom`` (its grid rounded where
    ``row_reuse``: the same ROWS, so the rules that read the unrounded grid, such as
    ``item_rejects``, hold for it too)."""
    return flat_consts(geom, cfg["BLOCK_M"], reuse=row_reuse(geom, cfg),
                       exact=exact_phases(geom, cfg), tma=bool(cfg.get("TMA")))
