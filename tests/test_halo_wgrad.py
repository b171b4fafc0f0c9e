"""wgrad_grouped_halo (a Gluon kernel) on the CPU: the interpreter cannot run Gluon, so
these tests compile the kernel for sm_90 (Triton's own ptxas, no GPU needed) and check its
rules; tests/test_gpu_grad.py runs it against torch on the GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from convdispatch.dispatcher import registry
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, KNOWN
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.wgrad_grouped_halo import (
    HAVE_GLUON,
    WgradGroupedHaloFamily,
    halo_consts,
)
from helpers import GLUON_RULE_CASES, gluon_wgrad_ptx_sm90, run_without_interpreter
from helpers import gluon_geom as G

pytestmark = pytest.mark.skipif(not HAVE_GLUON, reason="this Triton has no Gluon")

FAM = WgradGroupedHaloFamily()
H100 = KNOWN["h100"]


def ptx_sm90(geom: ConvGeometry, cfg: Config) -> tuple[str, int]:
    """The kernel's PTX for ``cfg`` on ``geom`` and its shared memory in bytes."""
    from convdispatch.kernels.wgrad_grouped_halo import wgrad_grouped_halo_kernel as k

    rows = cfg["BLOCK_M"] // cfg["TILE_W"]
    cons = dict(CG=geom.cg, KG=geom.kg, GPT=FAM.gpt(geom, cfg), R=geom.r, S=geom.s,
                ROWS=rows, TILE_W=cfg["TILE_W"], BLOCK=cfg["BLOCK_N"],
                **halo_consts(geom, rows, cfg["num_warps"]), STH=geom.stride[1],
                DLH=geom.dilation[1], SPLIT=cfg["SPLIT_K"] > 1)
    return gluon_wgrad_ptx_sm90(k, geom.dtype, cons, cfg["num_warps"])


