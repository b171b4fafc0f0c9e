"""Conv layers of real networks, derived by walking each network's structure.

Layer names follow the module names of the reference implementations
(torchvision, diffusers, milesial/Pytorch-UNet, kenshohara/3D-ResNets-PyTorch)
so a row can be traced back to its module. Every geometry is at batch 1; the
problem sets in ``NETWORK_SETS`` add their batch sizes. Transposed convs
(U-Net up-sampling) are not forward convolutions and are not listed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...kernels.geometry import ConvGeometry


@dataclass(frozen=True)
class Layer:
    """A conv of a network at batch 1; ``count`` identical convs were merged into it."""

    name: str
    geom: ConvGeometry
    count: int = 1


def _geom_key(geom: ConvGeometry) -> tuple:
    return geom.key()


def _axes(v: int | Sequence[int], dims: int) -> tuple[int, ...]:
    t = (v,) * dims if isinstance(v, int) else tuple(int(x) for x in v)
    if len(t) != dims:
        raise ValueError(f"expected {dims} values, got {v!r}")
    return t


def pool_out(size: Sequence[int], kernel: int, stride: int, pad: int = 0) -> tuple[int, ...]:
    """Spatial size after a max/avg pool (floor mode)."""
    return tuple((x + 2 * pad - kernel) // stride + 1 for x in size)


class NetBuilder:
    """Collects a network's convs in order, merging identical geometries (first name kept)."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._layers: dict[tuple, Layer] = {}

    def conv(self, name: str, c: int, k: int, size: Sequence[int], kernel, stride=1,
             pad=None, groups: int = 1, dilation=1) -> tuple[int, ...]:
        """Record a conv on a (h, w) or (d, h, w) input; return the output size.

        ``pad=None`` means 'same' padding for odd kernels: dilation * (kernel - 1) // 2.
        """
        dims = len(size)
        ker = _axes(kernel, dims)
        st = _axes(stride, dims)
        dil = _axes(dilation, dims)
        pd = tuple(dl * (kk - 1) // 2 for kk, dl in zip(ker, dil)) if pad is None \
            else _axes(pad, dims)
        # A 2D conv is a 3D conv with depth 1 (see kernels/geometry.py).
        lift = (lambda t, fill: t) if dims == 3 else (lambda t, fill: (fill, *t))
        d, h, w = lift(tuple(size), 1)
        t, r, s = lift(ker, 1)
        geom = ConvGeometry(n=1, c=c, k=k, h=h, w=w, r=r, s=s, g=groups, d=d, t=t,
                            stride=lift(st, 1), pad=lift(pd, 0), dilation=lift(dil, 1),
                            dims=dims)
        key = _geom_key(geom)
        old = self._layers.get(key)
        full = self.prefix + name
        self._layers[key] = Layer(full, geom) if old is None else \
            Layer(old.name, old.geom, old.count + 1)
        out = geom.out_spatial
        return out if dims == 3 else out[1:]

    def layers(self) -> list[Layer]:
        return list(self._layers.values())


# -- ResNet family -----------------------------------------------------------

def _bottlenecks(b: NetBuilder, size, inplanes: int, stages, groups: int = 1,
                 conv_suffix: str = "") -> tuple[tuple[int, ...], int]:
    """Bottleneck stages: (mid, out, blocks, stride); stride on the 3x3 conv (ResNet v1.5)."""
    for i, (mid, out, blocks, stride) in enumerate(stages):
        for j in range(blocks):
            st = stride if j == 0 else 1
            p = f"layer{i + 1}.{j}"
            b.conv(f"{p}.conv1{conv_suffix}", inplanes, mid, size, 1)
            new = b.conv(f"{p}.conv2{conv_suffix}", mid, mid, size, 3, stride=st, groups=groups)
            b.conv(f"{p}.conv3{conv_suffix}", mid, out, new, 1)
            if j == 0 and (st != 1 or inplanes != out):
                b.conv(f"{p}.downsample.0", inplanes, out, size, 1, stride=st)
            inplanes, size = out, new
    return size, inplanes


def _basic_blocks(b: NetBuilder, size, inplanes: int, stages,
                  conv_suffix: str = "") -> tuple[tuple[int, ...], int]:
    """BasicBlock stages: (planes, blocks, stride)."""
    for i, (planes, blocks, stride) in enumerate(stages):
        for j in range(blocks):
            st = stride if j == 0 else 1
            p = f"layer{i + 1}.{j}"
            new = b.conv(f"{p}.conv1{conv_suffix}", inplanes, planes, size, 3, stride=st)
            b.conv(f"{p}.conv2{conv_suffix}", planes, planes, new, 3)
            if j == 0 and (st != 1 or inplanes != planes):
                b.conv(f"{p}.downsample.0", inplanes, planes, size, 1, stride=st)
            inplanes, size = planes, new
    return size, inplanes


RESNET50_BLOCKS = (3, 4, 6, 3)
RESNET101_BLOCKS = (3, 4, 23, 3)


def _resnet_like(b: NetBuilder, image: int, groups: int, width_per_group: int,
                 blocks=RESNET50_BLOCKS) -> None:
    """torchvision ResNet / ResNeXt with bottleneck blocks (50: 3, 4, 6, 3; 101: 3, 4, 23, 3)."""
    size = b.conv("conv1", 3, 64, (image, image), 7, stride=2, pad=3)
    size = pool_out(size, 3, 2, 1)
    stages = [(planes * width_per_group // 64 * groups, planes * 4, n, 1 if i == 0 else 2)
              for i, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks))]
    _bottlenecks(b, size, 64, stages, groups)


