"""implicit_gemm_tma: stride-1 channels_last convolutions from TMA boxes of the input,
its dgrad twin and wgrad_implicit_gemm_tma (interpreter on the CPU; the H100 runs under
-m gpu)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels import implicit_gemm_tma as tma_conv
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, lookup
from convdispatch.kernels.geometry import ConvGeometry as G
from helpers import (
    TOL,
    check_candidate,
    check_candidates_on_gpu,
    compile_for_sm90,
    poisoned_out,
    reference,
    rel_err,
    tensors_for,
    unaligned,
)

FAMILY = registry.family("implicit_gemm_tma")
# The one-program-a-tile kernel and the persistent one share tiles, configs and rules.
BOTH = ["implicit_gemm_tma", "implicit_gemm_tma_persistent"]
CFG = Config(BLOCK_M=64, TILE_W=8, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_warps=4,
             num_stages=4)
CFG32 = Config(BLOCK_M=64, TILE_W=8, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4,
               num_stages=4)


def narrow(tile_w: int, block_m: int = 64) -> Config:
    """A narrow-box config (TILE_W < 8) of the family's space."""
    return Config(BLOCK_M=block_m, TILE_W=tile_w, BLOCK_N=128, BLOCK_K=32, GROUP_M=8,
                  num_warps=4, num_stages=4)


@pytest.fixture
def no_fallback(monkeypatch):
    """Fail if a launch leaves the TMA path for implicit_gemm's pointer kernel."""
    def refuse(*args, **kw):
        raise AssertionError("fell back to the pointer kernel")
    monkeypatch.setattr(tma_conv, "launch_igemm", refuse)


@pytest.mark.parametrize("geom,cfg", [
    # pixel tiles past the image on both axes, K tail, padding on every side
    (G(n=2, c=64, k=40, h=9, w=11, r=3, s=3, pad=(0, 1, 1), dtype="float32"), CFG),
    (G(n=1, c=32, k=24, h=10, w=9, r=3, s=3, pad=(0, 2, 2), dilation=(1, 2, 2),
       dtype="float16"), CFG32),
    (G(n=1, c=96, k=16, h=5, w=6, r=3, s=1, pad=(0, 1, 0), dtype="float16"), CFG32),
    (G(n=1, c=32, k=24, h=6, w=7, r=4, s=4, pad=(0, 1, 1), pad_hi=(0, 2, 2),
       dtype="float16"), CFG32),
    (G(n=1, c=32, k=16, d=3, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
       dtype="bfloat16"), CFG32),
    (G(n=2, c=64, k=48, h=5, w=4, r=1, s=1, pad=(0, 1, 1), dtype="float16"), CFG),
    # strided: phase boxes (every phase of a 3x3, a 1x1 downsample, stride 3, dilation,
    # SD-VAE's asymmetric downsampling pad, pixel tiles past the output)
    (G(n=2, c=64, k=40, h=10, w=12, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       dtype="float32"), CFG),
    (G(n=2, c=64, k=48, h=12, w=18, r=1, s=1, stride=(1, 2, 2), dtype="float16"), CFG),
    (G(n=1, c=32, k=24, h=12, w=9, r=3, s=3, stride=(1, 3, 3), pad=(0, 2, 1),
       dilation=(1, 2, 1), dtype="float16"), CFG32),
    (G(n=1, c=64, k=32, h=8, w=10, r=3, s=3, stride=(1, 2, 2), pad=(0, 0, 0),
       pad_hi=(0, 1, 1), dtype="bfloat16"), CFG),
    # strided 3D: frames of every image one axis, depth padding as boxes moved above
    # row 0 (stride 2 on all axes, stride 1 in depth, a 1x1x1 downsample)
    (G(n=2, c=32, k=24, d=5, h=6, w=8, t=3, r=3, s=3, stride=(2, 2, 2), pad=(1, 1, 1),
       dims=3, dtype="float16"), CFG32),
    (G(n=2, c=32, k=16, d=3, h=8, w=6, t=3, r=3, s=3, stride=(1, 2, 2), pad=(1, 1, 1),
       dims=3, dtype="bfloat16"), CFG32),
    (G(n=3, c=64, k=32, d=4, h=6, w=6, t=1, r=1, s=1, stride=(2, 2, 2), dims=3,
       dtype="float32"), CFG),
    # H and W not whole strides, far edge unread (SD-VAE's 257-wide downsampler)
    (G(n=2, c=32, k=24, h=17, w=17, r=3, s=3, stride=(1, 2, 2), dtype="float16"), CFG32),
    (G(n=3, c=32, k=40, h=12, w=13, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 0),
       dtype="float32"), narrow(2)),
    # boxes of 2 images x 4 rows (box_images), the last box half past the batch; strided
    (G(n=7, c=32, k=24, h=4, w=8, r=3, s=3, pad=(0, 1, 1), dtype="float32"), CFG32),
    (G(n=8, c=32, k=40, h=8, w=16, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       dtype="float16"), CFG32),
    # narrow boxes: one column of 8 rows x 8 images on 7x7 maps; 2 columns, 3 images past
    # the batch; phase boxes; 3D
    (G(n=8, c=32, k=24, h=7, w=7, r=3, s=3, pad=(0, 1, 1), dtype="float32"), narrow(1)),
    (G(n=13, c=32, k=40, h=6, w=6, r=3, s=3, pad=(0, 1, 1), dtype="float16"), narrow(2)),
    (G(n=9, c=32, k=24, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       dtype="float16"), narrow(2)),
    (G(n=8, c=32, k=16, d=3, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
       dtype="bfloat16"), narrow(4)),
], ids=lambda v: v.describe() if isinstance(v, G) else str(v))
@pytest.mark.parametrize("family", BOTH)
def test_matches_torch(family, geom, cfg, no_fallback):
    check_candidate(family, geom, cfg)


