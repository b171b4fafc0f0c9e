"""Gradient of the input of a depthwise convolution over spans of dX's rows.

``dgrad_depthwise_span`` runs ``depthwise_span``'s forward kernel on dY. At stride 1 that
is one launch (the filter's taps read backwards). At a stride, dX splits into stride
phases (``dgrad_forward.phase_problems``), one launch each: four for MobileNetV2's
stride-2 layers, each reading dY again. On the H100 those layers ran at 1.2-1.4x cuDNN
against 1.7-2.0x for the stride-1 ones with as many bytes (features.14: 9 MB in 16.5 us,
features.12: 14 MB in 12.4 us).

``strided_span_dgrad_kernel`` computes every phase in one launch, gathering from dY:

    dX[ih, iw, c] = sum of w[c, r, s] * dY[(ih + PH - r * DH) / SH, (iw + PW - s * DW) / SW, c]

over the taps (r, s) for which both divisions are exact. A program covers ROWS rows of dX
(ROWS a multiple of SH, so which filter rows reach each of them is known at compile time)
x a span of BLOCK elements of dX's row flattened over (column, channel), as in
``depthwise_span``. Each dY row the band needs is loaded once a filter column, its lanes
masked where the column's parity does not match, and serves every dX row it reaches.
All loads come before the first store (``depthwise_span``'s loads-first schedule, for the
same reason); configs whose window does not fit ``LOADS_FIRST_REGISTERS`` are pruned.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2
from .common import cdiv, needs_int64, strides5
from .depthwise_span import (
    DEPTHWISE_SPAN_TILES,
    LOADS_FIRST_REGISTERS,
    DepthwiseSpanFamily,
    filter_taps,
    input_row,
    span_program,
)
from .dgrad_forward import ForwardDgradFamily
from .grad_common import GradGrid
from .launcher import launch_kernel

_RUNTIME_INTS = ["H", "W", "OH", "OW", "SPANS", "TILES_H"]
MAX_ROWS = max(rows for rows, _, _ in DEPTHWISE_SPAN_TILES)


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def strided_span_dgrad_kernel(
    dy_ptr, w_ptr, dx_ptr, H, W, OH, OW, SPANS, TILES_H,
    syn, syc, syh, syw, sxn, sxc, sxh, sxw, swk, swr, sws,
    C: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr,
    SW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr, DH: tl.constexpr,
    DW: tl.constexpr, REL_LO: tl.constexpr, REL_ROWS: tl.constexpr, ROWS: tl.constexpr,
    BLOCK: tl.constexpr, INT64: tl.constexpr,
):
    band, n, iw, c, ok = span_program(SPANS, TILES_H, W, C, BLOCK)
    if INT64:
        n = n.to(tl.int64)
        c = c.to(tl.int64)
    taps = filter_taps(w_ptr, c, ok, swk, swr, sws, KR, KS)
    # Filter column ks reaches dX column iw from dY column (iw + PW - ks * DW) / SW when
    # that division is exact: a per-lane parity, so a mask, fixed for the program.
    col_ok = ()
    col_off = ()
    for ks in tl.static_range(KS):
        num = iw + (PW - ks * DW)
        q = num // SW
        col_ok = col_ok + (ok & (num >= 0) & (num % SW == 0) & (q < OW),)
        col_off = col_off + (q * syw + c * syc,)
    # dX rows band * ROWS + i, ROWS a multiple of SH: dY row band * ROWS / SH + rel feeds
    # dX row i through filter row kr when i + PH - kr * DH == rel * SH (all compile-time).
    q0 = band * (ROWS // SH) + REL_LO
    y_img = n * syn
    rows = ()
    for t in tl.static_range(REL_ROWS):
        rows = rows + input_row(dy_ptr, y_img, q0 + t, syh, OH, col_off, col_ok, KS)
    ih0 = band * ROWS
    for i in tl.static_range(ROWS):
        acc = tl.zeros(ok.shape, dtype=tl.float32)
        for kr in tl.static_range(KR):
            if (i + PH - kr * DH) % SH == 0:
                for ks in tl.static_range(KS):
                    acc += (rows[((i + PH - kr * DH) // SH - REL_LO) * KS + ks].to(tl.float32)
                            * taps[kr * KS + ks])
        tl.store(dx_ptr + (n * sxn + (ih0 + i) * sxh + iw * sxw + c * sxc),
                 acc.to(dx_ptr.dtype.element_ty), mask=ok & (ih0 + i < H))


def dy_rows(geom, rows: int) -> tuple[int, int]:
    """(first, count) of the dY rows a band of ``rows`` dX rows reads, relative to the
    band's first dY row (``rows`` a multiple of the stride)."""
    sh, ph, dh = geom.stride[1], geom.pad[1], geom.dilation[1]
    rel = [(i + ph - kr * dh) // sh for i in range(rows) for kr in range(geom.r)
           if (i + ph - kr * dh) % sh == 0]
    if not rel:  # no filter row reaches these dX rows (a filter shorter than the stride)
        return 0, 0
    return min(rel), max(rel) - min(rel) + 1


