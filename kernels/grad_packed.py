"""Gradients of few-channel grouped convolutions with whole groups packed into one MMA tile.

ResNeXt's 3x3 layers have 4 to 32 channels a group: a per-group GEMM tile would be
mostly padding and FMA kernels are bound by loads. These families run the dgrad /
wgrad implicit GEMMs (``dgrad_gemm``, ``wgrad_gemm``) over ``GPT`` consecutive groups
at once, as ``grouped_packed`` does forward:

- dgrad_packed: a program's BLOCK_N input channels are GPT = BLOCK_N / (C/G) whole
  groups; the reduction runs over their GPT x K/G output channels with a block-diagonal
  weight tile (other groups' entries masked to zero).
- wgrad_packed: a program's BLOCK_M x BLOCK_N tile covers GPT = min(BLOCK_M / (K/G),
  BLOCK_N / (C/G)) groups; only the tile's block-diagonal part is stored.

The tensor cores multiply the zero blocks too; they are fast enough that this beats
loading each operand per group.
"""

from __future__ import annotations

from .base import Config, GradCall, KernelFamily, tile_fits
from .dgrad_gemm import DgradGemmFamily, dgrad_grid, launch_dgrad, phase_rows
from .grad_common import GradGrid
from .wgrad_gemm import WgradGemmFamily, launch_wgrad, split_ok, wgrad_grid

# Groups of at most this many channels are worth packing.
MAX_PACKED_CHANNELS = 32


def _too_wide(geom) -> str | None:
    if max(geom.cg, geom.kg) > MAX_PACKED_CHANNELS:
        return (f"{geom.cg} in / {geom.kg} out channels a group: more than "
                f"{MAX_PACKED_CHANNELS}, a group fills a tile by itself")
    return None


def _thin(geom) -> str | None:
    if geom.g == 1:
        return "dense convolutions have no groups to pack"
    return _too_wide(geom)


def few_channel_groups_rejects(geom) -> str | None:
    """Why the wgrad families that pack whole groups of several channels block-diagonally
    in an MMA tile do not take ``geom`` (depthwise filters have their own)."""
    if geom.g == 1 or geom.cg == 1 and geom.kg == 1:
        return "grouped filters of several channels a group only"
    return _too_wide(geom)


def square_pack_gpt(geom, block: int) -> int:
    """Whole groups a block x block tile (output x input channels) packs."""
    return max(1, min(block // max(geom.kg, geom.cg), geom.g))


def square_pack_rejects(geom, block: int) -> str | None:
    """Why a block x block tile cannot hold a whole group of ``geom``."""
    if block < max(geom.cg, geom.kg):
        return (f"BLOCK_N={block} splits a group of {geom.cg} in / {geom.kg} out "
                "channels")
    return None


def dgrad_gpt(geom, cfg: Config) -> int:
    return max(1, min(cfg["BLOCK_N"] // geom.cg, geom.g))


def wgrad_gpt(geom, cfg: Config) -> int:
    return max(1, min(cfg["BLOCK_M"] // geom.kg, cfg["BLOCK_N"] // geom.cg, geom.g))


class DgradPackedFamily(DgradGemmFamily):
    name = "dgrad_packed"
    summary = "gradient of the input for few-channel groups: whole groups packed in a tile"

    def supports(self, geom) -> str | None:
        return _thin(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        return dgrad_grid(geom, cfg, dgrad_gpt(geom, cfg))

    def config_ok(self, geom, cfg, device) -> str | None:
        gpt = dgrad_gpt(geom, cfg)
        if gpt < 2:
            return f"BLOCK_N={cfg['BLOCK_N']} holds fewer than two groups of {geom.cg} channels"
        if cfg["BLOCK_N"] > max(16, 2 * gpt * geom.cg):
            return f"BLOCK_N={cfg['BLOCK_N']} is over twice the {gpt} groups it packs"
        m = phase_rows(geom)[0]
        if not tile_fits(cfg["BLOCK_M"], m, 64):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {m} input pixels of a phase"
        if not tile_fits(cfg["BLOCK_K"], gpt * geom.kg, 16):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {gpt * geom.kg} packed output channels"
        return KernelFamily.config_ok(self, geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_dgrad(call, cfg, dgrad_gpt(call.geom, cfg))


class WgradPackedFamily(WgradGemmFamily):
    name = "wgrad_packed"
    summary = "gradient of the weight for few-channel groups: whole groups packed in a tile"

    def supports(self, geom) -> str | None:
        return _thin(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        return wgrad_grid(geom, cfg, wgrad_gpt(geom, cfg))

    def config_ok(self, geom, cfg, device) -> str | None:
        gpt = wgrad_gpt(geom, cfg)
        if gpt < 2:
            return (f"a {cfg['BLOCK_M']}x{cfg['BLOCK_N']} tile holds fewer than two groups of "
                    f"{geom.kg}x{geom.cg} channels")
        if cfg["BLOCK_M"] > 2 * gpt * geom.kg or cfg["BLOCK_N"] > 2 * gpt * geom.cg:
            return f"the tile is over twice the {gpt} groups it packs"
        return split_ok(geom, cfg, device, self.grid(geom, cfg)) or KernelFamily.config_ok(
            self, geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_wgrad(call, cfg, wgrad_gpt(call.geom, cfg))
