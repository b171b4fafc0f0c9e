"""The flat-grid Gluon families (grouped_flat forward, its dgrad twin, wgrad_grouped_flat)
on the CPU: the interpreter cannot run Gluon, so these tests compile the kernels for
sm_90 (no GPU needed), check their rules and launch arguments, and replay the flat
layout's index arithmetic (flat_consts, phases and shifts, as the wgrad kernel uses them)
in torch; tests/test_gpu_families.py and tests/test_gpu_grad.py run them on the GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import INTERPRETER, KNOWN
from convdispatch.kernels.flat_grid import (
    copy_runs,
    flat_consts,
    reuse_loads,
    reuse_plan,
    tap_place,
)
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.grouped_flat import (
    FLAT_WIDE,
    HALVES_MAX_COPIES,
    GroupedFlatFamily,
    copies_per_thread,
    diag_blocks,
    exact_phases,
    filter_async,
    filter_regs,
    flat_item,
    input_buffers,
    row_reuse,
)
from convdispatch.kernels.wgrad_grouped_flat import HAVE_GLUON, WgradGroupedFlatFamily
from helpers import (
    GLUON_RULE_CASES,
    SHIPPED_H100,
    conv_call,
    flat_image,
    gluon_ptx_sm90,
    gluon_wgrad_ptx_sm90,
    launch_filter_vector,
    legacy_model_copy,
    run_without_interpreter,
)
from helpers import gluon_geom as G

pytestmark = pytest.mark.skipif(not HAVE_GLUON, reason="this Triton has no Gluon")

FAM = WgradGroupedFlatFamily()
FWD = GroupedFlatFamily()
H100 = KNOWN["h100"]


def _plane_taps(geom: ConvGeometry) -> dict:
    """The flat-grid kernels' filter, stride and dilation constants."""
    return dict(T=geom.t, R=geom.r, S=geom.s, STD=geom.stride[0], STH=geom.stride[1],
                STW=geom.stride[2], DLD=geom.dilation[0], DLH=geom.dilation[1],
                DLW=geom.dilation[2], DEPTH=geom.dims == 3)


def ptx_sm90(geom: ConvGeometry, cfg: Config) -> tuple[str, int]:
    """The kernel's PTX for ``cfg`` on ``geom`` and its shared memory in bytes."""
    from convdispatch.kernels.wgrad_grouped_flat import wgrad_grouped_flat_kernel as k

    cons = dict(CG=geom.cg, KG=geom.kg, GPT=FAM.gpt(geom, cfg), **_plane_taps(geom),
                BLOCK=cfg["BLOCK_N"], SPLIT=cfg["SPLIT_K"] > 1,
                NEXT=True, **flat_consts(geom, cfg["BLOCK_M"]))
    return gluon_wgrad_ptx_sm90(k, geom.dtype, cons, cfg["num_warps"])


def forward_ptx_sm90(geom: ConvGeometry, cfg: Config, epilogue: bool,
                     transposed: bool, bufs: int | None = None) -> tuple[str, int]:
    """grouped_flat's PTX for ``cfg`` on ``geom`` (with bias, residual and SiLU fused, or
    none; reading the filter transposed, as its dgrad twin does; ``bufs`` input buffers,
    else ``input_buffers``') and its shared memory."""
    from convdispatch.kernels.grouped_flat import grouped_flat_kernel as k

    el = {"float16": "*fp16", "bfloat16": "*bf16"}[geom.dtype]
    pointers = dict.fromkeys(("x_ptr", "w_ptr", "out_ptr", "bias_ptr", "res_ptr"), el)
    item = flat_item(geom, cfg)
    w_vec = launch_filter_vector(conv_call(geom, transposed_w=transposed))
    descs = [f"d{part}{ph}" for ph in range(4) for part in "ab"]
    if cfg.get("TMA"):
        # as phase_descriptors makes them: boxes of RA and RB rows of the grid
        lay = (f"NVMMASharedLayout(swizzle_byte_width={2 * cfg['BLOCK_N']}, "
               "element_bitwidth=16, rank=5, transposed=False, fp4_padded=False, "
               "cga_layout=[])")
        for name in descs:
            rows = item["RA"] if name[1] == "a" else max(item["RB"], 1)
            pointers[name] = (f"tensordesc<{el[1:]}[1, 1, {rows}, {item['WP']}, "
                              f"{cfg['BLOCK_N']}],{lay}>")
        _, pdh, pdw = geom.pad
        _, sth, stw = geom.stride
        offs = [((rho - pdh) // sth, (sig - pdw) // stw)
                for rho, sig in (divmod(ph, stw) for ph in range(sth * stw))]
        tma = dict(TMA=True, OFF=tuple(offs + offs[:1] * (4 - len(offs))))
    else:
        tma = dict(TMA=False, OFF=(), RA=0, RB=0, **dict.fromkeys(descs))
    cons = dict(CG=geom.cg, KG=geom.kg, GPT=FWD.gpt(geom, cfg), **_plane_taps(geom),
                BLOCK=cfg["BLOCK_N"], ACT=4 if epilogue else 0,
                HAS_BIAS=epilogue, HAS_RES=epilogue, TRANSPOSED=transposed,
                B_REGS=filter_regs(geom, cfg, transposed),
                REUSE=row_reuse(geom, cfg), WGMMA=bool(cfg.get("WGMMA")),
                W_VEC=w_vec, W_ASYNC=filter_async(geom, cfg, transposed, w_vec, 0),
                BUFS=bufs or input_buffers(geom, cfg),
                DIAG=diag_blocks(geom, cfg, transposed),
                # channels_last: Triton makes an integer argument of 1 a constant
                syc=1, src=1, **({} if transposed else {"swc": 1}), **item, **tma)
    aligned = (*pointers, "syn", "syd", "syh", "syw", "sxn", "sxd", "sxh", "sxw", "srn",
               "srd", "srh", "srw", "C", "K")
    return gluon_ptx_sm90(k, pointers, cons, aligned, cfg["num_warps"])


def mma_n(geom: ConvGeometry, cfg: Config) -> int:
    """The N of a WGMMA config's warpgroup mmas, and the columns of its filter tiles in
    shared memory: a diagonal block's width where the tile takes them (``diag_blocks``),
    else the tile's; as many mmas either way."""
    return cfg["BLOCK_N"] // diag_blocks(geom, cfg, False)


def filter_copies(geom: ConvGeometry, cfg: Config) -> int:
    """A thread's 16-byte cp.async copies of every tap's filter tile (at least one a tile:
    a 16-wide tile's 32 runs leave threads that copy nothing)."""
    runs = cfg["BLOCK_N"] * mma_n(geom, cfg) // 8
    return geom.t * geom.r * geom.s * max(1, runs // (32 * cfg["num_warps"]))


_CHILD = """
import sys
import triton
sys.path.insert(0, sys.argv[1])
import test_flat_grid as T
_compile = triton.compile


def _keep_ttgir(*args, **kwargs):  # the shared layouts are read from the TTGIR
    out = _compile(*args, **kwargs)
    open(sys.argv[3] + ".ttgir", "w").write(out.asm["ttgir"])
    return out


triton.compile = _keep_ttgir
case = int(sys.argv[2])
if sys.argv[4] == "wgrad":
    ptx, shared = T.ptx_sm90(*T.COMPILE_CASES[case])
else:
    cases = {"wgmma": T.WGMMA_CASES, "tma": T.TMA_CASES,
             "deep": T.DEEP_CASES}.get(sys.argv[4], T.FORWARD_CASES)
    ptx, shared = T.forward_ptx_sm90(*cases[case])
open(sys.argv[3], "w").write(ptx)
print(shared)
"""


def assert_sixteen_byte_copies(ptx: str) -> None:
    """Every cp.async copy of the kernel is 16 bytes."""
    sizes = set(re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\w+)", ptx))
    assert sizes == {"0x10"}, sizes


def assert_async_filter(ptx: str, geom: ConvGeometry, cfg: Config) -> None:
    """W_ASYNC (``filter_async``): every tap's filter tile, all planes, is 16-byte cp.async
    copies issued before the first wait, with no global load: the copies before it are the
    first step's and the next step's input copies (as many as each of the loop's two
    steps issues) and the filter's, a thread's share of each tile's 16-byte runs (at
    least one: a 16-wide tile's 32 runs leave threads that copy nothing)."""
    copy = r"cp\.async\.c[ag]\.shared\.global"
    first = ptx.index("cp.async.wait_group")
    before, total = len(re.findall(copy, ptx[:first])), len(re.findall(copy, ptx))
    per_step = total - before
    assert before - 2 * per_step == filter_copies(geom, cfg)
    assert not re.search(r"ld\.global", ptx[:first])
    assert ptx[:first].count("cp.async.commit_group") == 3


def assert_sixteen_byte_stores(ptx: str) -> None:
    """The output leaves in 16-byte stores (8 channels a thread), whole 32-byte sectors per
    pair of threads; from the mma layout they were 4-byte stores."""
    stores = re.findall(r"st\.global(\S*)", ptx)
    assert stores and set(stores) == {".v4.b32"}, set(stores)


def compile_sm90(kind: str, case: int, tmp_path) -> tuple[str, int]:
    """PTX and shared memory of COMPILE_CASES[case] (``kind`` "wgrad") or
    FORWARD_CASES[case] ("forward"), compiled in a child process
    (``helpers.run_without_interpreter``); its TTGIR is left in kernel.ptx.ttgir."""
    out = tmp_path / "kernel.ptx"
    shared = int(run_without_interpreter(_CHILD, str(Path(__file__).parent), str(case),
                                         str(out), kind, timeout=240).split()[-1])
    return out.read_text(), shared


COMPILE_CASES = [
    # ResNeXt-50 layer4.1 (32-channel groups on a 7x7 map, 4 warps, split); layer4.0's
    # stride 2 (four phase images); 4-channel groups four a tile on a 56-wide map (two
    # rows an item); dilation (2, 3) with asymmetric padding in bfloat16
    (G(n=2, c=64, k=64, g=2, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=32, SPLIT_K=4, num_warps=4, num_stages=2)),
    (G(n=2, c=64, k=64, g=2, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=32, SPLIT_K=1, num_warps=2, num_stages=2)),
    (G(n=2, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)),
    (G(n=2, c=64, k=64, g=4, h=15, w=19, r=3, s=2, pad=(0, 2, 1), dilation=(1, 2, 3),
       dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)),
    # stride (3, 2): six phase images in a buffer of eight (call 157: a buffer of six,
    # not a power of two, aborted the compiler)
    (G(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
       dilation=(1, 2, 1)),
     Config(BLOCK_M=64, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)),
    # 3D, split, strided in depth: a program reduces one depth tap's plane of nine taps
    (G(n=2, c=256, k=256, g=32, d=8, h=14, w=14, t=3, r=3, s=3, stride=(2, 1, 1),
       pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=64, BLOCK_N=16, SPLIT_K=4, num_warps=2, num_stages=2)),
]


@pytest.mark.parametrize("case", range(len(COMPILE_CASES)),
                         ids=["cg32-7x7-split", "cg32-s2", "cg4-56x56", "cg16-dilated-bf16",
                              "cg8-s3x2", "cg8-3d-split"])
def test_kernel_compiles_for_sm90(case, tmp_path):
    """Per item, every tap reads 16 flat positions an mma (P / 16 of them, ldmatrix
    operands); copies are 16-byte cp.async; shared memory is what the rule counts."""
    geom, cfg = COMPILE_CASES[case]
    assert FAM.runnable(geom, cfg, H100) is None
    ptx, shared = compile_sm90("wgrad", case, tmp_path)
    assert FAM.smem_bytes(geom, cfg) <= shared <= H100.smem_bytes
    bn = cfg["BLOCK_N"]
    per_dot = (bn // 16) * (bn // 8 // cfg["num_warps"])
    # two items an iteration
    assert 2 * (cfg["BLOCK_M"] // 16) * geom.r * geom.s * per_dot == len(
        re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx))
    assert "ldmatrix" in ptx
    assert_sixteen_byte_copies(ptx)
    # A split launch lets its reduction pass be scheduled from its start (``dependent``).
    split = cfg["SPLIT_K"] > 1
    assert ptx.count("griddepcontrol.launch_dependents") == split
    assert not split or ptx.index("griddepcontrol") < ptx.index("cp.async")


def plane_layouts(ttgir: str) -> set[tuple[int, int]]:
    """(row bits, offset bit of the first channel-plane basis) of every shared linear
    layout in a TTGIR: a view of 2**r rows of a buffer whose planes hold 2**p rows has
    (r, 3 + p) (``flat_grid.row_layout``; a permuted view swaps the coordinates)."""
    found = set()
    for text in re.findall(r"#ttg\.shared_linear<\{offset = (\[\[.*?\]\])\}", ttgir):
        bases = [tuple(int(v) for v in b.split(",")) for b in re.findall(r"\[(-?\d+, -?\d+)\]",
                                                                        text)]
        ch = 0 if bases[0] == (1, 0) else 1  # the coordinate of the channels within 8
        rows = sum(1 for b in bases if b[1 - ch])
        found.add((rows, next(i for i, b in enumerate(bases) if b[ch] == 8)))
    return found


@pytest.mark.parametrize("kind,case", [("wgrad", 0), ("wgrad", 1), ("forward", 0),
                                       ("forward", 1)],
                         ids=["wgrad-cg32-7x7", "wgrad-cg32-s2", "fwd-cg32-7x7", "fwd-cg32-s2"])
def test_planes_name_their_buffers(kind, case, tmp_path):
    """32-channel rows lie in planes: every view of the phase images (the copies' runs,
    the wgrad taps' [16, 32] and the forward taps' [P, 32]) has the phase buffer's plane
    stride, every view of dY (wgrad: the copy's [P, 32], the taps' [16, 32]) dY's
    buffer's, and nothing else appears. (A view with its own rows as the stride compiles,
    and reads the wrong rows.)"""
    geom, cfg = (COMPILE_CASES if kind == "wgrad" else FORWARD_CASES)[case][:2]
    assert cfg["BLOCK_N"] == 32
    compile_sm90(kind, case, tmp_path)
    c = flat_consts(geom, cfg["BLOCK_M"])
    xr, yr = 2 * c["NPH"] * c["XP"], 2 * c["P"]
    runs = [n for _, n in copy_runs(c["XCOPY"])]
    lg = {n: n.bit_length() - 1 for n in (xr, yr, c["P"], 16, *runs)}
    want = {(lg[xr], 3 + lg[xr])} | {(lg[n], 3 + lg[xr]) for n in runs}
    if kind == "wgrad":
        want |= {(lg[16], 3 + lg[xr]), (lg[yr], 3 + lg[yr]), (lg[c["P"]], 3 + lg[yr]),
                 (lg[16], 3 + lg[yr])}
    else:
        want |= {(lg[c["P"]], 3 + lg[xr])}
    assert plane_layouts((tmp_path / "kernel.ptx.ttgir").read_text()) == want


FORWARD_CASES = [
    # ResNeXt-50 layer4.1 with bias, residual and SiLU; layer4.0's stride 2 (four phase
    # images) in bfloat16; 4-channel groups four a tile on a 56-wide map, read transposed
    # (the dgrad twin); stride (3, 2) with dilation (six phase images in a buffer of eight)
    (G(n=2, c=64, k=64, g=2, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=32, ITEMS=2, num_warps=4, num_stages=1), True, False),
    (G(n=2, c=64, k=64, g=2, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       dtype="bfloat16"),
     Config(BLOCK_M=64, BLOCK_N=32, ITEMS=4, num_warps=2, num_stages=1), False, False),
    (G(n=2, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1), False, True),
    (G(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
       dilation=(1, 2, 1)),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True, False),
    # 3D with the epilogue, and read transposed at a depth stride: a step a depth tap,
    # every tap's tile (27) in shared memory
    (G(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=4, num_warps=2, num_stages=1), True, False),
    (G(n=2, c=128, k=128, g=32, d=8, h=28, w=28, t=3, r=3, s=3, stride=(2, 2, 2),
       pad=(1, 1, 1), dims=3, dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1), False, True),
    # the row-reuse schedule (row_reuse): ResNeXt-50 layer2.1 with the epilogue, 8 runs a
    # warp; read transposed with 4 warps (4 runs a warp)
    (G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True, False),
    (G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="bfloat16"),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1), False, True),
]


