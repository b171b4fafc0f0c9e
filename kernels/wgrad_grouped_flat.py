"""Gradient of a few-channel grouped filter over flattened, zero-padded stride-phase images.

``wgrad_grouped_halo`` reduces one output row of TILE_W >= 16 columns an mma, so 7- and
14-column maps (ResNeXt-50's layer3 and layer4) idle half or more of every dot, and it
copies the input S times. Here (Gluon) an item's dY and input are laid out on the flat
grid of ``flat_grid`` (the input copied once, as stride-phase images; dY zero past the
map's columns and the item's rows), so each filter tap's operand is one shifted run of
shared memory and an mma reduces 16 flat positions whatever the map's width. As in
``wgrad_grouped_halo``: a pack of whole groups a [BLOCK, BLOCK] tile (block-diagonal),
two items an iteration double-buffered through cp.async, splits added in a fixed order
(``wgrad_gemm.reduce_splits``): no atomics.

In 3D a program reduces one depth tap's plane of taps (the launch grid's packs times the
depth taps): items are rows of dY's slices (image, output depth), each copied with the
input slice its depth tap reads (zeros where that is padding: ``flat_grid.depth_slice``),
and the plane's taps go to their place in dW or the split workspace.

Grid positions past the map's columns hold a zero dY but meet real input pixels (the next
row's), so an Inf or NaN in X turns taps whose torch gradient is finite into NaN, as the
zero blocks of a pack do across groups (``wgrad_grouped_halo`` behaves the same).

Gluon has no interpreter: tests/test_flat_grid.py compiles it for sm_90 on the CPU (and
replays the layout's index arithmetic in torch); tests/test_gpu_grad.py runs it.
"""

from __future__ import annotations

from .base import Config, GradCall
from .common import cdiv
from .dependent import dependent_ok
from .flat_grid import FLAT_POSITIONS, flat_config_rejects, flat_consts, item_rejects
from .gluon_common import HAVE_GLUON, gluon_grouped_rejects, wgrad_operands
from .gluon_wgrad import GluonWgradFamily
from .grad_common import GradGrid
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices
from .wgrad_grouped_halo import HALO_SPLITS, HALO_TILES, MAX_HALO_TAPS

# Whether a split launch lets its reduction pass be scheduled from the start (a switch for
# measuring what that brings over letting it start as the programs end).
RELEASE_EARLY = True