def dx_spans(geom, rows: int, block: int) -> tuple[int, int, int]:
    """(spans a dX row, row bands, programs) of the strided launch: ``rows`` dX rows x
    ``block`` elements of dX's (column, channel) row a program."""
    spans, bands = cdiv(geom.w * geom.c, block), cdiv(geom.h, rows)
    return spans, bands, geom.n * bands * spans


def strided(geom) -> bool:
    """Whether ``geom``'s dgrad runs on the one-launch strided kernel: a strided 2D
    depthwise conv with one output channel a group, its row stride dividing some
    config's BLOCK_M (2 to 16 rows; a stride of 3 keeps the phase launches)."""
    return (geom.stride != (1, 1, 1) and geom.dims == 2 and geom.cg == 1 and geom.kg == 1
            and geom.g > 1 and MAX_ROWS % geom.stride[1] == 0)


class DgradDepthwiseSpanFamily(ForwardDgradFamily):
    """``depthwise_span`` on dY: at stride 1 the forward kernel; at a stride (2D, one
    channel a group) ``strided_span_dgrad_kernel``, one launch for every stride phase.
    Configs: BLOCK_M dX rows (at a stride) or dY-space output rows x BLOCK_N elements of
    the (column, channel) row, as the forward family's."""

    def __init__(self) -> None:
        super().__init__(DepthwiseSpanFamily(), "span")

    def supports(self, geom) -> str | None:
        if not strided(geom):
            return super().supports(geom)
        return self.forward.supports(geom)  # the forward family's rule on this geometry

    def hard_ok(self, geom, cfg, device) -> str | None:
        if not strided(geom):
            return super().hard_ok(geom, cfg, device)
        if cfg["BLOCK_M"] % geom.stride[1]:
            return (f"{cfg['BLOCK_M']} dX rows a program are not a multiple of the "
                    f"stride {geom.stride[1]}")
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        if not strided(geom):
            return super().config_ok(geom, cfg, device)
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        if block > max(128, next_pow2(geom.w * geom.c)):
            return f"a {block}-element span exceeds dX's row of {geom.w * geom.c}"
        if rows > max(2 * geom.stride[1], next_pow2(geom.h)):
            return f"{rows} rows exceed dX's {geom.h} rows"
        per_thread = block // (32 * cfg["num_warps"])
        held = dy_rows(geom, rows)[1] * geom.s * per_thread * geom.elem_bytes
        if held > 4 * LOADS_FIRST_REGISTERS:
            return (f"the window's {held} bytes a thread exceed {LOADS_FIRST_REGISTERS} "
                    "registers (every load is issued first)")
        return self.hard_ok(geom, cfg, device)

    def smem_bytes(self, geom, cfg: Config) -> int:
        return 0 if strided(geom) else super().smem_bytes(geom, cfg)

    def grid(self, geom, cfg: Config) -> GradGrid:
        if not strided(geom):
            return super().grid(geom, cfg)
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        taps = geom.r * geom.s
        return GradGrid(m=geom.n * geom.h * geom.w, n=geom.c, red=taps, block_m=rows,
                        block_n=block, tiles_m=dx_spans(geom, rows, block)[2], tiles_n=1,
                        mult=1, k_steps=taps, k_block=1, fma=True)

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        if not strided(g):
            super().launch(call, cfg)
            return
        call = self.dy_in_layout(call)
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        spans, tiles_h, programs = dx_spans(g, rows, block)
        rel_lo, rel_rows = dy_rows(g, rows)
        _, oh, ow = g.out_spatial
        sy, sx, sw = strides5(call.dy), strides5(call.out), strides5(call.w)
        launch_kernel(strided_span_dgrad_kernel, (programs,),
            call.dy, call.w, call.out, g.h, g.w, oh, ow, spans, tiles_h,
            sy[0], sy[1], sy[3], sy[4], sx[0], sx[1], sx[3], sx[4], sw[0], sw[3], sw[4],
            C=g.c, KR=g.r, KS=g.s, SH=g.stride[1], SW=g.stride[2], PH=g.pad[1],
            PW=g.pad[2], DH=g.dilation[1], DW=g.dilation[2], REL_LO=rel_lo,
            REL_ROWS=rel_rows, ROWS=rows, BLOCK=block, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=1,
        )