@pytest.mark.parametrize("case", range(len(FORWARD_CASES)),
                         ids=["cg32-7x7-epilogue", "cg32-s2-bf16", "cg4-transposed",
                              "cg8-s3x2", "cg8-3d-epilogue", "cg4-3d-s2-transposed",
                         "cg8-reuse-epilogue", "cg8-reuse-transposed-bf16"])
def test_forward_kernel_compiles_for_sm90(case, tmp_path):
    """Two items an iteration, each tap one mma pass over an item's P positions (ldmatrix
    operands), 16-byte cp.async input copies, the filter tiles loaded a plane at once,
    shared memory as the rule counts it."""
    geom, cfg, _, _ = FORWARD_CASES[case]
    assert FWD.runnable(geom, cfg, H100) is None
    ptx, shared = compile_sm90("forward", case, tmp_path)
    assert FWD.smem_bytes(geom, cfg) <= shared <= H100.smem_bytes
    # (3D: the filter tiles of every depth tap, 27 of them, held beside the phase images)
    assert shared >= geom.t * geom.r * geom.s * cfg["BLOCK_N"] ** 2 * geom.elem_bytes
    bn, nw = cfg["BLOCK_N"], cfg["num_warps"]
    per_tap = cfg["BLOCK_M"] // (16 * nw) * (bn // 8) * (bn // 16)
    assert 2 * geom.r * geom.s * per_tap == len(re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx))
    assert "ldmatrix" in ptx
    if bn == 16:
        # A's rows each tap of both steps (with row reuse, each run once for all the taps
        # that read it: reuse_plan); the filter tiles (one ldmatrix a tap) once a program
        # where they stay in registers (2D forward), else once a step.
        b_loads = 1 if filter_regs(geom, cfg, FORWARD_CASES[case][3]) else 2
        a_loads = reuse_loads(geom, cfg["BLOCK_M"], nw)[row_reuse(geom, cfg)]
        assert len(re.findall(r"ldmatrix", ptx)) == 2 * a_loads + b_loads * geom.r * geom.s
    assert row_reuse(geom, cfg) is (case in (4, 6, 7))  # the cases of the row-reuse schedule
    prologue = ptx[:ptx.index("mma.sync")]
    width = launch_filter_vector(conv_call(geom, transposed_w=FORWARD_CASES[case][3]))
    if filter_async(geom, cfg, FORWARD_CASES[case][3], width, 0):
        assert_async_filter(ptx, geom, cfg)
    else:
        # The filter tiles load a plane at once: every tap's global loads before the
        # barrier that follows the plane's stores (tap by tap there was one between each
        # two taps).
        ops = re.findall(r"\b(ld\.global|bar\.sync)", prologue)
        runs = sum(1 for i, op in enumerate(ops)
                   if op == "ld.global" and (i == 0 or ops[i - 1] != op))
        assert runs == geom.t, (runs, geom.t)
        # Each group's run of channels in one vector load a tap, as wide as
        # ``filter_vector`` says (16 bytes for 8 channels of a channels_last filter read as
        # stored); two bytes at a time where it says 1 (read transposed: the dgrad twin).
        filter_loads = re.findall(r"ld\.global(?:\.\w+)*?\.(b16|v4\.b32|v2\.b32|b32)\b",
                                  prologue)
        assert set(filter_loads) == {{1: "b16", 4: "v2.b32", 8: "v4.b32"}[width]}, \
            set(filter_loads)
        # (a thread holds one or more runs of a tile: a 16-wide tile's 8 runs a warp repeat)
        per_thread = max(8, bn * bn // (32 * nw))
        assert len(filter_loads) == geom.t * geom.r * geom.s * per_thread // width
    assert_sixteen_byte_copies(ptx)
    assert_sixteen_byte_stores(ptx)


# grouped_flat's WGMMA tiles: ResNeXt-50 layer4.1 with the epilogue (32 channels, one
# warpgroup); stride 2 in bfloat16 over two warpgroups; stride (3, 2) with dilation (six
# phase images); 3D with the epilogue, a step a depth tap (27 tiles in shared memory)
WGMMA_CASES = [
    (G(n=2, c=64, k=64, g=2, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=32, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1), True, False),
    (G(n=2, c=64, k=64, g=8, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=4, num_warps=8, num_stages=1, WGMMA=1), False,
     False),
    (G(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
       dilation=(1, 2, 1)),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1), False,
     False),
    (G(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1), True,
     False),
    # a 32-wide pack of 8-channel groups (64 bytes a pixel a copy)
    (G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, BLOCK_N=32, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1), True,
     False),
    # 64 wide (128 bytes a pixel a copy, four diagonal blocks): ResNeXt-50 layer3.0's
    # stride 2 (16-channel groups) with the epilogue; layer2.1 (8-channel groups) over two
    # warpgroups in bfloat16
    (G(n=2, c=512, k=512, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=64, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1), True,
     False),
    (G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=64, ITEMS=2, num_warps=8, num_stages=1, WGMMA=1), False,
     False),
]