# Compiled in a fresh process (helpers.run_without_interpreter): one full CPU run of the
# suite, compiling in-process after interpreted kernels, saw the Gluon frontend fail in all
# four cases on a tensor product ("'ir.value' object has no attribute 'dtype'").
_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import test_halo_wgrad as T
geom, cfg, _ = T.COMPILE_CASES[int(sys.argv[2])]
ptx, shared = T.ptx_sm90(geom, cfg)
open(sys.argv[3], "w").write(ptx)
print(shared)
"""


def compile_sm90(case: int, tmp_path) -> str:
    """``ptx_sm90`` of COMPILE_CASES[case], in a child process; checks its shared memory."""
    geom, cfg, _ = COMPILE_CASES[case]
    out = tmp_path / "kernel.ptx"
    shared = int(run_without_interpreter(_CHILD, str(Path(__file__).parent), str(case),
                                         str(out), timeout=240).split()[-1])
    assert shared <= H100.smem_bytes
    assert shared >= FAM.smem_bytes(geom, cfg)
    return out.read_text()


COMPILE_CASES = [
    # 16-channel groups, split; 4-channel groups four a tile; 32-channel groups, 4 warps;
    # 1 input and 4 output channels a group (input runs of 4 channels: 8-byte copies)
    (G(n=2, c=64, k=64, g=4, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, TILE_W=16, BLOCK_N=16, SPLIT_K=8, num_warps=2, num_stages=2),
     {"0x10"}),
    (G(n=2, c=64, k=64, g=16, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="bfloat16"),
     Config(BLOCK_M=64, TILE_W=32, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2),
     {"0x10"}),
    (G(n=2, c=128, k=128, g=4, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=64, TILE_W=16, BLOCK_N=32, SPLIT_K=4, num_warps=4, num_stages=2),
     {"0x10"}),
    (G(n=2, c=32, k=128, g=32, h=12, w=12, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=256, TILE_W=16, BLOCK_N=16, SPLIT_K=4, num_warps=2, num_stages=2),
     {"0x8", "0x10"}),
]


@pytest.mark.parametrize("case", range(len(COMPILE_CASES)),
                         ids=["cg16-split", "cg4-bf16", "cg32-s2-4warps", "cg1-kg4-rows16"])
def test_kernel_compiles_for_sm90(case, tmp_path):
    """Every tap row is one mma.sync pair from ldmatrix operands; every copy an 8- or
    16-byte cp.async (a 2-byte one does not compile: the rule keeps packs on 8 bytes)."""
    geom, cfg, copies = COMPILE_CASES[case]
    assert FAM.runnable(geom, cfg, H100) is None
    ptx = compile_sm90(case, tmp_path)
    rows = cfg["BLOCK_M"] // cfg["TILE_W"]
    # two items an iteration, each: rows x taps dots, a warp's share of one an m16n8k16
    # per 16 rows, 8 columns and 16 pixels (a row of TILE_W pixels)
    bn = cfg["BLOCK_N"]
    per_dot = (bn // 16) * (bn // 8 // cfg["num_warps"]) * (cfg["TILE_W"] // 16)
    assert 2 * rows * geom.r * geom.s * per_dot == len(
        re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx))
    assert "ldmatrix" in ptx
    sizes = set(re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\w+)", ptx))
    assert sizes == copies, sizes


def test_the_only_families_the_interpreter_cannot_run():
    """A new Gluon family needs tests like these (this file, test_flat_grid.py,
    test_backward_grouped_flat.py): the interpreter-run suites skip it."""
    assert sorted(f.name for f in registry.families(None) if not f.interpreted) == sorted([
        FAM.name, "wgrad_grouped_flat", "grouped_flat", "dgrad_grouped_flat",
        "backward_grouped_flat"])


def test_never_offered_to_the_interpreter():
    geom = G(n=1, c=32, k=32, g=2, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    assert FAM.candidates(geom, H100)
    assert FAM.candidates(geom, INTERPRETER) == []
    assert "interpreter" in FAM.hard_ok(geom, FAM.configs[0], INTERPRETER)
    cands = registry.candidates(geom, INTERPRETER, "wgrad")
    assert cands and "wgrad_grouped_halo" not in {c.family for c in cands}


@pytest.mark.parametrize("geom,why", [
    (G(n=1, c=32, k=32, h=8, w=8, r=3, s=3), "grouped filters"), *GLUON_RULE_CASES])
def test_rules(geom, why):
    assert why in FAM.rejects(geom)


def test_other_triton_releases_leave_it_to_the_triton_families(monkeypatch):
    """Every Gluon family (kernels/gluon_common.py) steps aside on an unchecked release."""
    from convdispatch.kernels import gluon_common

    geom = G(n=1, c=32, k=32, g=2, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    gluon = [f for f in registry.families(None) if not f.interpreted]
    assert len(gluon) == 5 and all(f.rejects(geom) is None for f in gluon)
    monkeypatch.setattr(gluon_common, "TRITON_RELEASE", (3, 9))
    for fam in gluon:
        assert "checked on Triton" in fam.rejects(geom), fam.name
        assert fam.candidates(geom, H100) == []


def test_configs_fit_and_split_rules():
    """Each offered config fits the H100's shared memory, packs whole groups and keeps
    the mma warps within the tile's column eighths; a group wider than 16 takes the
    32-wide tile only."""
    geom = G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1))
    cands = FAM.candidates(geom, H100)
    assert cands and all(c.config["BLOCK_N"] == 32 for c in cands)
    small = G(n=32, c=512, k=512, g=32, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
    for c in FAM.candidates(small, H100):
        assert c.config["BLOCK_N"] == 16 and c.config["num_warps"] <= 2
        assert FAM.smem_bytes(small, c.config) <= H100.smem_bytes
        steps = FAM.grid(small, c.config).k_steps
        assert steps >= 4 * c.config["SPLIT_K"] or c.config["SPLIT_K"] == 1
    big = Config(BLOCK_M=256, TILE_W=32, BLOCK_N=32, SPLIT_K=1, num_warps=4, num_stages=2)
    assert "shared memory" in FAM.hard_ok(small, big, H100)
    nine = G(n=1, c=64, k=576, g=64, h=8, w=8, r=3, s=3)  # 9 output channels a group
    assert all("8 bytes" in FAM.hard_ok(nine, c, H100) for c in FAM.configs)
    forced = Candidate("wgrad_grouped_halo", FAM.configs[0])
    assert registry.family(forced.family) is not None
