"""All kernel families, in registry order."""

from __future__ import annotations

from .base import KernelFamily
from .depthwise import DepthwiseFamily
from .grouped_direct import GroupedDirectFamily
from .grouped_gemm import GroupedGemmFamily
from .grouped_packed import GroupedPackedFamily
from .implicit_gemm import ImplicitGemmFamily
from .pointwise import PointwiseFamily
from .splitk import SplitKFamily
from .stem import StemFamily

FAMILIES: list[KernelFamily] = [
    ImplicitGemmFamily(),
    PointwiseFamily(),
    GroupedGemmFamily(),
    GroupedPackedFamily(),
    DepthwiseFamily(),
    GroupedDirectFamily(),
    StemFamily(),
    SplitKFamily(),
]