@pytest.mark.parametrize("case", range(len(WGMMA_CASES)),
                         ids=["cg32-7x7-epilogue", "cg8-s2-bf16-2wg", "cg8-s3x2", "cg8-3d",
                              "cg8-wide", "cg16-s2-64", "cg8-64-bf16-2wg"])
def test_forward_wgmma_compiles_for_sm90(case, tmp_path):
    """WGMMA: every tap of both steps is warpgroup mmas reading both operands from shared
    memory (no mma.sync, no ldmatrix), issued back to back and waited for once a step;
    the copies are 16-byte cp.async into rows swizzled over their width, which the tap
    views' descriptors name (32 or 64 bytes); shared memory as the rule counts it."""
    geom, cfg, _, _ = WGMMA_CASES[case]
    assert FWD.runnable(geom, cfg, H100) is None
    assert not row_reuse(geom, cfg)
    ptx, shared = compile_sm90("wgmma", case, tmp_path)
    assert FWD.smem_bytes(geom, cfg) <= shared <= H100.smem_bytes
    bn, nw = cfg["BLOCK_N"], cfg["num_warps"]
    assert not re.search(r"\bmma\.sync", ptx)
    # (The epilogue's layout change reads shared memory with ldmatrix; the taps do not.)
    steps = re.findall(r"cp\.async\.wait_group\s+1;(.*?)wgmma\.wait_group", ptx, re.S)
    assert len(steps) == 2 and not any("ldmatrix" in step for step in steps)
    per_tap = cfg["BLOCK_M"] // (64 * (nw // 4)) * (bn // 16)
    wgmma = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{mma_n(geom, cfg)}k16"
                       r"\.f32\.(?:f16|bf16)", ptx)
    assert len(wgmma) == 2 * geom.r * geom.s * per_tap, len(wgmma)
    assert len(re.findall(r"wgmma\.wait_group\.sync\.aligned 0;", ptx)) == 2
    assert "fence.proxy.async.shared::cta" in ptx
    assert_sixteen_byte_copies(ptx)
    assert filter_async(geom, cfg, False, 8, 0)
    assert_async_filter(ptx, geom, cfg)
    ttgir = (tmp_path / "kernel.ptx.ttgir").read_text()
    assert f"swizzlingByteWidth = {2 * bn}" in ttgir
    assert_sixteen_byte_stores(ptx)


# TMA copies (``tma_rejects``): ResNeXt-50 layer2.0's stride 2 (four phase images, an item's
# five input rows in boxes of 4 and 1) with the epilogue; layer2.1's stride 1 in bfloat16
# (a 32-wide grid for 30 columns, rows in boxes of 4 and 2); ResNeXt3D-50 layer2.0 (3D,
# stride 2, 16-wide tiles) and layer2.1 (3D, stride 1, two warpgroups)
TMA_CASES = [
    (G(n=2, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=128, BLOCK_N=32, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1, TMA=1),
     True, False),
    (G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=32, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1, TMA=1),
     False, False),
    (G(n=2, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3, stride=(2, 2, 2),
       pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1, TMA=1),
     False, False),
    (G(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=8, num_stages=1, WGMMA=1, TMA=1),
     True, False),
    # 64 wide: ResNeXt-50 layer2.0 (8-channel groups, 128-byte boxes' rows) with the epilogue
    (G(n=2, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=64, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1, TMA=1),
     True, False),
]


@pytest.mark.parametrize("case", range(len(TMA_CASES)),
                         ids=["s2-epilogue", "s1-bf16", "3d-s2", "3d-s1-2wg", "s2-64"])
def test_forward_tma_compiles_for_sm90(case, tmp_path):
    """TMA configs: each buffer's phase images are 5D bulk tensor copies (a box or two a
    phase image: the RA and RB rows of ``flat_consts(tma=True)``), issued at the three
    places the cp.async copies were (before the loop, one a buffer in it), no cp.async
    copy of the input left; the taps' warpgroup mmas as the WGMMA configs have them;
    shared memory as the rule counts it (the boxes' rows, swizzled as the descriptors
    say)."""
    geom, cfg, _, _ = TMA_CASES[case]
    assert FWD.runnable(geom, cfg, H100) is None
    ptx, shared = compile_sm90("tma", case, tmp_path)
    assert FWD.smem_bytes(geom, cfg) <= shared <= H100.smem_bytes
    c = flat_item(geom, cfg)
    assert c["WP"] & (c["WP"] - 1) == 0 and c["RA"] + c["RB"] == c["XNEED"] // c["WP"]
    boxes = c["NPH"] * (1 + (c["RB"] > 0))
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.5d", ptx)) == 3 * boxes
    # The only cp.async copies are the filter tiles' (``filter_async``), one group.
    bn, nw = cfg["BLOCK_N"], cfg["num_warps"]
    assert len(re.findall(r"cp\.async\.c[ag]", ptx)) == filter_copies(geom, cfg)
    assert ptx.count("cp.async.commit_group") == 1
    assert_sixteen_byte_copies(ptx)
    per_tap = cfg["BLOCK_M"] // (64 * (nw // 4)) * (bn // 16)
    wgmma = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{mma_n(geom, cfg)}k16"
                       r"\.f32\.(?:f16|bf16)", ptx)
    assert len(wgmma) == 2 * geom.r * geom.s * per_tap, len(wgmma)
    ttgir = (tmp_path / "kernel.ptx.ttgir").read_text()
    assert f"swizzlingByteWidth = {2 * bn}" in ttgir
    assert_sixteen_byte_stores(ptx)


# Deeper input pipelines (BUFS buffers, a step's copies issued BUFS - 1 steps ahead), as
# ``input_buffers`` gives them (one item a program of a 3D WGMMA tile: a buffer a depth
# tap): ResNeXt3D-50 layer3.0 at batch 1 (stride 2) with the epilogue; layer2.1 (stride 1,
# 32 wide, bfloat16); by TMA, layer3.0. And the kernel's general form, which call 304
# measured and no rule takes (None: four buffers): ResNeXt-50 layer4.1, four items.
DEEP_CASES = [
    (G(n=1, c=512, k=512, g=32, d=4, h=14, w=14, t=3, r=3, s=3, stride=(2, 2, 2),
       pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=1, num_warps=4, num_stages=1, WGMMA=1),
     True, False),
    (G(n=1, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
       dtype="bfloat16"),
     Config(BLOCK_M=128, BLOCK_N=32, ITEMS=1, num_warps=4, num_stages=1, WGMMA=1),
     False, False),
    (G(n=1, c=512, k=512, g=32, d=4, h=14, w=14, t=3, r=3, s=3, stride=(2, 2, 2),
       pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=1, num_warps=4, num_stages=1, WGMMA=1, TMA=1),
     False, False),
    (G(n=2, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=32, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1),
     False, False, 4),
]


@pytest.mark.parametrize("case", range(len(DEEP_CASES)),
                         ids=["3d-s2", "3d-wide-bf16", "3d-tma", "2d-four"])
