"""What the Gluon families (``wgrad_grouped_halo``, ``grouped_flat``, ``dgrad_grouped_flat``,
``wgrad_grouped_flat``) share: whether this Triton has a Gluon they were checked on, and
the rules of their packed, cp.async-fed kernels."""

from __future__ import annotations

import torch
import triton

from .common import strides5
from .grad_packed import few_channel_groups_rejects, square_pack_gpt, square_pack_rejects

# Gluon is experimental and its API changes between Triton releases: the families run on
# the releases they were compiled and checked on (sm_90 tests, device calls 136-164) and
# leave the others to the Triton families.
GLUON_TESTED = ((3, 6),)
TRITON_RELEASE = tuple(int(v) for v in triton.__version__.split(".")[:2])

try:  # a Triton without Gluon (or without the parts the kernels use) leaves them unsupported
    from triton.experimental import gluon  # noqa: F401
    from triton.experimental.gluon import language  # noqa: F401
    from triton.experimental.gluon.language.nvidia.ampere import async_copy, mma_v2  # noqa: F401
    HAVE_GLUON = True
except ImportError:  # pragma: no cover - depends on the Triton build
    HAVE_GLUON = False


def copy_alignment_rejects(*channels: int) -> str | None:
    """Why cp.async copies of pixels of ``channels`` channels cannot be compiled: a copy of
    4 bytes or more needs its address proven aligned, and Triton proves that from integer
    arguments divisible by 16 only (a pixel's stride is its channel count; call 158: 440
    channels compiled to 2-byte copies, which cp.async does not have). The base pointer
    must be 16-byte aligned too: ``aligned_pixels`` copies a tensor whose is not."""
    for c in channels:
        if c % 16:
            return (f"{c} channels a pixel: the copies' alignment is proven from multiples "
                    "of 16 only")
    return None


def gluon_grouped_rejects(geom, max_taps: int, *copied_channels: int,
                          depth: bool = False) -> str | None:
    """Why a Gluon family for few-channel groups (2D, or 3D with ``depth``; channels_last,
    up to ``max_taps`` taps in a filter plane, 32-bit offsets, cp.async copies of pixels
    of ``copied_channels`` channels) does not take ``geom``."""
    if not HAVE_GLUON:
        return "this Triton has no Gluon (triton.experimental.gluon)"
    if TRITON_RELEASE not in GLUON_TESTED:
        return f"a Gluon kernel checked on Triton {GLUON_TESTED}, not {triton.__version__}"
    if reason := few_channel_groups_rejects(geom):
        return reason
    if geom.dims != 2 and not depth:
        return "2D convolutions only"
    if geom.r * geom.s > max_taps:
        return f"{geom.r}x{geom.s} filter: more than the {max_taps} taps it holds"
    if geom.layout != "channels_last":
        return "cp.async copies runs of a pixel's channels: channels_last only"
    if reason := copy_alignment_rejects(*copied_channels):
        return reason
    if max(geom.n * geom.c * geom.d * geom.h * geom.w, geom.gemm_m * geom.k) >= 2 ** 31:
        return "tensors of 2**31 elements or more: its offsets are 32-bit"
    return None


def wide_tile_rejects(geom, block: int) -> str | None:
    """Why a [block, block] pack tile is mostly idle: 32 wide for groups that fit 16."""
    if block > 16 and max(geom.cg, geom.kg) <= 16:
        return f"BLOCK_N={block}: groups of {max(geom.cg, geom.kg)} fit the 16-wide tile"
    return None


def pack_rejects(geom, block: int, device, *group_channels: int) -> str | None:
    """Why a [block, block] pack of whole groups, copied by cp.async runs of
    ``group_channels`` channels a group (input, and output where copied), cannot run on
    ``device``: mma.sync and cp.async, a group inside the tile, runs starting on 8 bytes
    (2-byte runs of 9-channel groups or of 61 channels do not compile, call 136)."""
    if device.key != "interpreter" and device.capability < (8, 0):
        return "needs mma.sync and cp.async (compute capability 8.0 or newer)"
    if reason := square_pack_rejects(geom, block):
        return reason
    gpt = square_pack_gpt(geom, block)
    for ch in group_channels:
        if gpt * ch % 4:
            return (f"packs of {gpt} groups of {ch} channels do not start on 8 bytes")
    return None


def aligned_pixels(t: torch.Tensor) -> torch.Tensor:
    """``t`` (a 5D view) as the Gluon kernels' cp.async copies read it: runs of a pixel's
    channels from a 16-byte aligned start, else a channels_last copy (a view of another
    layout or at an odd offset would compile to copies cp.async does not have)."""
    if t.stride(1) == 1 and t.data_ptr() % 16 == 0:
        return t
    return t.clone(memory_format=torch.channels_last_3d)


def wgrad_operands(call, depth: bool = False) -> tuple:
    """(dY, X, their strides and dW's as a Gluon wgrad kernel takes them: dY's n, h, w,
    X's n, h, w, dW's k, c, r, s; with ``depth``, each with its depth stride after n or
    c), dY and X as ``aligned_pixels`` gives them."""
    dy, x = aligned_pixels(call.dy), aligned_pixels(call.x)
    syn, _, syd, syh, syw = strides5(dy)
    sxn, _, sxd, sxh, sxw = strides5(x)
    swk, swc, swt, swr, sws = strides5(call.out)
    if depth:
        return dy, x, (syn, syd, syh, syw, sxn, sxd, sxh, sxw, swk, swc, swt, swr, sws)
    return dy, x, (syn, syh, syw, sxn, sxh, sxw, swk, swc, swr, sws)
