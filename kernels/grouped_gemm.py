"""Grouped convolution as one launch of the implicit GEMM: program axis 1 is the group.

Per-group GEMMs are narrow (ResNeXt: 4..32 channels a group), so this family
declares small N and K tiles that the dense family does not.
"""

from __future__ import annotations

from .base import Config, ConvCall, KernelFamily
from .implicit_gemm import gemm_smem, launch_igemm, make_configs, tiles_fit

GROUPED_TILES = (
    (32, 16, 16, 2, 3), (32, 32, 16, 2, 3), (32, 32, 32, 4, 3), (32, 64, 32, 4, 3),
    (64, 16, 16, 4, 3), (64, 16, 32, 4, 3), (64, 32, 16, 4, 3), (64, 32, 32, 4, 3),
    (64, 32, 32, 4, 4), (64, 64, 32, 4, 3), (64, 64, 64, 4, 3), (64, 128, 32, 4, 3),
    (128, 16, 16, 4, 3), (128, 16, 32, 4, 3), (128, 32, 16, 4, 3), (128, 32, 32, 4, 3),
    (128, 32, 32, 4, 4), (128, 64, 32, 4, 3), (128, 64, 64, 8, 3), (128, 128, 32, 8, 3),
    (256, 16, 16, 4, 3), (256, 32, 16, 8, 3), (256, 32, 32, 8, 3), (256, 64, 32, 8, 3),
)


class GroupedGemmFamily(KernelFamily):
    name = "grouped_gemm"
    summary = "implicit GEMM with all groups in one launch, narrow per-group tiles"
    configs = make_configs(GROUPED_TILES, GROUP_M=8)

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "not a grouped convolution"
        if geom.cg < 4:
            return f"{geom.cg} input channels per group: too few for a matrix-unit tile"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        return tiles_fit(geom, cfg) or super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_igemm(call, cfg)