def test_forward_deep_buffers_compile_for_sm90(case, tmp_path):
    """BUFS buffers: the loop's BUFS steps each issue the copies of the step BUFS - 1 ahead
    and wait for their own (cp.async: ``wait_group BUFS - 1``, BUFS - 2 steps' copies and
    the filter's issued before the loop; TMA: BUFS mbarriers, BUFS - 1 boxes' sets issued
    before the loop, BUFS - 1 waited for after it); every step's taps as warpgroup mmas;
    shared memory as the rule counts it (BUFS buffers' phase images)."""
    geom, cfg, *_ = DEEP_CASES[case]
    bufs = (DEEP_CASES[case][4:] or (input_buffers(geom, cfg),))[0]
    assert bufs > 2 and FWD.runnable(geom, cfg, H100) is None
    ptx, shared = compile_sm90("deep", case, tmp_path)
    c = flat_item(geom, cfg)
    bn, nw = cfg["BLOCK_N"], cfg["num_warps"]
    taps = geom.t * geom.r * geom.s
    assert ((bufs * c["NPH"] * c["XP"] * bn + taps * bn * mma_n(geom, cfg))
            * geom.elem_bytes <= shared)
    assert shared <= H100.smem_bytes
    if len(DEEP_CASES[case]) == 4:  # as the family launches it, and counts it
        assert FWD.smem_bytes(geom, cfg) <= shared
    tiles = filter_copies(geom, cfg)
    copy = r"cp\.async\.c[ag]\.shared\.global"
    if cfg.get("TMA"):
        boxes = c["NPH"] * (1 + (c["RB"] > 0))
        # before the loop: the first step's and BUFS - 2 more; one a step in it
        assert len(re.findall(r"cp\.async\.bulk\.tensor\.5d", ptx)) == (2 * bufs - 1) * boxes
        assert len(re.findall(r"mbarrier\.init", ptx)) == bufs
        assert len(re.findall(copy, ptx)) == tiles
    else:
        assert len(re.findall(rf"cp\.async\.wait_group\s+{bufs - 1};", ptx)) == bufs
        assert not re.search(rf"cp\.async\.wait_group\s+{bufs - 2};", ptx)
        # before the first wait: the first step's, the filter's, BUFS - 2 more steps' and
        # the loop's first step's; after it, the loop's other BUFS - 1 steps' issues
        first = ptx.index("cp.async.wait_group")
        before, total = len(re.findall(copy, ptx[:first])), len(re.findall(copy, ptx))
        per_step = (total - before) // (bufs - 1)
        assert per_step and before - bufs * per_step == tiles
    per_tap = cfg["BLOCK_M"] // (64 * (nw // 4)) * (bn // 16)
    wgmma = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{mma_n(geom, cfg)}k16", ptx)
    assert len(wgmma) == bufs * geom.r * geom.s * per_tap
    assert_sixteen_byte_copies(ptx)


