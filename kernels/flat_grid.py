"""The flat grid that the ``*_grouped_flat`` Gluon families lay an item out on.

An item is ROWS output rows of one image, flattened on a grid WP = OW + BMAX columns wide
(BMAX: the largest filter column offset in input phase columns), P positions in all (a
power of two, at least ROWS * WP). The input is held as stride-phase images on the same
grid: phase (rho, sigma) holds X[i * STH + rho - pad_h, j * STW + sigma - pad_w] for grid
row i (counted from the item's first output row) and column j. Filter tap (r, s) then
reads phase ((r * DLH) % STH, (s * DLW) % STW) at the constant flat shift
(r * DLH // STH) * WP + s * DLW // STW: output position f of the item meets input
position f + shift of that phase. Each tap's operand is therefore one run of rows of
shared memory whatever the map's width, and the input crosses L2 once.

Shared memory holds rows of BLOCK channels: NPH phase images of XP rows a buffer (rows of
32 channels in planes of 8: ``row_layout``). A Gluon slice must start on a multiple of its
length, so ``tap_rows`` indexes a view of 16-byte units (an index starts anywhere) and
reads the rows from there.
"""

from __future__ import annotations

import functools

from triton import constexpr_function

from .base import next_pow2
from .gluon_common import HAVE_GLUON, wide_tile_rejects