@pytest.mark.parametrize("family", BOTH)
@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_bias_residual_activation(activation, family, no_fallback):
    check_candidate(family, G(n=1, c=64, k=48, h=6, w=9, r=3, s=3, pad=(0, 1, 1),
                              dtype="float32"),
                    CFG, activation=activation, with_residual=True)


def test_persistent_programs_walk_several_tiles(no_fallback):
    """The persistent grid holds fewer programs than tiles (the interpreter's 4 SMs
    against 3 x 2 pixel tiles of 4 rows x 2 images x 2 channel tiles), each program's
    tiles in grouped order, and the result is the one-program-a-tile kernel's, bit for
    bit."""
    from convdispatch.kernels.launcher import Recorder

    geom = G(n=2, c=64, k=96, h=9, w=11, r=3, s=3, pad=(0, 1, 1), dtype="float32")
    x, w, b = tensors_for(geom)
    outs = {}
    for family in BOTH:
        outs[family] = poisoned_out(geom, x)
        with Recorder() as rec:
            run_candidate(Candidate(family, CFG), x, w, b, geom, out=outs[family])
        outs[family + ":grid"] = rec.steps[-1].grid
    assert outs["implicit_gemm_tma:grid"] == (12,)
    assert outs["implicit_gemm_tma_persistent:grid"] == (INTERPRETER.sm_count,)
    assert torch.equal(outs["implicit_gemm_tma"], outs["implicit_gemm_tma_persistent"])
    assert rel_err(outs["implicit_gemm_tma"], reference(geom, x, w, b)) < 1e-5


def test_every_config_runs(no_fallback):
    geom = G(n=1, c=128, k=32, h=9, w=17, r=3, s=3, pad=(0, 1, 1), dtype="float32")
    x, w, b = tensors_for(geom)
    ref = reference(geom, x, w, b)
    with torch.backends.cudnn.flags(allow_tf32=False):
        for cfg in FAMILY.configs:
            assert FAMILY.runnable(geom, cfg, INTERPRETER) is None, cfg
            out = poisoned_out(geom, x)
            run_candidate(Candidate("implicit_gemm_tma", cfg), x, w, b, geom, out=out)
            assert rel_err(out, ref) < 1e-5, str(cfg)