def test_diag_blocks_rule():
    """Diagonal blocks: 32-wide WGMMA tiles of groups of 1, 2, 4, 8 or 16 channels in and
    out (ResNeXt's layer1-3 groups, depthwise-like packs) take their halves, not 32-channel
    groups, groups with more outputs than inputs, 16-wide or mma.sync tiles, nor the dgrad
    twin. 64-wide tiles take four, and are offered only where they hold, at 64 positions a
    warpgroup. The WGMMA compile cases take them where they hold."""
    wide = Config(BLOCK_M=128, BLOCK_N=32, ITEMS=4, num_warps=4, num_stages=1, WGMMA=1)
    widest = Config(**{**wide, "BLOCK_N": FLAT_WIDE, "num_warps": 8})
    for cg in (1, 2, 4, 8, 16):
        geom = G(n=2, c=32 * cg, k=32 * cg, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
        assert diag_blocks(geom, wide, False) == 2 and diag_blocks(geom, wide, True) == 1
        assert diag_blocks(geom, widest, False) == 4
        # (groups of one channel are the depthwise families')
        assert cg == 1 or FWD.runnable(geom, widest, H100) is None, cg
    for geom in (G(n=2, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
                 G(n=2, c=64, k=96, g=4, h=15, w=19, r=3, s=2, pad=(0, 2, 1))):
        assert diag_blocks(geom, wide, False) == 1
        assert "diagonal blocks" in FWD.runnable(geom, widest, H100)
    # 64 positions a warpgroup: 128 over 4 warps spill
    l21 = G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    assert "spill" in FWD.runnable(l21, Config(**{**widest, "num_warps": 4}), H100)
    geom = G(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    assert diag_blocks(geom, Config(**{**wide, "BLOCK_N": 16}), False) == 1
    assert diag_blocks(geom, Config(**{k: v for k, v in wide.items() if k != "WGMMA"}),
                       False) == 1
    assert [mma_n(g, c) for g, c, *_ in WGMMA_CASES] == [32, 16, 16, 16, 16, 16, 16]
    # ResNeXt-50 layer2.0 (stride 2, four phase images): the 128-position 4-warp tile's 20
    # copies a thread a step (it spilled with the halves), not its TMA twin, nor 8 warps
    l20 = G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    big = Config(**{**wide, "ITEMS": 14})
    assert copies_per_thread(l20, big) == 20 and diag_blocks(l20, big, False) == 1
    for ok in (Config(**{**big, "TMA": 1}), Config(**{**big, "num_warps": 8})):
        assert copies_per_thread(l20, ok) <= HALVES_MAX_COPIES
        assert diag_blocks(l20, ok, False) == 2
    # the blocks alone in shared memory: a quarter of the 64-wide tile's filter bytes
    full = (FWD.smem_bytes(geom, widest) - 9 * 64 * 16 * 2) + 9 * 64 * 64 * 2
    assert FWD.smem_bytes(geom, widest) < full


def test_input_buffers_rule():
    """A buffer a depth tap for one item a program of a WGMMA tile (3 where three depth taps
    are live; the phase images then at their copied length, which the shared memory
    counts), TMA or not; two for more items, for mma.sync tiles and for two live taps."""
    geom = DEEP_CASES[0][0]
    one = DEEP_CASES[0][1]
    assert input_buffers(geom, one) == 3 and exact_phases(geom, one)
    assert input_buffers(geom, Config(**{**one, "TMA": 1})) == 3
    c = flat_item(geom, one)
    assert c["XP"] == c["XCOPY"] and c["NPH"] == 4
    taps = geom.t * geom.r * geom.s
    assert FWD.smem_bytes(geom, one) == (3 * c["NPH"] * c["XP"] + taps * 16) * 16 * 2
    for other in (Config(**{**one, "ITEMS": 2}),
                  Config(**{k: v for k, v in one.items() if k != "WGMMA"})):
        assert input_buffers(geom, other) == 2 and not exact_phases(geom, other)
        assert flat_item(geom, other)["XP"] & (flat_item(geom, other)["XP"] - 1) == 0
    # ResNeXt3D-50 layer4.0 at batch 1: two of its three depth taps live
    two_taps = trim_dead_taps(G(n=1, c=1024, k=1024, g=32, d=2, h=7, w=7, t=3, r=3, s=3,
                                stride=(2, 2, 2), pad=(1, 1, 1), dims=3))
    assert two_taps.t == 2 and input_buffers(two_taps, Config(**{**one, "BLOCK_N": 32})) == 2
    # offered: some of the family's candidates for the 3D layer take three buffers
    deep = [c for c in FWD.candidates(geom, H100) if input_buffers(geom, c.config) == 3]
    assert deep and all(c.config["ITEMS"] == 1 and c.config.get("WGMMA") for c in deep)


def _flat_wgrad(geom: ConvGeometry, positions: int, x: torch.Tensor,
                dy: torch.Tensor) -> torch.Tensor:
    """The kernel's arithmetic in torch (float64, one group): items of ROWS output rows on
    the WP-wide grid, phase images of XP positions (zero past XNEED and the input up to
    XCOPY, NaN past it: never copied, so never to be read), each tap a product of dY's P
    positions with a phase at its flat shift."""
    c = flat_consts(geom, positions)
    wp, rows, p, need = c["WP"], c["ROWS"], c["P"], c["XNEED"]
    _, sth, stw = geom.stride
    _, dlh, dlw = geom.dilation
    _, oh, ow = geom.out_spatial
    dw = torch.zeros(geom.k, geom.c, geom.r, geom.s, dtype=torch.float64)
    fy = torch.arange(p)
    for n in range(geom.n):
        for oh0 in range(0, oh, rows):
            ydst = torch.zeros(p, geom.k, dtype=torch.float64)
            yp, yq = fy // wp, fy % wp
            ok = (yp < rows) & (yq < ow) & (oh0 + yp < oh)
            ydst[ok] = dy[n, :, oh0 + yp[ok], yq[ok]].T
            phases = {(rho, sig): flat_image(x, n, oh0, geom.pad[1], geom.pad[2], sth, stw,
                                             rho, sig, need, c)
                      for rho in range(sth) for sig in range(stw)}
            for r in range(geom.r):
                for s in range(geom.s):
                    rd, sd = r * dlh, s * dlw
                    shift = (rd // sth) * wp + sd // stw
                    xs = phases[rd % sth, sd % stw][shift:shift + p]
                    assert xs.shape[0] == p, "a tap reads past the phase's XP positions"
                    dw[:, :, r, s] += ydst.T @ xs
    return dw


@pytest.mark.parametrize("geom", [
    G(n=2, c=3, k=4, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    G(n=1, c=3, k=2, h=14, w=13, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=1, c=2, k=3, h=15, w=19, r=3, s=2, pad=(0, 2, 1), dilation=(1, 2, 3)),
    G(n=1, c=2, k=2, h=12, w=11, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
      dilation=(1, 2, 1)),
    G(n=1, c=2, k=2, h=9, w=40, r=1, s=3, stride=(1, 1, 2), pad=(0, 0, 1)),
], ids=["7x7", "stride2", "dilated", "stride3-dil2", "wide"])
@pytest.mark.parametrize("positions", [64, 128])
def test_flat_layout_reproduces_the_weight_gradient(geom, positions):
    """Grid width, rows an item, phase positions read and their allocation (flat_consts)
    give torch's weight gradient when each tap is one shifted slice."""
    if flat_consts(geom, positions)["WP"] > positions:
        pytest.skip("no row fits")
    torch.manual_seed(0)
    x = torch.randn(geom.n, geom.c, geom.h, geom.w, dtype=torch.float64)
    _, oh, ow = geom.out_spatial
    dy = torch.randn(geom.n, geom.k, oh, ow, dtype=torch.float64)
    ref = torch.nn.grad.conv2d_weight(x, (geom.k, geom.c, geom.r, geom.s), dy,
                                      stride=geom.stride[1:], padding=geom.pad[1:],
                                      dilation=geom.dilation[1:])
    got = _flat_wgrad(geom, positions, x, dy)
    assert float((got - ref).norm() / ref.norm()) < 1e-12


@pytest.mark.parametrize("geom", [
    G(n=2, c=3, k=4, d=4, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
    G(n=2, c=2, k=3, d=9, h=8, w=9, t=3, r=3, s=3, stride=(2, 2, 1), pad=(2, 1, 1),
      dilation=(2, 1, 1), dims=3),
], ids=["3x3x3", "depth-stride2-dil2"])
def test_depth_planes_reproduce_the_3d_weight_gradient(geom):
    """In 3D a program reduces depth tap td's plane of taps over items of dY slices
    (image n, output depth od); an item reads input depth od * stride - pad + td *
    dilation, zero where that is padding (``flat_grid.depth_slice``), laid out as in 2D.
    The planes' sums are torch's 3D weight gradient."""
    torch.manual_seed(0)
    x = torch.randn(geom.n, geom.c, geom.d, geom.h, geom.w, dtype=torch.float64)
    od_n, oh, ow = geom.out_spatial
    dy = torch.randn(geom.n, geom.k, od_n, oh, ow, dtype=torch.float64)
    ref = torch.nn.grad.conv3d_weight(x, (geom.k, geom.c, geom.t, geom.r, geom.s), dy,
                                      stride=geom.stride, padding=geom.pad,
                                      dilation=geom.dilation)
    plane = G(n=1, c=geom.c, k=geom.k, h=geom.h, w=geom.w, r=geom.r, s=geom.s,
              stride=(1, *geom.stride[1:]), pad=(0, *geom.pad[1:]),
              dilation=(1, *geom.dilation[1:]))
    got = torch.zeros_like(ref)
    for td in range(geom.t):
        for img in range(geom.n * od_n):
            n, od = divmod(img, od_n)
            di = od * geom.stride[0] - geom.pad[0] + td * geom.dilation[0]
            if 0 <= di < geom.d:
                got[:, :, td] += _flat_wgrad(plane, 64, x[n:n + 1, :, di], dy[n:n + 1, :, od])
    assert float((got - ref).norm() / ref.norm()) < 1e-12


@pytest.mark.parametrize("geom,cfg,takes", [
    # ResNeXt-50 layer2.1 (28 columns: a 32-wide grid, 8 runs a warp), also with 4 warps;
    # layer1.0 (56: a 64-wide grid); ResNeXt3D-50 layer2.1's plane (14 columns: a 16-wide
    # grid); plans the rule does not take: layer3.0's stride 2 (rows 0 and 2 of the filter
    # share a phase), dilation (2, 3) with a 2-column filter
    (G(n=1, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True),
    (G(n=1, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1), True),
    (G(n=1, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True),
    (G(n=1, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True),
    (G(n=1, c=512, k=512, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
    (G(n=1, c=64, k=64, g=4, h=15, w=19, r=3, s=2, pad=(0, 2, 1), dilation=(1, 2, 3)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
], ids=["28-cols", "28-cols-4-warps", "56-cols", "3d-14-cols", "stride2", "dilated"])
def test_row_reuse_sums_every_tap_once(geom, cfg, takes):
    """The row-reuse schedule, replayed in float64 on random phase images and filter tiles:
    each warp's SPAN positions in runs of 16 (accumulator i: positions w * SPAN + 16 i ..),
    each load of ``reuse_plan`` the 16 rows of its phase at run j plus its column shift for
    every warp, added times each using tap's tile to the accumulator it names. Read back
    as ``_places`` maps an accumulator's rows, every position holds the sum over taps of
    its row at the tap's flat shift (the schedule without reuse), and no load reads past
    the XCOPY positions copied. Where the rule takes the plan, on the launch's own flat
    layout; else on the rounded grid (the plan holds there too)."""
    assert row_reuse(geom, cfg) is takes
    c = flat_item(geom, cfg) if takes else flat_consts(geom, cfg["BLOCK_M"], reuse=True)
    wp, p, nph, xcopy = c["WP"], c["P"], c["NPH"], c["XCOPY"]
    assert wp % 16 == 0 and c["ROWS"] >= 1
    nw, bn = cfg["num_warps"], cfg["BLOCK_N"]
    span = p // nw
    _, sth, stw = geom.stride
    _, dlh, dlw = geom.dilation
    torch.manual_seed(0)
    x = torch.randn(nph, xcopy, bn, dtype=torch.float64)
    w = torch.randn(geom.r * geom.s, bn, bn, dtype=torch.float64)
    ref = torch.zeros(p, bn, dtype=torch.float64)
    for t in range(geom.r * geom.s):
        ph, a, b = tap_place(t, geom.s, sth, stw, dlh, dlw)
        ref += x[ph, a * wp + b:a * wp + b + p] @ w[t]
    accs = torch.zeros(nw, span // 16, 16, bn, dtype=torch.float64)
    mmas = 0
    for ph, col, taps, loads in reuse_plan(geom.r, geom.s, sth, stw, dlh, dlw, wp, span // 16):
        for j, uses in loads:
            for warp in range(nw):
                first = warp * span + 16 * j + col
                assert first + 16 <= xcopy, "a load reads past the positions copied"
                rows = x[ph, first:first + 16]
                for i, u in uses:
                    accs[warp, i] += rows @ w[taps[u]]
                    mmas += 1
    assert mmas == geom.r * geom.s * p // 16  # each tap once for every run of every warp
    got = torch.empty_like(ref)
    for i in range(span // 16):
        m = torch.arange(16 * nw)
        got[(m // 16) * span + 16 * i + m % 16] = accs[m // 16, i, m % 16]
    assert float((got - ref).norm() / ref.norm()) < 1e-12
    without, with_reuse = reuse_loads(geom, p, nw)
    assert without == geom.r * geom.s * span // 16 and with_reuse < without


@pytest.mark.parametrize("geom,cfg,takes", [
    (G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), True),
    # four runs a warp on a 64-wide grid (a filter row 4 runs down): a run feeds one tap
    # on average, 36 loads of 36
    (G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
    # stride 2 along W only: a filter column's taps would share a phase, never measured
    (G(n=32, c=256, k=256, g=32, h=28, w=56, r=3, s=3, stride=(1, 1, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
    (G(n=32, c=512, k=512, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
    (G(n=32, c=1024, k=1024, g=32, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=256, BLOCK_N=32, ITEMS=2, num_warps=2, num_stages=1), False),
    # 7 columns: a 16-wide grid holds 4 rows of 64 positions where a 9-wide one holds 7
    (G(n=32, c=512, k=512, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=64, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1), False),
    (G(n=8, c=128, k=128, g=32, d=8, h=28, w=28, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(BLOCK_M=256, BLOCK_N=16, ITEMS=4, num_warps=2, num_stages=1), True),
], ids=["28-cols", "56-cols-4-runs", "stride-w2", "stride2", "32-channels", "7-cols", "3d"])
def test_row_reuse_rule(geom, cfg, takes):
    """Which configs take the row-reuse schedule (call 268: stride 1, 16-channel tiles,
    the item's rows kept by the rounded grid, at most 1 / 1.5 of the runs loaded); where
    they do, the launch's flat layout is the rounded grid's and the items count its rows."""
    assert row_reuse(geom, cfg) is takes
    c = flat_item(geom, cfg)
    assert c == flat_consts(geom, cfg["BLOCK_M"], reuse=takes)
    assert c["ROWS"] == flat_consts(geom, cfg["BLOCK_M"])["ROWS"]
    assert (c["WP"] % 16 == 0) if takes else c["WP"] == flat_consts(geom, cfg["BLOCK_M"])["WP"]
    od, oh, _ = geom.out_spatial
    assert FWD.items(geom, cfg) == geom.n * od * -(-oh // flat_consts(geom, cfg["BLOCK_M"])["ROWS"])
    # explain() names the schedule (the knobs do not)
    note = FWD.schedule(geom, cfg)
    assert (note is not None) is takes
    if takes:
        without, with_reuse = reuse_loads(geom, cfg["BLOCK_M"], cfg["num_warps"])
        assert note.startswith(f"row reuse: a {c['WP']}-wide grid") and \
            f"({with_reuse} of {without} operand loads" in note


def test_explain_names_the_row_reuse_schedule():
    """explain()'s schedule line: the chosen candidate's (the dgrad twin's on the forward
    problem it launches; a forward call's on its geometry without dead taps), none for a
    family with no such rule or a candidate of no registered family."""
    from convdispatch.dispatcher import registry
    from convdispatch.dispatcher.explain import Explanation
    from convdispatch.kernels.base import Candidate

    layer = G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    reuse = Config(BLOCK_M=256, BLOCK_N=16, ITEMS=4, num_warps=2, num_stages=1)
    plain = Config(BLOCK_M=128, BLOCK_N=32, ITEMS=4, num_warps=2, num_stages=1)
    note = registry.schedule(layer, Candidate("grouped_flat", reuse))
    assert note == FWD.schedule(layer, reuse) and "36 of 72" in note
    assert registry.schedule(layer, Candidate("dgrad_grouped_flat", reuse)) == note
    assert registry.schedule(layer, Candidate("grouped_flat", plain)) is None
    packed = Config(BLOCK_M=64, BLOCK_N=32, BLOCK_K=32, num_warps=4, num_stages=3)
    assert registry.schedule(layer, Candidate("grouped_packed", packed)) is None
    assert registry.schedule(layer, Candidate("backward_pair", Config())) is None
    assert registry.schedule(layer, None) is None
    # The WGMMA rules' choices: a 32-wide tile's halves; a buffer a depth tap for one item
    # a program of a 3D conv (DEEP_CASES[1], its groups in halves too)
    wgmma = Config(**{**plain, "num_warps": 4, "WGMMA": 1})
    assert registry.schedule(layer, Candidate("grouped_flat", wgmma)) == (
        "2 diagonal blocks of 16 channels: the filter tiles' zeros neither held nor "
        "multiplied")
    deep, one = DEEP_CASES[1][:2]
    assert registry.schedule(deep, Candidate("grouped_flat", one)).endswith(
        "; 3 input buffers: every depth tap's copies in flight at once")
    # A 1x1 map padded by 1: the forward call runs the live middle tap only (no reuse);
    # the 3x3 filter would take it.
    dead = G(n=32, c=256, k=256, g=32, h=1, w=1, r=3, s=3, pad=(0, 1, 1))
    assert FWD.schedule(dead, reuse) is not None
    assert registry.schedule(dead, Candidate("grouped_flat", reuse)) is None
    shown = Explanation(layer, H100, "model", Candidate("grouped_flat", reuse), "why",
                        schedule=note)
    assert f"schedule : {note}" in str(shown) and shown.to_dict()["schedule"] == note


@pytest.mark.parametrize("geom,items", [
    (G(n=2, c=4, k=6, g=2, d=5, h=6, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3), 2),
    (G(n=1, c=4, k=4, g=2, d=9, h=7, w=6, t=3, r=3, s=3, stride=(2, 1, 1), pad=(2, 1, 0),
       dilation=(2, 1, 1), dims=3), 3),
], ids=["3x3x3-items2", "depth-stride2-dil2-items3"])
def test_forward_steps_sum_every_depth_tap_once(geom, items):
    """``grouped_flat_kernel``'s 3D schedule, replayed: a program walks ITEMS * T steps
    two at a time (step s: item first + s // T, depth tap s % T; the step after the last
    is a dead one), adds each step's plane (a 2D conv of the input slice that depth tap
    reads, zero where that is padding) to the item's accumulator, resets it after the
    epilogue at depth tap T - 1, and stores only live items. Every output pixel is stored
    once and equals torch's 3D conv."""
    torch.manual_seed(0)
    x = torch.randn(geom.n, geom.c, geom.d, geom.h, geom.w, dtype=torch.float64)
    w = torch.randn(geom.k, geom.cg, geom.t, geom.r, geom.s, dtype=torch.float64)
    ref = torch.nn.functional.conv3d(x, w, stride=geom.stride, padding=geom.pad,
                                     dilation=geom.dilation, groups=geom.g)
    od_n, oh, ow = geom.out_spatial
    t = geom.t
    n_items = geom.n * od_n  # one item a slice here: ROWS covers the map
    out = torch.full_like(ref, float("nan"))
    stores = torch.zeros(ref.shape[0], ref.shape[2], dtype=torch.int64)
    for first in range(0, n_items, items):
        end = min(first + items, n_items)
        acc = None
        for it in range(0, items * t, 2):
            for buf in range(2):
                item, td = first + (it + buf) // t, (it + buf) % t
                n, od = divmod(item, od_n)
                di = od * geom.stride[0] - geom.pad[0] + td * geom.dilation[0]
                live = item < end and 0 <= di < geom.d
                plane = torch.zeros(geom.k, oh, ow, dtype=torch.float64)
                if live:
                    plane = torch.nn.functional.conv2d(
                        x[n:n + 1, :, di], w[:, :, td], stride=geom.stride[1:],
                        padding=geom.pad[1:], dilation=geom.dilation[1:], groups=geom.g)[0]
                acc = plane if acc is None else acc + plane
                if td == t - 1:
                    if item < end:
                        out[n, :, od] = acc
                        stores[n, od] += 1
                    acc = torch.zeros_like(acc)
    assert bool((stores == 1).all())
    assert float((out - ref).norm() / ref.norm()) < 1e-12


def test_3d_takes_the_flat_families_only():
    """The flat-grid families and the fused backward kernel take 3D grouped convs (a 3x3x3
    filter: nine taps a plane); the halo wgrad stays 2D; items are slices' rows, and the
    wgrad grid has a program a depth tap's plane (the fused kernel's, one for all)."""
    from convdispatch.dispatcher import registry
    from convdispatch.kernels import backward_grouped_flat

    geom = G(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)
    for name in ("grouped_flat", "dgrad_grouped_flat", "wgrad_grouped_flat"):
        assert registry.family(name).candidates(geom, H100), name
    assert "2D" in registry.family("wgrad_grouped_halo").rejects(geom)
    assert backward_grouped_flat.supports(geom) is None
    fused = registry.family("backward_grouped_flat")
    bcfg = fused.candidates(geom, H100)[0].config
    assert fused.grid(geom, bcfg).mult == backward_grouped_flat.packs(geom)
    assert fused.grid(geom, bcfg).k_steps == backward_grouped_flat.items(geom, bcfg)
    cfg = FWD.candidates(geom, H100)[0].config
    rows = flat_consts(geom, cfg["BLOCK_M"])["ROWS"]
    assert FWD.items(geom, cfg) == 2 * 4 * -(-14 // rows)
    wcfg = FAM.candidates(geom, H100)[0].config
    grid = FAM.grid(geom, wcfg)
    assert grid.mult == -(-32 // FAM.gpt(geom, wcfg)) * 3
    assert grid.k_steps == 2 * 4 * -(-14 // flat_consts(geom, wcfg["BLOCK_M"])["ROWS"])


@pytest.mark.parametrize("family", [FAM, FWD])
def test_copies_cover_every_row_a_tap_reads(family):
    """Every tap's P positions (from its flat shift) lie within the XCOPY positions of its
    phase image that are copied, in power-of-two runs of at least COPY_RUN covering
    exactly [0, XCOPY), within the XP allocated and no fewer than the XNEED that hold
    input, on every config the family offers: the sweep's grouped shapes, and strides,
    dilations and filters where the shifts differ by phase."""
    from convdispatch.kernels.flat_grid import COPY_RUN

    geoms = [G(n=2, c=c, k=c, g=g, h=h, w=h, r=3, s=3, stride=(1, st, st), pad=(0, 1, 1))
             for c, g in ((128, 32), (256, 32), (1024, 32), (64, 8)) for h in (7, 14, 28, 56)
             for st in (1, 2)]
    geoms += [G(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
                dilation=(1, 2, 1)),
              G(n=2, c=64, k=64, g=4, h=15, w=19, r=3, s=2, pad=(0, 2, 1), dilation=(1, 2, 3)),
              G(n=2, c=64, k=64, g=8, h=20, w=31, r=1, s=3, stride=(1, 1, 2), pad=(0, 0, 1))]
    seen = 0
    for geom in geoms:
        _, sth, stw = geom.stride
        _, dlh, dlw = geom.dilation
        for cand in family.candidates(geom, H100):
            c = flat_consts(geom, cand.config["BLOCK_M"])
            reach = max((r * dlh // sth) * c["WP"] + s * dlw // stw + c["P"]
                        for r in range(geom.r) for s in range(geom.s))
            assert reach <= c["XCOPY"] < reach + COPY_RUN
            runs = copy_runs(c["XCOPY"])
            assert [f for f, _ in runs] == [sum(n for _, n in runs[:i]) for i in range(len(runs))]
            assert sum(n for _, n in runs) == c["XCOPY"]
            assert all(n >= COPY_RUN and n & (n - 1) == 0 for _, n in runs)
            assert c["XNEED"] <= c["XCOPY"] <= c["XP"]
            seen += c["XCOPY"] < c["XP"]
    assert seen


def test_never_offered_to_the_interpreter():
    geom = G(n=1, c=32, k=32, g=2, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    assert FAM.candidates(geom, H100)
    assert FAM.candidates(geom, INTERPRETER) == []


@pytest.mark.parametrize("geom,why", [
    (G(n=1, c=32, k=32, h=8, w=8, r=3, s=3), "group"),
    *(case for case in GLUON_RULE_CASES if case[1] != "2D"),
    (G(n=1, c=32, k=32, g=8, h=4, w=300, r=3, s=3, pad=(0, 1, 1)), "hold no row"),
])
@pytest.mark.parametrize("family", ["wgrad_grouped_flat", "grouped_flat", "dgrad_grouped_flat"])
def test_rules(geom, why, family):
    from convdispatch.dispatcher import registry

    assert why in registry.family(family).rejects(geom)


def test_configs_fit_and_items_cover_whole_rows():
    """Offered configs fit the H100's shared memory and hold whole grid rows; a group
    wider than 16 takes the 32-wide tile only; an item over twice the image is not
    offered; a 9-channel group does not pack on 8 bytes."""
    layer4 = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    cands = FAM.candidates(layer4, H100)
    assert cands and {c.config["BLOCK_N"] for c in cands} == {32}
    assert {c.config["BLOCK_M"] for c in cands} == {64}  # 63 positions an image
    assert flat_consts(layer4, 64) == dict(WP=9, ROWS=7, P=64, XNEED=81, XCOPY=96, XP=128,
                                           NPH=1)
    wide = G(n=8, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    assert flat_consts(wide, 64) == dict(WP=29, ROWS=2, P=64, XNEED=87, XCOPY=96, XP=128,
                                         NPH=4)
    for c in FAM.candidates(wide, H100):
        assert c.config["BLOCK_N"] == 16
        assert FAM.smem_bytes(wide, c.config) <= H100.smem_bytes
        steps = FAM.grid(wide, c.config).k_steps
        assert steps >= 4 * c.config["SPLIT_K"] or c.config["SPLIT_K"] == 1
    big = Config(BLOCK_M=256, BLOCK_N=32, SPLIT_K=1, num_warps=4, num_stages=2)
    assert "shared memory" in FAM.hard_ok(wide, big, H100)
    too_wide = G(n=1, c=32, k=32, g=8, h=8, w=100, r=3, s=3, pad=(0, 1, 1))
    small = Config(BLOCK_M=64, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)
    assert "hold no row" in FAM.hard_ok(too_wide, small, H100)
    nine = G(n=1, c=64, k=576, g=64, h=8, w=8, r=3, s=3)  # 9 output channels a group
    assert all("8 bytes" in FAM.hard_ok(nine, c, H100) for c in FAM.configs)




def test_forward_items_and_its_dgrad_twin():
    """ITEMS items a program: the launch grid's pixel axis and the features' programs
    count them; more than two only while the programs still cover the SMs; the dgrad
    twin (reading the filter transposed) offers the same configs but the WGMMA tiles, and
    the same rule."""
    from convdispatch.dispatcher import registry
    from convdispatch.heuristics import features as F

    layer4 = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    cands = FWD.candidates(layer4, H100)
    assert {c.config["ITEMS"] for c in cands} == {2, 4}  # 8: 128 programs for 132 SMs
    assert "ITEMS=8 leaves 128 programs" in FWD.config_ok(
        layer4, Config(BLOCK_M=64, BLOCK_N=32, ITEMS=8, num_warps=4, num_stages=1), H100)
    for cand in cands:
        assert FWD.pixel_tiles(layer4, cand.config) == -(-32 // cand.config["ITEMS"])
    X = F.feature_matrix(layer4, cands, H100)
    programs = X[:, F.FEATURE_NAMES.index("programs")]
    assert list(programs) == [32 * FWD.pixel_tiles(layer4, c.config) for c in cands]
    twin = registry.family("dgrad_grouped_flat")
    assert not twin.interpreted
    assert [c.config for c in twin.candidates(layer4, H100)] == [
        c.config for c in cands if not c.config.get("WGMMA")]
    assert twin.candidates(layer4, INTERPRETER) == []
    assert "multiples of 16" in twin.rejects(G(n=1, c=440, k=440, g=55, h=8, w=8, r=3, s=3))


def test_fill_ladder_offers_the_fewest_items_for_each_fill():
    """Beyond 2, 4 and 8 items a program, a tile is offered, for each fill level k, the
    fewest even items of the ladder that leave at most k programs an SM (call 247: 8 items
    put ResNeXt-50 layer1.0's 896 programs past the 6 an SM holds); none other, none odd;
    the dgrad twin keeps 2, 4 and 8."""
    from convdispatch.dispatcher import registry
    from convdispatch.heuristics import features as F
    from convdispatch.kernels.grouped_flat import FILL_ITEMS, FILL_LEVELS, FLAT_ITEMS

    layer1 = G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
    cands = FWD.candidates(layer1, H100)
    tile = Config(BLOCK_M=128, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1)
    assert FWD.items(layer1, tile) == 896 and FWD.gpt(layer1, tile) == 4
    # 8 packs: k=1 -> at most 16 pixel tiles, so 56 items (16 tiles); k=2 -> at most 33:
    # 28 (32 tiles); 3 -> 49: 20 (45; 19 would be odd); 4 -> 66: 14 (64); 6 -> 99: 10 (90)
    assert FWD.fill_items(layer1, tile, 132) == (10, 14, 20, 28, 56)
    # (16-wide tiles: packs of 4 groups; the WGMMA tiles 32 wide pack 8, a ladder of their own)
    offered = {c.config["ITEMS"] for c in cands
               if c.config["BLOCK_M"] == 128 and c.config["BLOCK_N"] == 16}
    assert offered == {2, 4, 8, 10, 14, 20, 28, 56}
    assert all(i % 2 == 0 for i in {c.config["ITEMS"] for c in cands})
    for cand in cands:
        items = cand.config["ITEMS"]
        programs = FWD.pixel_tiles(layer1, cand.config) * FWD.packs(layer1, cand.config)
        if items not in FLAT_ITEMS:
            k = min(k for k in FILL_LEVELS if programs <= k * 132 or items == FILL_ITEMS[-1])
            smaller = [i for i in FILL_ITEMS if i < items]
            # no smaller ladder value keeps within k an SM
            assert all(FWD.packs(layer1, cand.config) * -(-FWD.items(layer1, cand.config) // i)
                       > k * 132 for i in smaller)
    why = FWD.config_ok(layer1, Config(tile, ITEMS=12), H100)
    assert "fill ladder (10, 14, 20, 28, 56)" in why
    # More packs than k an SM, few items a pack: the fewest items that take a pack's items
    # in one program (3 -> 4), not the ladder's last (64 steps, 61 of them idle)
    wide = G(n=1, c=4096, k=4096, g=1024, h=6, w=6, r=3, s=3, pad=(0, 1, 1))
    small = Config(BLOCK_M=64, BLOCK_N=16, ITEMS=2, num_warps=2, num_stages=1)
    assert FWD.items(wide, small) == 1 and FWD.gpt(wide, small) == 4
    assert FWD.fill_items(wide, small, 132) == (2,)
    # nor 4 or 8 items for a pack of one: the grid of 2, with idle steps
    assert all(c.config["ITEMS"] - 2 < FWD.items(wide, c.config)
               for c in FWD.candidates(wide, H100))
    assert "2 give the same grid (1 items)" in FWD.config_ok(wide, Config(small, ITEMS=4), H100)
    X = F.feature_matrix(layer1, cands, H100)
    programs = X[:, F.FEATURE_NAMES.index("programs")]
    assert list(programs) == [FWD.packs(layer1, c.config) * FWD.pixel_tiles(layer1, c.config)
                              for c in cands]
    twin = registry.family("dgrad_grouped_flat")
    assert {c["ITEMS"] for c in twin.configs} == set(FLAT_ITEMS)


@pytest.mark.parametrize("family", ["wgrad_grouped_flat", "wgrad_grouped_halo", "grouped_flat",
                                    "dgrad_grouped_flat"])
def test_launches_bind_every_argument_by_name(family, monkeypatch):
    """Each Gluon launch (not run: the interpreter cannot) passes every kernel argument
    once, and the strides it passes are those of the tensors, by the kernel's names."""
    from convdispatch.dispatcher import registry
    from convdispatch.dispatcher.launch import empty_grad, launch, launch_grad
    from convdispatch.kernels import (
        dgrad_forward,
        grouped_flat,
        wgrad_grouped_flat,
        wgrad_grouped_halo,
    )

    calls = []
    for mod in (dgrad_forward, grouped_flat, wgrad_grouped_flat, wgrad_grouped_halo):
        monkeypatch.setattr(mod, "launch_kernel", lambda k, grid, *a, **kw: calls.append(
            (k, a, kw)))
    # C != K (16 and 32 channels a group), so that no two tensors share strides
    geom = G(n=2, c=64, k=128, g=4, h=9, w=11, r=3, s=3, pad=(0, 1, 1))
    cand = registry.family(family).candidates(geom, H100)[0]
    fmt = torch.channels_last
    x = torch.randn(2, 64, 9, 11, dtype=torch.float16).to(memory_format=fmt)
    w = torch.randn(128, 16, 3, 3, dtype=torch.float16).to(memory_format=fmt)
    dy = torch.randn(2, 128, 9, 11, dtype=torch.float16).to(memory_format=fmt)
    direction = registry.family(family).direction
    if direction == "forward":
        out = torch.empty_like(dy)
        launch(cand, x, w, None, geom, out)
    else:
        out = empty_grad(direction, x, w)
        launch_grad(cand, geom, dy, x=x, w=w, out=out)
    assert calls
    for kernel, args, kwargs in calls:
        names = kernel.arg_names
        bound = dict(zip(names, args))
        assert not set(bound) & set(kwargs)
        assert set(names) <= set(bound) | set(kwargs) | {"num_warps"}
        if "dw_ptr" in bound:  # wgrad: the strides of dY (n, h, w), X and dW (k, c, r, s)
            assert (bound["syn"], bound["syh"], bound["syw"]) == (
                dy.stride(0), dy.stride(2), dy.stride(3))
            assert (bound["sxn"], bound["sxh"], bound["sxw"]) == (
                x.stride(0), x.stride(2), x.stride(3))
            assert (bound["swk"], bound["swc"], bound["swr"], bound["sws"]) == w.stride()
        else:  # forward / dgrad (a forward conv of dY): input and output strides
            inp = x if direction == "forward" else dy
            assert (bound["sxn"], bound["sxh"], bound["sxw"]) == (
                inp.stride(0), inp.stride(2), inp.stride(3))
            o = bound["out_ptr"]
            assert (bound["syn"], bound["syc"], bound["syh"], bound["syw"]) == (
                o.stride(0), o.stride(1), o.stride(-2), o.stride(-1))


def test_copies_start_on_16_bytes():
    """cp.async sources start 16-byte aligned (an odd start compiles to copies cp.async
    does not have): aligned_pixels keeps an aligned channels_last view, copies the rest."""
    from convdispatch.kernels.gluon_common import aligned_pixels
    from helpers import unaligned

    x = torch.randn(2, 32, 1, 5, 7, dtype=torch.float16).to(
        memory_format=torch.channels_last_3d)
    assert aligned_pixels(x) is x
    for t in (unaligned(x), x.contiguous()):
        got = aligned_pixels(t)
        assert got.data_ptr() % 16 == 0 and got.stride(1) == 1 and torch.equal(got, t)


def test_dgrad_twin_keeps_offsets_32_bit():
    """At a stride the twin writes dX's phases through views of all of dX."""
    from convdispatch.dispatcher import registry

    big = G(n=64, c=256, k=256, g=16, h=400, w=400, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    assert "32-bit" in registry.family("dgrad_grouped_flat").rejects(big)


def test_exact_phase_images():
    """``exact`` holds the phase images at their copied length and the phases at their
    count (probe_exact_phases' layout); without it both are powers of two, as shipped."""
    wide = G(n=8, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    pow2, exact = flat_consts(wide, 128), flat_consts(wide, 128, exact=True)
    assert (pow2["XCOPY"], pow2["XP"], pow2["NPH"]) == (160, 256, 4)
    assert exact == {**pow2, "XP": 160}
    s3x2 = G(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2),
             dilation=(1, 2, 1))
    assert flat_consts(s3x2, 64)["NPH"] == 8
    assert flat_consts(s3x2, 64, exact=True)["NPH"] == 6


def test_one_item_a_program_where_two_leave_sms_idle():
    """ITEMS=1 is offered (every tile) exactly where two items a program make fewer
    programs than SMs (ResNeXt3D-50 layer3.0 at batch 1: 32 packs of two items) and a
    program has depth taps to step through (a 2D one runs two steps either way), never to
    the dgrad twin."""
    small = G(n=1, c=512, k=512, g=32, d=4, h=14, w=14, t=3, r=3, s=3, stride=(2, 2, 2),
              pad=(1, 1, 1), dims=3)
    big = G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    small2d = G(n=1, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    for geom, offered in ((small, True), (big, False), (small2d, False)):
        cands = FWD.candidates(geom, H100)
        ones = [c for c in cands if c.config["ITEMS"] == 1]
        assert bool(ones) is offered
        for c in ones:
            pair = Config(**{**c.config, "ITEMS": 2})
            assert FWD.pixel_tiles(geom, pair) * FWD.packs(geom, pair) < H100.sm_count
            assert Candidate(FWD.name, pair) in cands
            assert FWD.pixel_tiles(geom, c.config) == 2 * FWD.pixel_tiles(geom, pair)
    assert all(c["ITEMS"] != 1 for c in FWD.dgrad_configs)
    one = Config(BLOCK_M=64, BLOCK_N=32, ITEMS=1, num_warps=4, num_stages=1, WGMMA=1)
    assert "one depth tap" in FWD.config_ok(small2d, one, H100)
    big3d = G(n=8, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)
    assert "already cover" in FWD.config_ok(big3d, one, H100)


def test_items_a_program_is_not_specialised():
    """ITEMS_PER_PROGRAM stays a run-time integer: specialised at 1 (ITEMS=1), Triton 3.6
    folded the step loop away and an LLVM assertion failed (call 297); one compile serves
    every ITEMS of a tile."""
    from convdispatch.kernels.grouped_flat import grouped_flat_kernel

    assert HAVE_GLUON
    names = [grouped_flat_kernel.arg_names[a] if isinstance(a, int) else a
             for a in grouped_flat_kernel.do_not_specialize]
    assert "ITEMS_PER_PROGRAM" in names


def test_tma_rules():
    """TMA configs are the WGMMA ones with their phase images copied as boxes: offered
    where the power-of-two grid is at most TMA_MAX_WIDENING times the flat one, a pack
    fills the tile's channels, C channels make 16-byte strides and there are at most four
    phase images; never to the dgrad twin."""
    from convdispatch.kernels.flat_grid import TMA_MAX_WIDENING, tma_rejects

    layer2 = G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
               pad=(0, 1, 1))
    tma = [c for c in FAM_FWD_CANDIDATES(layer2) if c.config.get("TMA")]
    assert tma and all(c.config.get("WGMMA") for c in tma)
    # (Its phase images at their copied rows, a TMA tile may fit where its cp.async twin,
    # at powers of two, does not: 256 positions of 32 channels at stride 2.)
    wide = Config(BLOCK_M=256, BLOCK_N=32, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1)
    assert "shared memory" in FWD.runnable(layer2, wide, H100)
    assert FWD.runnable(layer2, Config(**wide, TMA=1), H100) is None
    c = flat_consts(layer2, 128, tma=True)
    assert (c["WP"], c["ROWS"], c["RA"], c["RB"], c["XP"], c["NPH"]) == (32, 4, 4, 1, 192, 4)
    assert FWD.smem_bytes(layer2, tma[0].config) == (
        (2 * 4 * flat_item(layer2, tma[0].config)["XP"] + 9 * tma[0].config["BLOCK_N"])
        * tma[0].config["BLOCK_N"] * 2)
    # 7x7 at stride 1: a 16-wide grid for 9 columns
    layer4 = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    assert not any(c.config.get("TMA") for c in FAM_FWD_CANDIDATES(layer4))
    assert f"over {TMA_MAX_WIDENING}x" in tma_rejects(layer4, 64, 32, 32)
    assert "next pack" in tma_rejects(layer2, 128, 32, 16)
    odd = G(n=2, c=36, k=36, g=3, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    assert "16 bytes" in tma_rejects(odd, 128, 16, 16)
    s3x2 = G(n=2, c=64, k=64, g=4, h=23, w=17, r=3, s=3, stride=(1, 3, 2), pad=(0, 0, 2))
    assert "4 phase images" in tma_rejects(s3x2, 64, 16, 16)
    assert not any(c.get("TMA") for c in FWD.dgrad_configs)


def FAM_FWD_CANDIDATES(geom):  # noqa: N802 - read as a constant's lookup
    return FWD.candidates(geom, H100)


@pytest.mark.parametrize("geom", [
    G(n=2, c=64, k=64, g=4, h=14, w=13, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
    G(n=2, c=64, k=64, g=4, d=5, h=9, w=8, t=3, r=3, s=3, stride=(2, 1, 1), pad=(1, 1, 1),
      dims=3),
], ids=["2d-s2", "3d"])
def test_phase_descriptors_view_the_phases(geom):
    """``phase_descriptors``' 5D views hold phase (rho, sigma) of the input: grid row i and
    column j (the kernel's box coordinates i + OFF row, j + OFF column) are X[n, c, d,
    i STH + rho - pad_h, j STW + sigma - pad_w], and are inside the view exactly where
    that is inside the input (outside, TMA reads zeros: the padding); boxes of the flat
    layout's RA and RB rows, WP columns, BLOCK channels."""
    from convdispatch.kernels.grouped_flat import phase_descriptors

    x = torch.randn(geom.n, geom.c, geom.d, geom.h, geom.w).to(torch.float16).to(
        memory_format=torch.channels_last_3d)
    cfg = Config(BLOCK_M=64, BLOCK_N=16, ITEMS=2, num_warps=4, num_stages=1, WGMMA=1, TMA=1)
    c = flat_item(geom, cfg)
    descs, offs = phase_descriptors(x, geom, c, 16)
    assert len(descs) == 8 and len(offs) == 4
    _, sth, stw = geom.stride
    _, pdh, pdw = geom.pad
    for ph in range(sth * stw):
        rho, sig = divmod(ph, stw)
        da, db = descs[2 * ph], descs[2 * ph + 1]
        assert da.block_shape == [1, 1, c["RA"], c["WP"], 16]
        assert db.block_shape == [1, 1, max(c["RB"], 1), c["WP"], 16]
        view = da.base
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        r0, c0 = offs[ph]
        for i in range(-1, geom.h // sth + 2):
            for j in range(-1, geom.w // stw + 2):
                ih, iw = i * sth + rho - pdh, j * stw + sig - pdw
                inside = 0 <= i + r0 < view.shape[2] and 0 <= j + c0 < view.shape[3]
                assert inside == (0 <= ih < geom.h and 0 <= iw < geom.w), (ph, i, j)
                if inside:
                    assert torch.equal(view[:, :, i + r0, j + c0, :],
                                       x[:, :, :, ih, iw].permute(0, 2, 1))


def test_tma_configs_are_inert_until_swept(tmp_path):
    """A model saved before its schema recorded its training's config keys (the legacy
    keys, no TMA) never saw a TMA config nor a 64-wide grouped_flat one
    (``NEW_SINCE_LEGACY_FAMILY_VALUES``), so it ranks every such candidate last and
    chooses as before; the sweep offers them (its rows are what a retrained model learns
    them from, as the shipped one did)."""
    import numpy as np
    from convdispatch.dispatcher import registry
    from convdispatch.dispatcher.model_chooser import ModelChooser
    from convdispatch.heuristics.model_store import load_model
    from convdispatch.kernels.dead_taps import trim_dead_taps

    model = load_model(legacy_model_copy(SHIPPED_H100, tmp_path / "legacy"))
    layer2 = G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
               pad=(0, 1, 1))
    cands = registry.candidates(trim_dead_taps(layer2), H100)
    def new(c):
        return c.config.get("TMA") or (c.family == "grouped_flat" and c.config["BLOCK_N"] == 64)

    tma = [c for c in cands if new(c)]
    assert any(c.config["BLOCK_N"] == 64 and not c.config.get("TMA") for c in tma)
    assert tma and model.unseen(tma) == [True] * len(tma)
    assert not any(model.unseen([c for c in cands if not new(c)]))
    ranked = model.rank(layer2, cands, H100)
    assert all(np.isinf(s) for c, s in ranked if new(c))
    assert not new(ModelChooser(model).choose(layer2, cands, H100).candidate)
    rest = [c for c in cands if not new(c)]
    assert [c.id for c, _ in model.rank(layer2, rest, H100)] == [
        c.id for c, _ in ranked if not new(c)]
    assert not any(load_model(SHIPPED_H100).unseen(tma))