def resnet50(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    _resnet_like(b, image, groups=1, width_per_group=64)
    return b.layers()


def resnext50_32x4d(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    _resnet_like(b, image, groups=32, width_per_group=4)
    return b.layers()


# torchvision's ResNeXt-101 variants: groups, width per group.
RESNEXT101 = {"resnext101_32x8d": (32, 8), "resnext101_64x4d": (64, 4)}


def resnext101_32x8d(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    _resnet_like(b, image, *RESNEXT101["resnext101_32x8d"], RESNET101_BLOCKS)
    return b.layers()


def resnext101_64x4d(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    _resnet_like(b, image, *RESNEXT101["resnext101_64x4d"], RESNET101_BLOCKS)
    return b.layers()


def resnext101_grouped() -> list[Layer]:
    """The grouped 3x3 convs of ResNeXt-101 32x8d (8 to 64 channels a group) and 64x4d
    (4 to 32): ResNeXt-50's kind of layer at other widths and group counts, for
    training (ResNeXt-50 is holdout). Their 1x1 convs are dense shapes of the
    ResNet family and are left out."""
    b = NetBuilder()
    for name, (groups, width) in RESNEXT101.items():
        b.prefix = name + "."
        _resnet_like(b, 224, groups, width, RESNET101_BLOCKS)
    return [layer for layer in b.layers() if layer.geom.g > 1]


# -- MobileNetV2 and VGG -----------------------------------------------------

# torchvision's inverted-residual settings: expansion t, channels c, repeats n, stride s.
_MBV2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                  (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def mobilenet_v2(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    size = b.conv("features.0.0", 3, 32, (image, image), 3, stride=2)
    inp, idx = 32, 1
    for t, c, n, s in _MBV2_SETTINGS:
        for j in range(n):
            hidden = inp * t
            p = f"features.{idx}.conv"
            sub = 0
            if t != 1:
                b.conv(f"{p}.0.0", inp, hidden, size, 1)
                sub = 1
            size = b.conv(f"{p}.{sub}.0", hidden, hidden, size, 3, stride=s if j == 0 else 1,
                          groups=hidden)
            b.conv(f"{p}.{sub + 1}", hidden, c, size, 1)
            inp, idx = c, idx + 1
    b.conv(f"features.{idx}.0", inp, 1280, size, 1)
    return b.layers()


_VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M")


def vgg16(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    size, c = (image, image), 3
    for idx, item in _vgg_indices(_VGG16_CFG):
        if item == "M":
            size = pool_out(size, 2, 2)
        else:
            size = b.conv(f"features.{idx}", c, item, size, 3)
            c = item
    return b.layers()


def _vgg_indices(cfg) -> list[tuple[int, object]]:
    """torchvision's module index of each cfg item: a conv is followed by its ReLU."""
    out, idx = [], 0
    for item in cfg:
        out.append((idx, item))
        idx += 1 if item == "M" else 2
    return out


# -- Stable Diffusion VAE ------------------------------------------------------

_VAE_CHANNELS = (128, 256, 512, 512)  # SD 1.x/2.x AutoencoderKL block_out_channels


def _vae_resnet(b: NetBuilder, p: str, cin: int, cout: int, size) -> None:
    b.conv(f"{p}.conv1", cin, cout, size, 3)
    b.conv(f"{p}.conv2", cout, cout, size, 3)
    if cin != cout:
        b.conv(f"{p}.conv_shortcut", cin, cout, size, 1)


def _vae_attention(b: NetBuilder, p: str, c: int, size) -> None:
    # The original LDM code runs q, k, v and the output projection as 1x1 convs
    # (diffusers uses Linear layers with the same shapes).
    for proj in ("to_q", "to_k", "to_v", "to_out.0"):
        b.conv(f"{p}.{proj}", c, c, size, 1)


def sd_vae(image: int = 256, latent_channels: int = 4, layers_per_block: int = 2) -> list[Layer]:
    """Encoder (image -> latent moments) then decoder (latent -> image), diffusers names."""
    b = NetBuilder()
    size = (image, image)
    c = b_out = _VAE_CHANNELS[0]
    b.conv("encoder.conv_in", 3, c, size, 3)
    for i, b_out in enumerate(_VAE_CHANNELS):
        for j in range(layers_per_block):
            _vae_resnet(b, f"encoder.down_blocks.{i}.resnets.{j}", c, b_out, size)
            c = b_out
        if i < len(_VAE_CHANNELS) - 1:
            # diffusers pads (0, 1, 0, 1) explicitly, then runs a 3x3/s2 conv without padding.
            size = b.conv(f"encoder.down_blocks.{i}.downsamplers.0.conv", c, c,
                          tuple(x + 1 for x in size), 3, stride=2, pad=0)
    for j in range(2):
        _vae_resnet(b, f"encoder.mid_block.resnets.{j}", c, c, size)
    _vae_attention(b, "encoder.mid_block.attentions.0", c, size)
    b.conv("encoder.conv_out", c, 2 * latent_channels, size, 3)
    b.conv("quant_conv", 2 * latent_channels, 2 * latent_channels, size, 1)

    b.conv("post_quant_conv", latent_channels, latent_channels, size, 1)
    c = _VAE_CHANNELS[-1]
    b.conv("decoder.conv_in", latent_channels, c, size, 3)
    for j in range(2):
        _vae_resnet(b, f"decoder.mid_block.resnets.{j}", c, c, size)
    _vae_attention(b, "decoder.mid_block.attentions.0", c, size)
    rev = tuple(reversed(_VAE_CHANNELS))
    for i, b_out in enumerate(rev):
        for j in range(layers_per_block + 1):
            _vae_resnet(b, f"decoder.up_blocks.{i}.resnets.{j}", c, b_out, size)
            c = b_out
        if i < len(rev) - 1:
            size = tuple(2 * x for x in size)  # nearest up-sampling, then a 3x3 conv
            b.conv(f"decoder.up_blocks.{i}.upsamplers.0.conv", c, c, size, 3)
    b.conv("decoder.conv_out", c, 3, size, 3)
    return b.layers()


# -- 3D video backbones --------------------------------------------------------

def r3d_18(frames: int = 16, image: int = 112, b: NetBuilder | None = None) -> list[Layer]:
    """torchvision r3d_18: 3x7x7 stem, 3x3x3 BasicBlocks, 1x1x1 downsample."""
    b = b or NetBuilder()
    size = b.conv("stem.0", 3, 64, (frames, image, image), (3, 7, 7), stride=(1, 2, 2),
                  pad=(1, 3, 3))
    stages = ((64, 2, 1), (128, 2, 2), (256, 2, 2), (512, 2, 2))
    _basic_blocks(b, size, 64, stages, conv_suffix=".0")
    return b.layers()


def resnext3d_50(frames: int = 16, image: int = 112, b: NetBuilder | None = None) -> list[Layer]:
    """3D ResNeXt-50 32x4d in the style of 3D-ResNets-PyTorch, with a 3x7x7 stem."""
    b = b or NetBuilder()
    size = b.conv("conv1", 3, 64, (frames, image, image), (3, 7, 7), stride=(1, 2, 2),
                  pad=(1, 3, 3))
    size = pool_out(size, 3, 2, 1)
    stages = [(mid, 2 * mid, blocks, 1 if i == 0 else 2)
              for i, (mid, blocks) in enumerate(zip((128, 256, 512, 1024), (3, 4, 6, 3)))]
    _bottlenecks(b, size, 64, stages, groups=32)
    return b.layers()


def video3d(frames: int = 16, image: int = 112) -> list[Layer]:
    b = NetBuilder("r3d_18.")
    r3d_18(frames, image, b)
    b.prefix = "resnext3d_50."
    return resnext3d_50(frames, image, b)


# -- U-Nets --------------------------------------------------------------------

def classic_unet(b: NetBuilder, image: int = 256, in_channels: int = 3, classes: int = 2,
                 widths: Sequence[int] = (64, 128, 256, 512, 1024)) -> None:
    """milesial/Pytorch-UNet (padded 3x3 double convs, transposed-conv up-sampling)."""
    size, c, skips = (image, image), in_channels, []
    for i, w in enumerate(widths):
        p = "inc" if i == 0 else f"down{i}.maxpool_conv.1"
        if i:
            size = pool_out(size, 2, 2)
        b.conv(f"{p}.double_conv.0", c, w, size, 3)
        b.conv(f"{p}.double_conv.3", w, w, size, 3)
        c = w
        skips.append((w, size))
    skips.pop()
    for i, (w, size) in enumerate(reversed(skips)):
        # up{i}.up is a ConvTranspose2d to c // 2 == w channels, concatenated with the skip.
        b.conv(f"up{i + 1}.conv.double_conv.0", c // 2 + w, w, size, 3)
        b.conv(f"up{i + 1}.conv.double_conv.3", w, w, size, 3)
        c = w
    b.conv("outc.conv", c, classes, size, 1)


def sd_unet(b: NetBuilder, latent: int = 32, min_size: int = 16,
            channels: Sequence[int] = (320, 640, 1280, 1280), layers_per_block: int = 2) -> None:
    """SD 1.x UNet2DConditionModel convs (diffusers names) whose input is >= ``min_size``.

    Attention blocks (blocks 0-2 down, 1-3 up) project in and out with 1x1 convs.
    """
    def keep_conv(name, cin, cout, size, kernel, **kw):
        if min(size) >= min_size:
            return b.conv(name, cin, cout, size, kernel, **kw)
        return pool_out(size, 1, kw.get("stride", 1))

    def resnet(p, cin, cout, size):
        keep_conv(f"{p}.conv1", cin, cout, size, 3)
        keep_conv(f"{p}.conv2", cout, cout, size, 3)
        if cin != cout:
            keep_conv(f"{p}.conv_shortcut", cin, cout, size, 1)

    def attention(p, ch, size):
        keep_conv(f"{p}.proj_in", ch, ch, size, 1)
        keep_conv(f"{p}.proj_out", ch, ch, size, 1)

    size = (latent, latent)
    c = channels[0]
    keep_conv("conv_in", 4, c, size, 3)
    skips = [c]
    last = len(channels) - 1
    for i, ch in enumerate(channels):
        for j in range(layers_per_block):
            resnet(f"down_blocks.{i}.resnets.{j}", c, ch, size)
            if i < last:
                attention(f"down_blocks.{i}.attentions.{j}", ch, size)
            c = ch
            skips.append(c)
        if i < last:
            size = keep_conv(f"down_blocks.{i}.downsamplers.0.conv", c, c, size, 3, stride=2)
            skips.append(c)
    resnet("mid_block.resnets.0", c, c, size)
    attention("mid_block.attentions.0", c, size)
    resnet("mid_block.resnets.1", c, c, size)
    for i, ch in enumerate(reversed(channels)):
        for j in range(layers_per_block + 1):
            resnet(f"up_blocks.{i}.resnets.{j}", c + skips.pop(), ch, size)
            if i > 0:
                attention(f"up_blocks.{i}.attentions.{j}", ch, size)
            c = ch
        if i < last:
            size = tuple(2 * x for x in size)
            keep_conv(f"up_blocks.{i}.upsamplers.0.conv", c, c, size, 3)
    keep_conv("conv_out", c, 4, size, 3)


def unet() -> list[Layer]:
    """Classic 2D U-Net at 256x256, plus SD-UNet layers at a 32x32 latent (32x32 and 16x16)."""
    b = NetBuilder("unet.")
    classic_unet(b)
    b.prefix = "sd_unet."
    sd_unet(b)
    return b.layers()


# -- RegNet (torchvision) ----------------------------------------------------

def _make_divisible(v: float, divisor: int) -> int:
    """torchvision's ``_make_divisible`` (min_value = divisor)."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def regnet_stages(depth: int, w_0: int, w_a: float, w_m: float,
                  group_width: int) -> list[tuple[int, int, int]]:
    """(width, blocks, group width) per stage, as torchvision's
    ``BlockParams.from_init_params`` computes them (bottleneck multiplier 1; its
    widths are float32 tensors, hence the float32 arithmetic)."""
    import numpy as np

    cont = np.arange(depth, dtype=np.float32) * np.float32(w_a) + np.float32(w_0)
    cap = np.round(np.log(cont / np.float32(w_0)) / np.float32(math.log(w_m)))
    widths = (np.round(np.float32(w_0) * np.power(np.float32(w_m), cap) / 8) * 8)
    widths = [int(w) for w in widths.astype(np.int32)]
    stages: list[list[int]] = []
    for w in widths:
        if stages and stages[-1][0] == w:
            stages[-1][1] += 1
        else:
            stages.append([w, 1])
    out = []
    for w, blocks in stages:
        gw = min(group_width, w)
        out.append((_make_divisible(w, gw), blocks, gw))
    return out


def regnet_body(b: NetBuilder, depth: int, w_0: int, w_a: float, w_m: float,
                group_width: int, se: bool, image: int = 224) -> None:
    """torchvision RegNet: 3x3/s2 stem to 32, stages of ResBottleneckBlocks (1x1, grouped
    3x3 carrying the stride, [squeeze-excitation 1x1s on a 1x1 map], 1x1, projection)."""
    size = b.conv("stem.0", 3, 32, (image, image), 3, stride=2, pad=1)
    w_in = 32
    for i, (w, blocks, gw) in enumerate(regnet_stages(depth, w_0, w_a, w_m, group_width)):
        for j in range(blocks):
            st = 2 if j == 0 else 1
            p = f"trunk_output.block{i + 1}.block{i + 1}-{j}"
            if w_in != w or st != 1:
                b.conv(f"{p}.proj.0", w_in, w, size, 1, stride=st)
            b.conv(f"{p}.f.a.0", w_in, w, size, 1)
            new = b.conv(f"{p}.f.b.0", w, w, size, 3, stride=st, groups=w // gw)
            if se:
                squeeze = int(round(0.25 * w_in))
                b.conv(f"{p}.f.se.fc1", w, squeeze, (1, 1), 1)
                b.conv(f"{p}.f.se.fc2", squeeze, w, (1, 1), 1)
            b.conv(f"{p}.f.c.0", w, w, new, 1)
            w_in, size = w, new


# torchvision's RegNet settings: depth, w_0, w_a, w_m, group width, squeeze-excitation.
REGNETS = {"regnet_x_400mf": (22, 24, 24.48, 2.54, 16, False),
           "regnet_y_400mf": (16, 48, 27.89, 2.09, 8, True)}


def regnet_x_400mf(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    regnet_body(b, *REGNETS["regnet_x_400mf"], image=image)
    return b.layers()


def regnet_y_400mf(image: int = 224) -> list[Layer]:
    b = NetBuilder()
    regnet_body(b, *REGNETS["regnet_y_400mf"], image=image)
    return b.layers()


def regnet() -> list[Layer]:
    """RegNetX-400MF (16 channels a group) and RegNetY-400MF (8 a group, with SE);
    a conv both share is listed once, under the first name."""
    b = NetBuilder()
    for name, params in REGNETS.items():
        b.prefix = name + "."
        regnet_body(b, *params)
    return b.layers()


@dataclass(frozen=True)
class NetworkSet:
    """A problem set from one or more networks, with the batch sizes it is swept at."""

    name: str
    build: Callable[[], list[Layer]]
    batches: tuple[int, ...]
    summary: str


NETWORK_SETS: dict[str, NetworkSet] = {s.name: s for s in (
    NetworkSet("resnet50", resnet50, (1, 8, 32, 128),
               "torchvision ResNet-50 (v1.5), 224x224"),
    NetworkSet("resnext50_32x4d", resnext50_32x4d, (1, 8, 32, 128),
               "torchvision ResNeXt-50 32x4d (groups=32), 224x224"),
    NetworkSet("mobilenet_v2", mobilenet_v2, (1, 32, 256),
               "torchvision MobileNetV2 (depthwise 3x3 + pointwise), 224x224"),
    NetworkSet("vgg16", vgg16, (1, 16, 64),
               "torchvision VGG-16, 224x224"),
    NetworkSet("sd_vae", sd_vae, (1, 4),
               "Stable-Diffusion VAE encoder + decoder, 256x256 image / 32x32 latent"),
    NetworkSet("video3d", video3d, (1, 8),
               "r3d_18 and a 3D ResNeXt-50 32x4d, 16 frames at 112x112"),
    NetworkSet("unet", unet, (1, 8),
               "classic U-Net 64..1024 at 256x256, SD-UNet layers at 32x32/16x16"),
    NetworkSet("resnext101", resnext101_grouped, (1, 8, 32, 64),
               "the grouped 3x3 convs of torchvision ResNeXt-101 32x8d and 64x4d, 224x224"),
    NetworkSet("regnet", regnet, (1, 8, 32),
               "torchvision RegNetX-400MF and RegNetY-400MF (grouped 3x3, 16 and 8 "
               "channels a group), 224x224"),
)}
