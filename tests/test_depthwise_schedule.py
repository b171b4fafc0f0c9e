"""How the depthwise kernels meet memory, checked on their sm_90 compile (no GPU needed).

The interpreter cannot see it, and it decides this memory-bound kernel's speed:
``depthwise_span`` issues every load before its first store. A store keeps later loads
from being hoisted above it, which cost a memory round trip an output row (call 105:
10-16% of the time of MobileNetV2's stride-1 layers at batch 32).
"""

from __future__ import annotations

import pytest
from convdispatch.kernels.depthwise_span import loads_first
from convdispatch.kernels.geometry import ConvGeometry
from helpers import sm90_compile

SPAN = dict(syc=1, src=1, sws=1, sxc=1, MULT=1, KR=3, KS=3, ACT=1, HAS_BIAS=True, INT64=False,
            LOADS_FIRST=True,
            KTOT=144, BLOCK=128, DH=1)


@pytest.mark.parametrize("rows,sh,res", [(4, 1, False), (2, 2, True)])
def test_span_loads_before_it_stores(rows, sh, res):
    got = sm90_compile("convdispatch.kernels.depthwise_span", "depthwise_span_kernel",
                           dict(SPAN, ROWS=rows, SH=sh, HAS_RES=res), {}, num_warps=1,
                           num_stages=1, divisible=("syn", "syh", "syw", "sxn", "sxh",
                                                    "sxw", "srn", "srh", "srw"))
    order = got["global_memory_order"]
    assert order.count("st.global") >= rows, order
    first_store = order.index("st.global")
    input_rows = (rows - 1) * sh + 3
    assert order[:first_store].count("ld.global") >= input_rows * 3, order
    assert "ld.global" not in order[first_store:], order


def test_loads_first_where_the_window_fits_in_registers():
    """MobileNetV2's 3x3 layers in fp16 load first; the 5x5 stride-2 fp32 and 7x7 windows
    that spilled under it (calls 106-107) keep the interleaved schedule."""
    def dw(r, stride, dtype):
        return ConvGeometry(n=1, c=144, k=144, g=144, h=56, w=56, r=r, s=r,
                            stride=(1, stride, stride), pad=(0, r // 2, r // 2), dtype=dtype)

    assert loads_first(dw(3, 1, "float16"), rows=8, block=128, warps=1)
    assert loads_first(dw(3, 2, "float16"), rows=4, block=512, warps=4)
    assert not loads_first(dw(3, 1, "float16"), rows=16, block=128, warps=1)
    assert not loads_first(dw(3, 1, "float16"), rows=4, block=256, warps=1)  # 8 a thread
    assert not loads_first(dw(5, 2, "float32"), rows=2, block=128, warps=1)
    assert not loads_first(dw(7, 1, "float16"), rows=2, block=128, warps=1)