def test_tensors_outside_tma_rules_run_through_the_pointer_kernel():
    """An unaligned input view or a filter that is not channels_last cannot be a TMA
    tensor: same tile, plain loads, same result."""
    geom = G(n=1, c=32, k=32, h=5, w=6, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    x, w, b = tensors_for(geom)
    shifted = unaligned(x)
    assert tma_conv.pixels_view(shifted[:, :, None]) is None
    check_candidate("implicit_gemm_tma", geom, CFG32, x=shifted)
    assert tma_conv.filter_view(w.contiguous()[:, :, None]) is None
    out = poisoned_out(geom, x)
    run_candidate(Candidate("implicit_gemm_tma", CFG32), x, w.contiguous(), b, geom, out=out)
    assert rel_err(out, reference(geom, x, w, b)) < TOL["float16"]


def test_box_images():
    """Rows and images of a box: the split that wastes the fewest pixels past the map's
    rows and past the batch, the taller box on ties."""
    assert tma_conv.box_images(32, 28, 128, 8) == (4, 4)  # 16 rows would leave 4 empty
    assert tma_conv.box_images(1, 28, 128, 8) == (16, 1)  # no second image to fill
    assert tma_conv.box_images(128, 7, 128, 8) == (1, 16)
    assert tma_conv.box_images(32, 56, 128, 16) == (8, 1)
    assert tma_conv.box_images(4, 6, 64, 8) == (2, 4)
    assert tma_conv.box_images(3, 6, 64, 8) == (8, 1)  # a tie (0.75): the taller box
    # narrow boxes: the batch fills them
    assert tma_conv.box_images(128, 7, 128, 1) == (1, 128)
    assert tma_conv.box_images(32, 28, 128, 4) == (4, 8)
    assert tma_conv.box_images(16, 14, 64, 2) == (2, 16)
    geom = G(n=32, c=64, k=64, h=7, w=7, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert tma_conv.box_grid(geom, 64, 8) == (4 * 7, 7, 1, 1, 8)  # 4 blocks of 8 images
    assert tma_conv.box_grid(geom, 64, 8, one_image=True) == (32, 1, 1, 8, 1)  # dgrad


def test_phase_view():
    """Row h = 2*hh + phase; a pixel's two column phases with their channels form one row."""
    x = torch.arange(2 * 4 * 6 * 8.0).reshape(2, 8, 4, 6).to(
        memory_format=torch.channels_last)[:, :, None]
    shape, strides = tma_conv.phase_view(x, 2, 2)
    assert shape == [2, 2, 2, 3, 16]
    assert strides == [4 * 6 * 8, 2 * 6 * 8, 6 * 8, 16, 1]
    view = x.as_strided(shape, strides)
    assert torch.equal(view[1, 1, 0, 2, 8:], x[1, :, 0, 2, 5])  # h = 2, w = 2*2 + 1
    # 4 rows are not whole strides of 3: the last phase row reaches past the image
    assert tma_conv.phase_view(x, 3, 2)[0] == [2, 2, 3, 3, 16]
    # 3D: the frames of both images are one axis
    x3 = torch.randn(2, 8, 3, 4, 6).to(memory_format=torch.channels_last_3d)
    shape, strides = tma_conv.phase_view(x3, 2, 2)
    assert shape == [6, 2, 2, 3, 16]
    assert strides == [4 * 6 * 8, 2 * 6 * 8, 6 * 8, 16, 1]
    assert torch.equal(x3.as_strided(shape, strides)[4, 1, 1, 0, :8], x3[1, :, 1, 3, 0])


def test_odd_phase_boxes_never_read_past_the_image():
    """H and W not whole strides: the phase view's last row and column lie past the image,
    and no output reads them. Behind the input's last byte lies NaN, and every output is
    finite and right; a conv that reads the far edge's padding, or a tile that would reach
    past the output there, is refused."""
    h100 = lookup("h100")
    for geom, cfg in ((G(n=2, c=32, k=24, h=17, w=17, r=3, s=3, stride=(1, 2, 2),
                         dtype="float16"), CFG32),
                      (G(n=4, c=32, k=24, h=17, w=13, r=3, s=3, stride=(1, 2, 2),
                         dtype="float16"), narrow(2))):
        x, _, _ = tensors_for(geom)
        buf = torch.full((x.numel() + 4096,), float("nan"), dtype=x.dtype)
        inside = buf[:x.numel()].view(geom.n, geom.h, geom.w, geom.c).permute(0, 3, 1, 2)
        inside.copy_(x)
        assert FAMILY.runnable(geom, cfg, INTERPRETER) is None
        check_candidate("implicit_gemm_tma", geom, cfg, x=inside)
    # 6 output columns: 8-wide tiles would reach past them on a 13-wide input
    assert "reach past the 6 output columns" in FAMILY.hard_ok(geom, CFG32, h100)
    assert FAMILY.hard_ok(dataclasses.replace(geom, w=12), CFG32, h100) is None
    padded = dataclasses.replace(geom, pad=(0, 1, 1))  # row 17 is padding an output reads
    assert "padding past its far edge" in FAMILY.supports(padded)
    assert FAMILY.supports(dataclasses.replace(padded, h=16, w=16)) is None


def test_views():
    x = torch.randn(1, 64, 5, 7).to(memory_format=torch.channels_last)[:, :, None]
    assert tma_conv.pixels_view(x) == ([1, 1, 5, 7, 64], [5 * 7 * 64, 5 * 7 * 64, 7 * 64, 64, 1])
    assert tma_conv.pixels_view(torch.randn(1, 64, 1, 5, 7)) is None  # channels not innermost
    w = torch.randn(32, 64, 3, 3).to(memory_format=torch.channels_last)[:, :, None]
    assert tma_conv.filter_view(w) == ([32, 9 * 64], [9 * 64, 1])
    w3 = torch.randn(32, 64, 3, 3, 3).to(memory_format=torch.channels_last_3d)
    assert tma_conv.filter_view(w3) == ([32, 27 * 64], [27 * 64, 1])


def test_feasibility():
    h100, a100 = lookup("h100"), lookup("a100")
    geom = G(n=32, c=256, k=256, h=14, w=14, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert FAMILY.candidates(geom, h100)
    assert FAMILY.feasible(geom, CFG, INTERPRETER) is None
    assert "capability 9.0" in FAMILY.feasible(geom, CFG, a100)
    assert FAMILY.supports(dataclasses.replace(geom, stride=(1, 2, 2))) is None
    assert "not a multiple of the stride" in FAMILY.supports(
        dataclasses.replace(geom, h=15, stride=(1, 2, 2)))
    strided3d = dataclasses.replace(geom, d=4, t=3, dims=3, pad=(1, 1, 1), stride=(2, 2, 2))
    assert FAMILY.supports(strided3d) is None
    widths = {c.config["TILE_W"] for c in FAMILY.candidates(strided3d, h100)}
    assert widths and min(widths) >= tma_conv.WIDE_BOX  # boxes of one image: none narrow
    wgrad = registry.family("wgrad_implicit_gemm_tma")
    assert "strided" in wgrad.supports(dataclasses.replace(geom, stride=(1, 2, 2)))
    assert "grouped" in FAMILY.supports(dataclasses.replace(geom, g=2))
    assert "channels_last" in FAMILY.supports(dataclasses.replace(geom, layout="contiguous"))
    assert "multiple of 32" in FAMILY.supports(dataclasses.replace(geom, c=48))
    assert "16-byte rows" in FAMILY.supports(dataclasses.replace(geom, k=36))
    assert "pointwise_tma" in FAMILY.supports(dataclasses.replace(geom, r=1, s=1,
                                                                  pad=(0, 0, 0)))
    assert "does not divide" in FAMILY.hard_ok(dataclasses.replace(geom, c=96), CFG, h100)
    small = dataclasses.replace(geom, h=7, w=7)
    wide = Config(BLOCK_M=128, TILE_W=32, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8,
                  num_stages=3)
    assert "pixel tile exceeds" in FAMILY.config_ok(small, wide, h100)
    assert all(c.config["TILE_W"] <= 8 for c in FAMILY.candidates(small, h100))


def test_narrow_boxes_only_where_they_waste_less():
    """A box narrower than 8 pixels is offered only where it fills more of its pixels
    than an 8-wide box: 7-, 14- and 28-wide maps with a batch to fill it, not 56-wide
    maps or batch 1; the dgrad twin keeps its one-image wide boxes."""
    h100 = lookup("h100")
    layer4 = G(n=128, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert tma_conv.box_use(layer4, 128, 1) == 1.0
    assert tma_conv.box_use(layer4, 128, 8) == pytest.approx(7 / 8)
    widths = {c.config["TILE_W"] for c in FAMILY.candidates(layer4, h100)}
    assert 1 in widths and not widths & {2, 4}
    vgg = G(n=16, c=512, k=512, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert {1, 2, 4} <= {c.config["TILE_W"] for c in FAMILY.candidates(vgg, h100)}
    for geom in (dataclasses.replace(layer4, h=56, w=56), dataclasses.replace(layer4, n=1)):
        assert "an 8-wide one" in FAMILY.config_ok(geom, narrow(1, 128), h100)
        assert all(c.config["TILE_W"] >= 8 for c in FAMILY.candidates(geom, h100))
    twin = registry.family("dgrad_implicit_gemm_tma")
    assert twin.configs and all(c["TILE_W"] >= 8 for c in twin.configs)
    assert len(FAMILY.configs) > len(twin.configs)


def test_dgrad_twin_reads_the_stored_filter_reversed(no_fallback):
    """dgrad_implicit_gemm_tma: dY through this kernel with the stored filter's boxes at
    the reversed tap; also with K (the reduction) not a multiple of BLOCK_N."""
    from test_grad import grad_ref, grad_tensors, run_family

    for geom in (G(n=2, c=48, k=64, h=7, w=9, r=3, s=3, pad=(0, 1, 1), dtype="float16"),
                 G(n=1, c=32, k=32, d=3, h=4, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
                   dtype="float32")):
        x, w, dy = grad_tensors(geom)
        cfg = CFG if geom.k % 64 == 0 and geom.dims == 2 else CFG32
        out = run_family("dgrad_implicit_gemm_tma", cfg, geom, x, w, dy)
        assert rel_err(out, grad_ref(geom, "dgrad", x, w, dy)) < TOL[geom.dtype]


_TILE = dict(BLOCK_M=128, TILE_W=16, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, ACT=1,
             HAS_BIAS=True, HAS_RES=True, PREC="ieee", UPCAST=False, IMAGES=1)
_BOXES = {"x_desc": (1, 1, 8, 16, 64), "y_desc": (1, 1, 8, 16, 128),
          "r_desc": (1, 1, 8, 16, 128)}


@pytest.mark.parametrize("programs", [0, 132], ids=["one_tile", "persistent"])
@pytest.mark.parametrize("dgrad,strided,images,tile_w", [
    (False, False, 1, 16), (True, False, 1, 16), (False, True, 1, 16), (False, False, 4, 16),
    (False, True, 4, 16), (False, False, 128, 1), (False, True, 16, 2)],
    ids=["forward", "dgrad", "strided", "images", "strided_images", "narrow",
         "strided_narrow"])
def test_compiles_to_tma_boxes_and_smem_wgmma_for_sm90(dgrad, strided, images, tile_w,
                                                        programs):
    """Compiled for sm_90 (no GPU needed): 5D input boxes and 2D filter boxes by TMA, the
    output by a TMA store, and every wgmma reads both operands from shared memory (the
    pixel box's reshape folds into a shared-memory view only as the B operand; also for
    the strided phase box [1, TILE_H, 1, TILE_W, BLOCK_K], boxes of 4 images and narrow
    boxes: one column of 128 images, 2 columns x 4 rows x 16 images)."""
    rows = 128 // tile_w // images
    boxes = dict(_BOXES, w_desc=(64, 128) if dgrad else (128, 64),
                 x_desc=((images, rows, 1, tile_w, 64) if strided
                         else (images, 1, rows, tile_w, 64)),
                 y_desc=(images, 1, rows, tile_w, 128), r_desc=(images, 1, rows, tile_w, 128))
    got = compile_for_sm90("convdispatch.kernels.implicit_gemm_tma", "igemm_tma_kernel",
                           dict(_TILE, DGRAD=dgrad, STRIDED=strided, PROGRAMS=programs,
                                IMAGES=images, TILE_W=tile_w), boxes)
    assert got == {"tma": ["2d.shared", "5d.global", "5d.shared"], "wgmma": True,
                   "smem_operands": True}


def test_wgrad_compiles_to_row_boxes_and_smem_wgmma_for_sm90():
    """wgrad_implicit_gemm_tma: one-row boxes of dY and X by TMA, dY^T X by wgmma with both
    operands in shared memory."""
    got = compile_for_sm90("convdispatch.kernels.wgrad_implicit_gemm_tma",
                           "wgrad_conv_tma_kernel",
                           dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=4, SPLIT_K=4,
                                PREC="ieee", UPCAST=False),
                           {"dy_desc": (1, 1, 1, 64, 128), "x_desc": (1, 1, 1, 64, 128)})
    assert got == {"tma": ["5d.shared"], "wgmma": True, "smem_operands": True}


# --- on a GPU (CONVDISPATCH_GPU_TESTS=1 ... -m gpu through the device tool) --------------------
GPU_CASES = [
    G(n=8, c=64, k=64, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),  # ResNet-50 layer1 3x3
    G(n=4, c=256, k=256, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),  # layer3 3x3
    G(n=3, c=96, k=200, h=17, w=13, r=3, s=3, pad=(0, 1, 1)),  # tails everywhere
    G(n=2, c=64, k=64, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
    G(n=4, c=128, k=128, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),  # layer2.0
    G(n=2, c=256, k=512, h=56, w=56, r=1, s=1, stride=(1, 2, 2)),  # layer2.0.downsample
]
# Narrow boxes (TILE_W < 8): layer4 3x3 at batch 64, layer3.0's strided 3x3 at batch 16,
# a batch that leaves boxes part empty, 3D.
GPU_NARROW_CASES = [
    G(n=64, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    G(n=16, c=256, k=256, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=12, c=128, k=96, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
    G(n=8, c=64, k=128, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
]

# Phase boxes of strided 3D convs (r3d_18 layer3.0's 3x3x3 and its 1x1x1 downsample) and
# of inputs that are not whole strides (SD-VAE's 129-wide downsampler at pad 0).
GPU_PHASE_CASES = [
    G(n=2, c=128, k=256, d=8, h=28, w=28, t=3, r=3, s=3, stride=(2, 2, 2), pad=(1, 1, 1),
      dims=3),
    G(n=2, c=64, k=128, d=8, h=28, w=28, t=1, r=1, s=1, stride=(2, 2, 2), dims=3),
    G(n=2, c=128, k=128, h=129, w=129, r=3, s=3, stride=(1, 2, 2)),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2), ("float32", 1e-2)])
@pytest.mark.parametrize("base", GPU_CASES, ids=lambda g: g.describe())
@pytest.mark.parametrize("family", BOTH)
def test_gpu_configs_match_torch(base, dtype, tol, family, no_fallback):
    """Every feasible config on the GPU against torch in float32 (fp16: every config;
    bf16/fp32: the first four), bias and a channels_last residual on."""
    from convdispatch.kernels.device import spec_of

    geom = dataclasses.replace(base, dtype=dtype)
    cands = registry.family(family).candidates(geom, spec_of("cuda"))
    assert cands, geom.describe()
    if dtype != "float16":
        cands = cands[:4]
    check_candidates_on_gpu(cands, geom, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2), ("float32", 1e-2)])
@pytest.mark.parametrize("base", GPU_NARROW_CASES, ids=lambda g: g.describe())
@pytest.mark.parametrize("family", BOTH)
def test_gpu_narrow_boxes_match_torch(base, dtype, tol, family, no_fallback):
    """Every feasible narrow-box config (fp16; bf16/fp32: the first two) against torch
    (float32's larger boxes leave none for the 3D case)."""
    from convdispatch.kernels.device import spec_of

    geom = dataclasses.replace(base, dtype=dtype)
    cands = [c for c in registry.family(family).candidates(geom, spec_of("cuda"))
             if c.config["TILE_W"] < tma_conv.WIDE_BOX]
    if not cands and dtype == "float32":
        pytest.skip("no narrow box fits float32's shared memory here")
    assert cands, geom.describe()
    check_candidates_on_gpu(cands if dtype == "float16" else cands[:2], geom, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2), ("float32", 1e-2)])
@pytest.mark.parametrize("base", GPU_PHASE_CASES, ids=lambda g: g.describe())
@pytest.mark.parametrize("family", BOTH)
def test_gpu_phase_boxes_match_torch(base, dtype, tol, family, no_fallback):
    """Strided 3D and odd-sized strided inputs: every feasible config (fp16; bf16/fp32: the
    first four) against torch."""
    from convdispatch.kernels.device import spec_of

    geom = dataclasses.replace(base, dtype=dtype)
    cands = registry.family(family).candidates(geom, spec_of("cuda"))
    assert cands, geom.describe()
    check_candidates_on_gpu(cands if dtype == "float16" else cands[:4], geom, tol)