if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

    from .flat_grid import (
        copy_layout,
        copy_phases,
        depth_slice,
        row_layout,
        row_units,
        tap_dots,
        unit_rows,
    )
    from .gluon_wgrad import pack_channels, release_reduction, store_taps

    @gluon.jit
    def _issue(item, end, td, x_units, y_units, x_ptr, dy_ptr, c_glob, c_ok, k_glob, k_ok,
               D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, syn, syd,
               syh, syw, BUF: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
               P: gl.constexpr, XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
               NPH: gl.constexpr, DEPTH: gl.constexpr, STD: gl.constexpr,
               DLD: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr, LX: gl.constexpr,
               YL: gl.constexpr):
        """Start copying an item (slice item // TILES_H of dY: image and, in 3D, output
        depth; output rows from (item % TILES_H) * ROWS) into buffer BUF as one cp.async
        group: the phase images (``flat_grid.copy_phases``) of the input slice that depth
        tap ``td`` reads (zeros where that is padding) and dY's P flat positions (zeros
        past the map's columns, the item's rows, and everywhere unless the item is
        live)."""
        live = item < end
        oh0 = (item % TILES_H) * ROWS
        n, od, di, x_live = depth_slice(item // TILES_H, td, live, OD, D, pdd, DEPTH, STD,
                                        DLD)
        L_CH: gl.constexpr = gl.SliceLayout(0, LX)
        copy_phases(x_units, x_ptr + di * sxd, n, oh0, x_live,
                    gl.expand_dims(gl.convert_layout(c_glob, L_CH), 0),
                    gl.expand_dims(gl.convert_layout(c_ok, L_CH), 0), H, W, pdh, pdw,
                    sxn, sxh, sxw, BUF, WP, XP, XNEED, XCOPY, NPH, STH, STW, LX)
        kg = gl.expand_dims(gl.convert_layout(k_glob, L_CH), 0)
        kok = gl.expand_dims(gl.convert_layout(k_ok, L_CH), 0)
        fy = gl.arange(0, P, layout=gl.SliceLayout(1, LX))
        p = fy // WP
        q = fy % WP
        oh = oh0 + p
        yok = live & (p < ROWS) & (q < OW) & (oh < OH)
        yrow = gl.expand_dims(n * syn + od * syd + oh * syh + q * syw, 1)
        cp.async_copy_global_to_shared(
            y_units.index(BUF * P * row_units(kg.shape[1]))._reinterpret(
                y_units.dtype, [P, kg.shape[1]], YL),
            dy_ptr + (yrow + kg), mask=gl.expand_dims(yok, 1) & kok)
        cp.commit_group()

    @gluon.jit
    def _step(accs, x_units, y_units, BUF: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
              P: gl.constexpr, WP: gl.constexpr, XP: gl.constexpr, NPH: gl.constexpr,
              STH: gl.constexpr,
              STW: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr, BLOCK: gl.constexpr,
              XT: gl.constexpr, YT: gl.constexpr, A_L: gl.constexpr, B_L: gl.constexpr):
        """Every tap's dot over the item in buffer BUF, 16 flat positions at a time (dY's
        operand loaded once for all taps; XT, YT: the row layouts of [16, BLOCK] views)."""
        for i in gl.static_range(P // 16):
            a = y_units.index((BUF * P + i * 16) * row_units(BLOCK))._reinterpret(
                y_units.dtype, [16, BLOCK], YT).permute((1, 0)).load(A_L)
            accs = tap_dots(accs, a, x_units, i * 16, BUF, R, S, WP, XP, NPH, STH, STW, DLH,
                            DLW, BLOCK, XT, B_L)
        return accs

    @gluon.jit
    def wgrad_grouped_flat_kernel(
        dy_ptr, x_ptr, dw_ptr, ws_ptr,
        CTOT, KTOT, D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, ITEMS, ITEMS_PER_SPLIT,
        WS_STRIDE, syn, syd, syh, syw, sxn, sxd, sxh, sxw, swk, swc, swt, swr, sws,
        CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, T: gl.constexpr,
        R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr,
        P: gl.constexpr, XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
        NPH: gl.constexpr, BLOCK: gl.constexpr, STD: gl.constexpr, STH: gl.constexpr,
        STW: gl.constexpr, DLD: gl.constexpr, DLH: gl.constexpr, DLW: gl.constexpr,
        DEPTH: gl.constexpr, SPLIT: gl.constexpr, NEXT: gl.constexpr,
    ):
        release_reduction(SPLIT, NEXT)
        NW: gl.constexpr = gl.num_warps()
        LX: gl.constexpr = copy_layout(BLOCK, NW)
        L_CH: gl.constexpr = gl.SliceLayout(0, LX)
        MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0],
                                                      warps_per_cta=[1, NW],
                                                      instr_shape=[16, 8])
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        # In 3D a program reduces one depth tap's plane of taps (td) for its pack.
        pack = gl.program_id(0) // T
        td = gl.program_id(0) % T
        pid_s = gl.program_id(1)
        # Rows of BLOCK channels (flat_grid.row_layout): (buffer, phase, flat position) and
        # (buffer, position); read and written through views of 16-byte units, so that a
        # view starts on any row.
        XR: gl.constexpr = 2 * NPH * XP
        YR: gl.constexpr = 2 * P
        x_units = unit_rows(x_ptr.dtype.element_ty, XR, BLOCK)
        y_units = unit_rows(dy_ptr.dtype.element_ty, YR, BLOCK)
        YL: gl.constexpr = row_layout(P, BLOCK, YR)
        XT: gl.constexpr = row_layout(16, BLOCK, XR)
        YT: gl.constexpr = row_layout(16, BLOCK, YR)
        c_glob, c_ok, k_glob, k_ok, first, end, accs = pack_channels(
            pack, pid_s, CTOT, KTOT, ITEMS, ITEMS_PER_SPLIT, CG, KG, GPT, BLOCK, R, S, L_CH,
            MMA)
        _issue(first, end, td, x_units, y_units, x_ptr, dy_ptr, c_glob, c_ok, k_glob, k_ok,
               D, H, W, OD, OH, OW, pdd, pdh, pdw, TILES_H, sxn, sxd, sxh, sxw, syn, syd,
               syh, syw, 0, ROWS, WP, P, XP, XNEED, XCOPY, NPH, DEPTH, STD, DLD, STH, STW,
               LX, YL)
        # Two items an iteration, one a buffer, so every shared-memory offset is constant.
        # (Four buffers, three items in flight, were no faster: call 167.)
        for it in range(0, ITEMS_PER_SPLIT, 2):
            for buf in gl.static_range(2):
                _issue(first + it + buf + 1, end, td, x_units, y_units, x_ptr, dy_ptr,
                       c_glob, c_ok, k_glob, k_ok, D, H, W, OD, OH, OW, pdd, pdh, pdw,
                       TILES_H, sxn, sxd, sxh, sxw, syn, syd, syh, syw, 1 - buf, ROWS, WP, P,
                       XP, XNEED, XCOPY, NPH, DEPTH, STD, DLD, STH, STW, LX, YL)
                cp.wait_group(1)
                gl.thread_barrier()
                accs = _step(accs, x_units, y_units, buf, R, S, P, WP, XP, NPH, STH, STW,
                             DLH, DLW, BLOCK, XT, YT, A_L, B_L)
                # The next copies overwrite the buffer just read.
                gl.thread_barrier()
        cp.wait_group(0)
        # Depth tap td's plane: dW's taps (td, r, s), the workspace's taps td * R*S + t.
        store_taps(accs, pack, pid_s, dw_ptr + td * swt,
                   ws_ptr + td * (R * S * KTOT * CG), CTOT, KTOT, WS_STRIDE, swk, swc, swr,
                   sws, CG, KG, GPT, BLOCK, R, S, SPLIT, MMA)