def flat_consts(geom, positions: int, reuse: bool = False, exact: bool = False,
                tma: bool = False) -> dict:
    """The flat layout of an item of ``positions`` (P) flat positions: grid width WP, its
    ROWS output rows, the XNEED phase positions that hold the input its output rows read,
    the XCOPY positions copied (every row a tap reads, up to P + the largest tap shift,
    rounded up to COPY_RUN), their allocation XP and the phase images a buffer holds,
    NPH. XP and NPH are XCOPY and stride_h x stride_w rounded up to powers of two (the
    unswizzled rows' shared layouts need them), or, ``exact`` (swizzled rows: WGMMA),
    XCOPY and stride_h x stride_w themselves. ``reuse``: WP rounded up to a multiple of 16
    (``reuse_plan``). ``tma``: the layout TMA boxes fill (``tma_rejects`` says where it
    holds): WP a power of two (a box's width), the ROWS + AMAX input rows an item reads in
    two boxes of RA and RB rows (powers of two, RB may be 0), each phase image XP rows
    (exact: those rows and the largest column shift, rounded up to 32)."""
    _, oh, ow = geom.out_spatial
    _, sth, stw = geom.stride
    _, dlh, dlw = geom.dilation
    amax = (geom.r - 1) * dlh // sth
    bmax = (geom.s - 1) * dlw // stw
    wp = ow + bmax
    if reuse:
        wp = -(-wp // 16) * 16
    if tma:
        wp = next_pow2(wp)
    rows = max(1, min(positions // wp, oh))
    if tma:
        need = rows + amax
        ra = 1 << (need.bit_length() - 1)
        xs = -(-(need * wp + bmax) // COPY_RUN) * COPY_RUN
        return dict(WP=wp, ROWS=rows, P=positions, XNEED=need * wp, XCOPY=xs, XP=xs,
                    NPH=sth * stw, RA=ra, RB=need - ra)
    read = positions + amax * wp + bmax
    xcopy = -(-read // COPY_RUN) * COPY_RUN
    return dict(WP=wp, ROWS=rows, P=positions, XNEED=(rows + amax) * wp, XCOPY=xcopy,
                XP=xcopy if exact else next_pow2(read),
                NPH=sth * stw if exact else next_pow2(sth * stw))


@constexpr_function
def tap_place(t: int, s: int, sth: int, stw: int, dlh: int, dlw: int) -> tuple[int, int, int]:
    """(phase image, grid rows down, grid columns right) that filter tap ``t`` of a plane of
    ``s`` columns reads: its flat shift is rows * WP + columns."""
    r, c = divmod(t, s)
    return ((r * dlh) % sth) * stw + (c * dlw) % stw, (r * dlh) // sth, (c * dlw) // stw


@constexpr_function
def reuse_plan(r: int, s: int, sth: int, stw: int, dlh: int, dlw: int, wp: int,
               tiles: int) -> tuple:
    """The row-reuse schedule of one plane of r x s taps for a grid WP (a multiple of 16)
    wide, where each warp's positions are ``tiles`` runs of 16 (one accumulator a run).

    Taps that read the same phase at the same column shift differ by whole grid rows, so by
    WP / 16 runs: run j of that phase and shift, loaded once, is the operand of run
    j - rows * WP / 16 of every such tap. A group is (phase, column shift, its taps); a load
    is (run j, ((accumulator, index of the tap in the group), ...)), loads no tap uses
    left out."""
    if wp % 16:
        raise ValueError(f"reuse needs a grid width that is a multiple of 16, got {wp}")
    groups = {}
    for t in range(r * s):
        ph, a, b = tap_place(t, s, sth, stw, dlh, dlw)
        groups.setdefault((ph, b), []).append((a, t))
    w16 = wp // 16
    plan = []
    # (No nested unpacking in a loop's target: Triton's dependency walk refuses it.)
    for key in sorted(groups):
        rows = [a_t[0] for a_t in groups[key]]
        loads = []
        for j in range(min(rows) * w16, tiles + max(rows) * w16):
            uses = tuple((j - a * w16, u) for u, a in enumerate(rows) if 0 <= j - a * w16 < tiles)
            if uses:
                loads.append((j, uses))
        plan.append((*key, tuple(a_t[1] for a_t in groups[key]), tuple(loads)))
    return tuple(plan)


def reuse_loads(geom, positions: int, num_warps: int) -> tuple[int, int]:
    """(run loads a plane without reuse, with it) of a program of ``num_warps`` warps on an
    item of ``positions`` positions (a load: 16 rows a warp)."""
    tiles = positions // (16 * num_warps)
    _, sth, stw = geom.stride
    _, dlh, dlw = geom.dilation
    wp = flat_consts(geom, positions, reuse=True)["WP"]
    return geom.r * geom.s * tiles, _plan_loads(geom.r, geom.s, sth, stw, dlh, dlw, wp, tiles)


@functools.lru_cache(maxsize=1024)
def _plan_loads(r: int, s: int, sth: int, stw: int, dlh: int, dlw: int, wp: int,
                tiles: int) -> int:
    """Loads of ``reuse_plan`` (kept: the rules ask for it once a candidate, several times)."""
    return sum(len(loads) for *_, loads in reuse_plan(r, s, sth, stw, dlh, dlw, wp, tiles))


# Phase positions a copy run holds at least: runs are powers of two (Gluon shapes), and
# XCOPY a sum of them, so that the positions no tap reads are not copied (a run of the
# whole XP zero-filled up to 38% of every phase image: ResNeXt-50 layer2.0's 158 of 256).
COPY_RUN = 32


@constexpr_function
def copy_runs(xcopy: int) -> list[tuple[int, int]]:
    """(first position, positions) of the power-of-two runs, largest first, that XCOPY
    positions are copied in."""
    runs, first = [], 0
    for bit in reversed(range(xcopy.bit_length())):
        if xcopy >> bit & 1:
            runs.append((first, 1 << bit))
            first += 1 << bit
    return runs


# Flat positions an item (BLOCK_M): a multiple of the mma's 16, a power of two.
FLAT_POSITIONS = (64, 128, 256)


def flat_config_rejects(geom, cfg, smallest: int) -> str | None:
    """Why a flat-grid family does not offer ``cfg`` (a tile or item that would be mostly
    idle): a 32-wide tile for groups that fit 16 (but with WGMMA, whose matrix work is
    not what these kernels wait on, and whose 32-wide copies are 64 bytes a pixel), or an
    item of over ``smallest`` positions that is twice the image."""
    if not cfg.get("WGMMA") and (reason := wide_tile_rejects(geom, cfg["BLOCK_N"])):
        return reason
    c = flat_consts(geom, cfg["BLOCK_M"])
    image = c["WP"] * geom.out_spatial[1]
    if c["P"] > smallest and c["P"] >= 2 * image:
        return f"BLOCK_M={c['P']} is twice the image's {image} flat positions"
    return None


# How much wider than the flat grid the power-of-two one of TMA boxes may be: on the
# issue-6 suite's grouped layers (an H200, calls 293-295), the 578 configs within it were
# 1.074x faster with TMA copies, the 12 past it (7x7 and 4x4 maps) 0.73x
# (validation/results/grouped_stages_h200/).
TMA_MAX_WIDENING = 1.2


def tma_rejects(geom, positions: int, block: int, group_channels: int) -> str | None:
    """Why TMA boxes cannot (or should not) copy ``geom``'s phase images for items of
    ``positions`` positions and packs of ``group_channels`` channels in ``block``-wide
    rows: a pack that leaves channels of the next in the box (TMA copies whole boxes: the
    cp.async masks kept them out), 16-byte strides (channels_last rows of C channels), the
    power-of-two grid, and an item's input rows in two power-of-two boxes."""
    if geom.stride[1] * geom.stride[2] > 4:
        return f"stride {geom.stride[1:]}: more than the 4 phase images it has boxes for"
    if group_channels != block:
        return (f"packs of {group_channels} channels in {block}-channel rows: a box would "
                "copy the next pack's channels too")
    if geom.c * geom.elem_bytes % 16:
        return f"{geom.c} channels a pixel: TMA strides are multiples of 16 bytes"
    flat = flat_consts(geom, positions)
    c = flat_consts(geom, positions, tma=True)
    if c["WP"] > positions:
        return f"BLOCK_M={positions} positions hold no row of the {c['WP']}-wide grid"
    if c["WP"] > TMA_MAX_WIDENING * flat["WP"]:
        return (f"the boxes' {c['WP']}-wide grid is over {TMA_MAX_WIDENING}x the "
                f"{flat['WP']} columns it needs")
    if c["RB"] & (c["RB"] - 1):
        return (f"{c['RA'] + c['RB']} input rows an item are not two boxes of powers of "
                "two")
    return None


def item_rejects(geom, positions: int) -> str | None:
    """Why an item of ``positions`` positions holds no row of ``geom``'s grid."""
    wp = flat_consts(geom, positions)["WP"]
    if wp > positions:
        return f"BLOCK_M={positions} positions hold no row of the {wp}-wide grid"
    return None


if HAVE_GLUON:
    import math

    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2

    # Views of 16-byte units (8 channels): indexing one starts a view at any row of plane 0.
    UNITS = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])

    @gluon.constexpr_function
    def copy_layout(block, num_warps):
        """Register layout of the copies: runs of 8 channels of a position (16 bytes) a
        thread, positions across threads and warps."""
        tc = block // 8
        return gl.BlockedLayout([1, 8], [32 // tc, tc], [num_warps, 1], [1, 0])

    @gluon.constexpr_function
    def tile_swizzle(block):
        """Shared layout of the [BLOCK, BLOCK] filter tiles, whose views start on a tile:
        32-channel rows (64 bytes) swizzled, so that ldmatrix's eight rows fall in distinct
        banks; 16-channel ones left whole, as ``row_layout`` leaves them."""
        wide = block >= 32
        return gl.SwizzledSharedLayout(vec=8 if wide else 1, per_phase=2 if wide else 1,
                                       max_phase=4 if wide else 1, order=[1, 0])

    @gluon.constexpr_function
    def row_units(block, swizzled=False):
        """16-byte units between consecutive rows of ``block`` channels in plane 0 (in a
        ``swizzled`` buffer, between consecutive rows)."""
        return 1 if block >= 32 and not swizzled else block // 8

    @gluon.constexpr_function
    def row_layout(rows, block, plane_rows, swizzled=False):
        """Shared layout of a [rows, block] view of a buffer of ``plane_rows`` rows.

        ``swizzled`` (the wgmma kernels, whose tap views are wgmma's A operand): whole rows
        of ``block`` channels swizzled over the row's width (32 bytes at 16 channels, 64 at
        32, 128 at 64), wgmma's own layout. The swizzle is a function of the shared-memory address,
        so a view may start on any row (call 282: wgmma read views at every row shift
        0..39 exactly; ``validation/gpu/probe_wgmma_shift.py``); the copies start on whole
        swizzle patterns (8 rows: phase images and copy runs are multiples of 32 rows).

        Rows of 32 channels are held as 4 planes of ``plane_rows`` rows of 8 channels
        (channel c of row f at element c % 8 + 8 f + 8 plane_rows (c // 8)). No swizzle can
        follow a view that starts on any row, and unpadded rows of 64 bytes put 4 of
        ldmatrix's 8 rows in the same banks (call 166: three quarters of the shared-load
        wavefronts were conflicts); in planes they are 16 contiguous bytes each (calls
        168-169: a problem's best 32-channel config 1.07-1.22x faster). Rows of 16 channels
        stay whole (32 bytes, 2-way conflicts): in planes their kernels were 7% slower
        (call 168; in the forward kernel too, call 178)."""
        if swizzled:
            return gl.NVMMASharedLayout(swizzle_byte_width=2 * block, element_bitwidth=16,
                                        rank=2)
        if block < 32:
            return gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        bases = [[0, 1], [0, 2], [0, 4]]
        bases += [[1 << i, 0] for i in range(int(math.log2(rows)))]
        # Offsets past a view's rows within a plane hold none of its elements.
        bases += [[0, 0]] * (int(math.log2(plane_rows)) - int(math.log2(rows)))
        bases += [[0, 8 << i] for i in range(int(math.log2(block // 8)))]
        return gl.SharedLinearLayout(bases)

    @gluon.constexpr_function
    def warp_rows_layout(nw, block, span, plane_rows):
        """Shared layout of a [16 nw, block] view whose warp w's 16 rows start span * w rows
        on (``row_layout``'s rows otherwise): run j of every warp's positions, with span
        = P / nw positions a warp (``reuse_plan``)."""
        bases = [[0, 1 << i] for i in range(3 if block >= 32 else int(math.log2(block)))]
        bases += [[1 << i, 0] for i in range(4)]
        # Offsets between a warp's 16 rows and the next warp's hold none of the view.
        bases += [[0, 0]] * int(math.log2(span // 16))
        bases += [[16 << i, 0] for i in range(int(math.log2(nw)))]
        if block >= 32:
            bases += [[0, 0]] * (int(math.log2(plane_rows)) - int(math.log2(span * nw)))
            bases += [[0, 8 << i] for i in range(int(math.log2(block // 8)))]
        return gl.SharedLinearLayout(bases)

    @gluon.constexpr_function
    def reuse_at(plan, what, g, n, i):
        """An entry of ``plan`` (a ``reuse_plan``): its number of groups ("groups"); group
        g's phase, column shift, number of taps and loads ("phase", "col", "ntaps",
        "nloads"); its tap n ("tap"); its load n's run ("run"); the index in the group of
        the tap whose operand load n is for accumulator i, or -1 ("use")."""
        if what == "groups":
            return len(plan)
        ph, col, taps, loads = plan[g]
        if what == "use":
            return next((u for acc, u in loads[n][1] if acc == i), -1)
        return {"phase": ph, "col": col, "ntaps": len(taps), "nloads": len(loads),
                "tap": taps[n] if what == "tap" else 0,
                "run": loads[n][0] if what == "run" else 0}[what]

    @gluon.jit
    def tap_dots(accs, a, x_units, FIRST: gl.constexpr, BUF: gl.constexpr, R: gl.constexpr,
                 S: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr, NPH: gl.constexpr,
                 STH: gl.constexpr, STW: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr,
                 BLOCK: gl.constexpr, XT: gl.constexpr, B_L: gl.constexpr):
        """Every tap's accumulator ``accs[t]`` plus ``a`` (dY's [BLOCK, 16] operand) times
        the 16 rows tap t reads for positions FIRST.. of the item in buffer BUF (XT: their
        row layout): a flat-grid wgrad's step."""
        new = ()
        for t in gl.static_range(R * S):
            b = tap_rows(x_units, t, FIRST, 16, BUF, S, WP, XP, NPH, STH, STW, DLH, DLW,
                         BLOCK, XT).load(B_L)
            new = new + (mma_v2(a, b, accs[t]),)
        return new

    @gluon.jit
    def filter_tiles(w_smem, TAP0: gl.constexpr, w_ptr, pack, K, swk, swc, swr, sws,
                     KG: gl.constexpr,
                     CG: gl.constexpr, GPT: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
                     BLOCK: gl.constexpr, TRANSPOSED: gl.constexpr, LX: gl.constexpr,
                     BURST: gl.constexpr, W_VEC: gl.constexpr = 1, w_plane=0,
                     ASYNC: gl.constexpr = False, COLS: gl.constexpr = 0):
        """Every tap's block-diagonal [BLOCK, BLOCK] filter tile of pack ``pack`` of GPT
        groups into ``w_smem`` (tile TAP0 + t: tap t at strides swr, sws), loaded in the copies'
        layout LX (runs of 8 input channels, contiguous in a channels_last filter): rows
        the conv's output channels (K of them, KG a group), columns its input channels (CG
        a group). TRANSPOSED: the stored filter's rows are the conv's input channels (dX
        as a conv of dY). BURST: every tap's loads are issued before the first store, so
        the plane waits on one round trip to memory; else tap by tap (a store, and the
        barrier between stores to one buffer, before the next tap's loads: R * S round
        trips, what ``backward_grouped_flat``'s rows were measured with). W_VEC > 1: each
        group's run of channels starts on a multiple of W_VEC elements
        (``grouped_packed.filter_vector``) and loads as one vector (16 bytes where it was
        8 two-byte loads); ``w_plane`` (elements: a filter plane's offset) is added to every
        tap's offsets before that is asserted. W_VEC = 1: the loads as before, ``w_plane``
        added to the pointer (added to the offsets, it compiled to more instructions).
        ASYNC: cp.async copies straight into ``w_smem`` (zeros where masked), left
        uncommitted, so that every plane's copies are in flight at once (``filter_async``);
        W_VEC elements must be at least 4 bytes. COLS > 0 (``grouped_flat.diag_blocks``):
        only the diagonal blocks of COLS channels, a [BLOCK, COLS] tile whose row k holds
        the input channels of k's block (from COLS * (k // COLS)); LX of COLS columns."""
        WIDTH: gl.constexpr = COLS if COLS > 0 else BLOCK
        k_rel = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, LX))
        c_rel = gl.arange(0, WIDTH, layout=gl.SliceLayout(0, LX))
        kw = gl.expand_dims(pack * (GPT * KG) + k_rel, 1)
        # the pack's input channel of each column
        cw = gl.expand_dims(c_rel, 0)
        if COLS > 0:
            cw = cw + gl.expand_dims((k_rel // COLS) * COLS, 1)
        w_ok = ((gl.expand_dims(k_rel // KG, 1) == cw // CG)
                & gl.expand_dims(k_rel < GPT * KG, 1) & (cw < GPT * CG) & (kw < K))
        if TRANSPOSED:
            w_off = (kw % KG) * swk + (pack * (GPT * CG) + cw) * swc
        else:
            w_off = kw * swk + (cw % CG) * swc
        if W_VEC > 1:
            # (Asserted here too: a first tap's offsets, plus a plane offset of 0, fold into
            # w_off and would lose the assertion made on them.)
            w_off = gl.max_contiguous(gl.multiple_of(w_off, [1, W_VEC]), [1, W_VEC])
        else:
            w_ptr = w_ptr + w_plane
        # (BURST: a plane's values are in registers at once, 72 a thread for 3x3 taps of
        # 16-channel tiles over 2 warps.)
        tiles = ()
        for t in gl.static_range(R * S):
            if W_VEC > 1:
                offs = w_off + (w_plane + (t // S) * swr + (t % S) * sws)
                offs = gl.max_contiguous(gl.multiple_of(offs, [1, W_VEC]), [1, W_VEC])
            else:
                offs = w_off + (t // S) * swr + (t % S) * sws
            if ASYNC:
                cp.async_copy_global_to_shared(w_smem.index(TAP0 + t), w_ptr + offs,
                                               mask=w_ok)
            else:
                tile = gl.load(w_ptr + offs, mask=w_ok, other=0.0)
                if BURST:
                    tiles = tiles + (tile,)
                else:
                    w_smem.index(TAP0 + t).store(tile)
        for t in gl.static_range(len(tiles)):
            w_smem.index(TAP0 + t).store(tiles[t])

    @gluon.jit
    def unit_rows(dtype: gl.constexpr, ROWS: gl.constexpr, BLOCK: gl.constexpr,
                  SWZ: gl.constexpr = False):
        """Shared memory for ROWS rows of BLOCK channels (``row_layout``, swizzled if SWZ),
        as the view of 16-byte units that the copies and ``tap_rows`` index (a view starts
        on any row)."""
        return gl.allocate_shared_memory(dtype, [ROWS, BLOCK],
                                         row_layout(ROWS, BLOCK, ROWS, SWZ))._reinterpret(
            dtype, [ROWS * BLOCK // 8, 8], UNITS)

    @gluon.constexpr_function
    def copy_run_count(xcopy):
        """How many runs ``copy_runs(xcopy)`` has."""
        return len(copy_runs(xcopy))

    @gluon.constexpr_function
    def copy_run(xcopy, i, first):
        """Run i of ``copy_runs(xcopy)``: its first position if ``first``, else its
        positions (0 past the last run)."""
        runs = copy_runs(xcopy)
        return (runs[i][0] if first else runs[i][1]) if i < len(runs) else 0

    @gluon.jit
    def depth_slice(img, td, live, OD, D, pdd, DEPTH: gl.constexpr, STD: gl.constexpr,
                    DLD: gl.constexpr):
        """(image, output depth, the input depth that depth tap td reads there, and
        ``live`` unless that depth is padding) of slice ``img`` (image * OD + output
        depth) of a 3D conv (DEPTH); in 2D image ``img``, depths 0."""
        if DEPTH:
            n = img // OD
            od = img % OD
            di = od * STD - pdd + td * DLD
            live = live & (di >= 0) & (di < D)
        else:
            n = img
            od = 0
            di = 0
        return n, od, di, live

    @gluon.jit
    def copy_phases(x_units, x_ptr, n, oh0, live, ch, cok, H, W, pdh, pdw, sxn, sxh, sxw,
                    BUF: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
                    XNEED: gl.constexpr, XCOPY: gl.constexpr, NPH: gl.constexpr,
                    STH: gl.constexpr, STW: gl.constexpr, LX: gl.constexpr,
                    SWZ: gl.constexpr = False):
        """Start copying (cp.async, uncommitted) the stride-phase images of the item whose
        first output row is oh0 of image n into buffer BUF of ``x_units`` (16-byte units;
        phase images of XP positions): the first XCOPY positions of each, in
        ``copy_runs``, the first XNEED holding what the taps read; zeros past the input's
        edges, past XNEED and everywhere unless ``live``. ``ch`` / ``cok``: [1, BLOCK]
        channels and their mask (layout LX)."""
        BLOCK: gl.constexpr = ch.shape[1]
        for ph in gl.static_range(STH * STW):
            # (The runs' bounds are written in place: a constexpr name cannot be
            # reassigned in a loop.)
            for i in gl.static_range(copy_run_count(XCOPY)):
                f = copy_run(XCOPY, i, True) + gl.arange(0, copy_run(XCOPY, i, False),
                                                         layout=gl.SliceLayout(1, LX))
                gi = f // WP
                gj = f % WP
                ih = (oh0 + gi) * STH + (ph // STW) - pdh
                iw = gj * STW + (ph % STW) - pdw
                ok = live & (f < XNEED) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                row = gl.expand_dims(n * sxn + ih * sxh + iw * sxw, 1)
                cp.async_copy_global_to_shared(
                    x_units.index(((BUF * NPH + ph) * XP + copy_run(XCOPY, i, True))
                                  * row_units(BLOCK, SWZ))._reinterpret(
                        x_units.dtype, [copy_run(XCOPY, i, False), BLOCK],
                        row_layout(copy_run(XCOPY, i, False), BLOCK, 2 * NPH * XP, SWZ)),
                    x_ptr + (row + ch), mask=gl.expand_dims(ok, 1) & cok)

    @gluon.jit
    def tap_rows(x_units, T: gl.constexpr, FIRST: gl.constexpr, LEN: gl.constexpr,
                 BUF: gl.constexpr, S: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr,
                 NPH: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
                 DLH: gl.constexpr, DLW: gl.constexpr, BLOCK: gl.constexpr,
                 SH: gl.constexpr, SWZ: gl.constexpr = False):
        """The LEN rows that filter tap T reads for output positions FIRST.. of the item in
        buffer BUF, as a [LEN, BLOCK] view (SH: its ``row_layout``, swizzled if SWZ) of
        ``x_units``."""
        # The phase and the shift are written into the index: assigned to a local name,
        # a constant becomes a tensor.
        return x_units.index(
            ((BUF * NPH + ((T // S) * DLH % STH) * STW + (T % S) * DLW % STW) * XP
             + ((T // S) * DLH // STH) * WP + (T % S) * DLW // STW + FIRST)
            * row_units(BLOCK, SWZ)
        )._reinterpret(x_units.dtype, [LEN, BLOCK], SH)
