"""All kernel families, in registry order (each names its direction: forward, dgrad, wgrad,
backward)."""

from __future__ import annotations

from .backward_grouped_flat import BackwardGroupedFlatFamily
from .backward_pair import BackwardPairFamily
from .base import KernelFamily
from .depthwise import DepthwiseFamily
from .depthwise_rows import DepthwiseRowsFamily
from .depthwise_span import DepthwiseSpanFamily
from .dgrad_depthwise_span import DgradDepthwiseSpanFamily
from .dgrad_forward import FORWARD_DGRAD_FAMILIES
from .dgrad_gemm import DgradGemmFamily
from .dgrad_stem import DgradStemFamily
from .grad_direct import DgradDirectFamily, WgradDirectFamily
from .grad_packed import DgradPackedFamily, WgradPackedFamily
from .grouped_direct import GroupedDirectFamily
from .grouped_flat import GroupedFlatFamily
from .grouped_gemm import GroupedGemmFamily
from .grouped_packed import GroupedPackedFamily
from .grouped_rows import GroupedRowsFamily
from .implicit_gemm import ImplicitGemmFamily
from .implicit_gemm_tma import ImplicitGemmTmaFamily, ImplicitGemmTmaPersistentFamily
from .pointwise import PointwiseFamily
from .pointwise_tma import PointwiseTmaFamily, PointwiseTmaPersistentFamily
from .splitk import SplitKFamily
from .stem import StemFamily
from .wgrad_depthwise_rows import WgradDepthwiseRowsFamily
from .wgrad_depthwise_span import WgradDepthwiseSpanFamily
from .wgrad_depthwise_taps import WgradDepthwiseTapsFamily
from .wgrad_gemm import WgradGemmFamily
from .wgrad_grouped_flat import WgradGroupedFlatFamily
from .wgrad_grouped_halo import WgradGroupedHaloFamily
from .wgrad_grouped_taps import WgradGroupedTapsFamily
from .wgrad_implicit_gemm_tma import WgradImplicitGemmTmaFamily
from .wgrad_pointwise_tma import WgradPointwiseTmaFamily
from .wgrad_staged_tma import WgradStagedTmaFamily
from .wgrad_stem import WgradStemFamily

FAMILIES: list[KernelFamily] = [
    ImplicitGemmFamily(),
    PointwiseFamily(),
    PointwiseTmaFamily(),
    ImplicitGemmTmaFamily(),
    PointwiseTmaPersistentFamily(),
    ImplicitGemmTmaPersistentFamily(),
    GroupedGemmFamily(),
    GroupedPackedFamily(),
    GroupedRowsFamily(),
    GroupedFlatFamily(),
    DepthwiseFamily(),
    DepthwiseRowsFamily(),
    DepthwiseSpanFamily(),
    GroupedDirectFamily(),
    StemFamily(),
    SplitKFamily(),
    DgradGemmFamily(),
    DgradPackedFamily(),
    DgradDirectFamily(),
    DgradStemFamily(),
    *FORWARD_DGRAD_FAMILIES,
    DgradDepthwiseSpanFamily(),
    WgradGemmFamily(),
    WgradPackedFamily(),
    WgradDirectFamily(),
    WgradPointwiseTmaFamily(),
    WgradImplicitGemmTmaFamily(),
    WgradStemFamily(),
    WgradDepthwiseTapsFamily(),
    WgradDepthwiseRowsFamily(),
    WgradDepthwiseSpanFamily(),
    WgradGroupedTapsFamily(),
    WgradGroupedHaloFamily(),
    WgradGroupedFlatFamily(),
    WgradStagedTmaFamily(),
    BackwardGroupedFlatFamily(),
    BackwardPairFamily(),
]