class WgradGroupedFlatFamily(GluonWgradFamily):
    name = "wgrad_grouped_flat"
    overlap_first = True  # launched before dX's kernels when the two overlap
    summary = ("gradient of a few-channel grouped filter, 2D or 3D (Gluon): items of "
               "output rows flattened on a zero-padded grid, the input copied once as "
               "stride-phase images, each tap one shifted slice, one mma a tap and 16 "
               "positions; a program a depth tap's plane in 3D")
    fills_gpu = True
    configs = tuple(Config(BLOCK_M=pos, BLOCK_N=bn, SPLIT_K=sk, num_warps=wp, num_stages=2)
                    for sk in HALO_SPLITS for bn, wp in HALO_TILES for pos in FLAT_POSITIONS)

    def launched_first(self, geom) -> bool:
        """First at a stride only: there dX's kernels (stride phases, or a strided one)
        took the SMs from this one-wave kernel when launched before it (call 195:
        ResNeXt-50 layer4.0 0.71x with dW first; call 210: ResNeXt3D-50's strided layers
        0.72-0.85x). At stride 1 the order was even on every layer but one, which took
        2.1x as long with dW first (ResNeXt3D-50 layer3.1 at batch 8, call 210)."""
        return max(geom.stride) > 1

    def supports(self, geom) -> str | None:
        return (gluon_grouped_rejects(geom, MAX_HALO_TAPS, geom.c, geom.k, depth=True)
                or item_rejects(geom, FLAT_POSITIONS[-1]))

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Packs of GPT groups by depth taps, each reducing a plane of taps over items of
        output rows of a slice (image, output depth)."""
        c = flat_consts(geom, cfg["BLOCK_M"])
        od, oh, _ = geom.out_spatial
        return self.pack_grid(geom, cfg, geom.n * od * cdiv(oh, c["ROWS"]), c["P"])

    def smem_bytes(self, geom, cfg: Config) -> int:
        c = flat_consts(geom, cfg["BLOCK_M"])
        return 2 * (c["NPH"] * c["XP"] + c["P"]) * cfg["BLOCK_N"] * geom.elem_bytes

    def layout_rejects(self, geom, cfg: Config) -> str | None:
        return item_rejects(geom, cfg["BLOCK_M"])

    def config_ok(self, geom, cfg, device) -> str | None:
        return (flat_config_rejects(geom, cfg, FLAT_POSITIONS[0])
                or split_ok(geom, cfg, device, self.grid(geom, cfg))
                or self.hard_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        bn, split = cfg["BLOCK_N"], cfg["SPLIT_K"]
        c = flat_consts(g, cfg["BLOCK_M"])
        tiles = self.grid(g, cfg)
        od, oh, ow = g.out_spatial
        dy, x, strides = wgrad_operands(call, depth=True)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(
                wgrad_grouped_flat_kernel, (tiles.mult, slices),
                dy, x, call.out, ws,
                g.c, g.k, g.d, g.h, g.w, od, oh, ow, *g.pad, cdiv(oh, c["ROWS"]),
                tiles.k_steps, per_split, g.k * g.cg * g.t * g.r * g.s, *strides,
                CG=g.cg, KG=g.kg, GPT=self.gpt(g, cfg), T=g.t, R=g.r, S=g.s, BLOCK=bn,
                STD=g.stride[0], STH=g.stride[1], STW=g.stride[2], DLD=g.dilation[0],
                DLH=g.dilation[1], DLW=g.dilation[2], DEPTH=g.dims == 3,
                SPLIT=split > 1, NEXT=dependent_ok(call.out.device) and RELEASE_EARLY,
                num_warps=cfg["num_warps"], **c)
