"""Problem sets, the random generator, the train/holdout split and the sweep plans."""

from __future__ import annotations

import dataclasses

import pytest
from convdispatch.data.problems import (
    HOLDOUT_SETS,
    MAX_FLOPS,
    TRAIN_SETS,
    Problem,
    build_sets,
    csvio,
    list_sets,
    load_problems,
    load_set,
    networks,
    plan,
    plan_names,
    random_problems,
    split_of,
    within_caps,
)
from convdispatch.data.problems.problem import MAX_TENSOR_BYTES, tensor_bytes
from convdispatch.kernels.geometry import ConvGeometry


def _shape(p: Problem) -> tuple:
    return dataclasses.replace(p.geom, dtype="float32").key()


def _by_layer(name: str, n: int = 1) -> dict[str, ConvGeometry]:
    return {p.layer: p.geom for p in load_set(name) if p.geom.n == n}


# -- sets ----------------------------------------------------------------------

@pytest.mark.parametrize("name", list_sets())
def test_every_set_loads_valid_capped_problems(name):
    problems = load_set(name)
    assert problems, name
    for p in problems:
        assert p.set == name and isinstance(p.geom, ConvGeometry)
        assert p.id == f"{name}/{p.layer}/n{p.geom.n}/float16"
        assert 1 <= p.geom.n <= 256 and p.count >= 1
        assert p.geom.flops <= MAX_FLOPS and tensor_bytes(p.geom) <= MAX_TENSOR_BYTES
        p.geom.check()
    if name in networks.NETWORK_SETS:
        assert {p.geom.n for p in problems} <= set(networks.NETWORK_SETS[name].batches)


def test_ids_unique_across_sets_and_dtypes():
    ids = [p.id for name in list_sets() for dt in ("float16", "bfloat16", "float32")
           for p in load_set(name, dt)]
    assert len(ids) == len(set(ids))
    p = load_set("vgg16", "bfloat16")[0]
    assert p.geom.dtype == "bfloat16" and p.id.endswith("/bfloat16")


def test_network_sets_merge_identical_geometries():
    for name, spec in networks.NETWORK_SETS.items():
        layers = spec.build()
        keys = [x.geom.key() for x in layers]
        assert len(keys) == len(set(keys)), name
    # ResNet-50 has 53 convs (49 in the blocks, 4 downsamples, the stem); 23 distinct shapes.
    layers = networks.resnet50()
    assert sum(x.count for x in layers) == 53
    assert len(layers) < 53


def test_resnet50_stem_and_bottlenecks():
    g = _by_layer("resnet50")
    stem = g["conv1"]
    assert (stem.c, stem.k, stem.h, stem.r, stem.s) == (3, 64, 224, 7, 7)
    assert stem.stride[1:] == (2, 2) and stem.pad[1:] == (3, 3) and stem.dims == 2
    # v1.5: the stride-2 sits on the 3x3 conv of the first block of stages 2-4.
    assert g["layer2.0.conv2"].stride[1:] == (2, 2) and g["layer2.0.conv2"].h == 56
    assert g["layer4.0.conv3"].k == 2048 and g["layer4.0.conv3"].h == 7


def test_resnext_is_grouped():
    g = _by_layer("resnext50_32x4d")
    convs = [x for name, x in g.items() if name.endswith("conv2")]
    assert convs and all(x.g == 32 and x.r == 3 for x in convs)
    assert {x.c for x in convs} == {128, 256, 512, 1024}


def test_regnet_stages_match_the_published_widths():
    # RegNetX-400MF / RegNetY-400MF (Radosavovic et al. 2020; torchvision): stage widths,
    # depths, group width. The full walk is checked against torchvision's modules in
    # test_set_tables_match_torchvision where torchvision imports (the GPU image).
    assert networks.regnet_stages(*networks.REGNETS["regnet_x_400mf"][:5]) == \
        [(32, 1, 16), (64, 2, 16), (160, 7, 16), (400, 12, 16)]
    assert networks.regnet_stages(*networks.REGNETS["regnet_y_400mf"][:5]) == \
        [(48, 1, 8), (104, 3, 8), (208, 6, 8), (440, 6, 8)]
    grouped = [p.geom for p in load_set("regnet") if p.geom.g > 1 and p.geom.n == 1]
    assert {x.cg for x in grouped} == {8, 16} and all(x.r == 3 for x in grouped)
    # One block a stage has the stride; RegNetY's squeeze-excitation convs see a 1x1 map.
    layers = networks.regnet()
    assert sum(x.count for x in layers if x.name.endswith("f.b.0")) == 22 + 16
    assert all(x.geom.h == x.geom.w == 1 for x in layers if ".f.se." in x.name)


def test_resnext101_set_holds_its_grouped_convs_only():
    layers = networks.resnext101_grouped()
    assert all(x.geom.g > 1 and x.geom.r == 3 for x in layers)
    # 32x8d: 8..64 channels a group; 64x4d: 4..32; one stride-2 conv a stage but the first.
    assert sorted({(x.geom.g, x.geom.cg) for x in layers}) == \
        [(32, 8), (32, 16), (32, 32), (32, 64), (64, 4), (64, 8), (64, 16), (64, 32)]
    assert sum(x.count for x in layers) == 2 * (3 + 4 + 23 + 3)
    assert sum(x.geom.stride[1] == 2 for x in layers) == 6
    full = [x for x in networks.resnext101_32x8d() if x.geom.g > 1]
    assert [x.geom for x in full] == [x.geom for x in layers[:7]]
    assert {p.geom.n for p in load_set("resnext101")} == {1, 8, 32, 64}


def test_mobilenet_v2_depthwise_and_pointwise():
    problems = [p for p in load_set("mobilenet_v2") if p.geom.n == 1]
    dw = [p for p in problems if p.geom.is_depthwise]
    assert dw and all(p.geom.g == p.geom.c == p.geom.k and p.geom.r == 3 for p in dw)
    assert sum(p.count for p in dw) == 17  # one per inverted-residual block
    assert any(p.geom.is_pointwise and p.geom.k == 1280 for p in problems)


def test_video3d_is_3d():
    g = _by_layer("video3d")
    assert all(x.dims == 3 for x in g.values())
    stem = g["r3d_18.stem.0"]
    assert (stem.d, stem.h, stem.t, stem.r, stem.s) == (16, 112, 3, 7, 7)
    assert stem.stride == (1, 2, 2)
    assert any(x.is_pointwise for x in g.values())
    assert any(x.g == 32 and x.t == 3 for x in g.values())  # the 3D ResNeXt


def test_sd_vae_and_unet_shapes():
    vae = _by_layer("sd_vae")
    assert vae["decoder.conv_in"].c == 4 and vae["decoder.conv_in"].h == 32
    assert vae["decoder.conv_out"].k == 3 and vae["decoder.conv_out"].h == 256
    # The encoder's down-sampling pads (0, 1, 0, 1) itself, then runs an unpadded 3x3/s2.
    down = vae["encoder.down_blocks.0.downsamplers.0.conv"]
    assert (down.h, down.pad[1], down.out_spatial[1]) == (257, 0, 128)
    unet = _by_layer("unet")
    assert unet["unet.down4.maxpool_conv.1.double_conv.3"].k == 1024
    sd = {x.k for name, x in unet.items() if name.startswith("sd_unet.")}
    assert {320, 640, 1280} <= sd


def test_set_tables_match_torchvision():
    """The walked networks equal torchvision's convs (needs torchvision; the GPU image has it)."""
    try:
        import torch
        from torchvision import models
        from torchvision.models import video
    except Exception as e:  # torchvision's CPU wheels fail to import beside some torch builds
        pytest.skip(f"torchvision unavailable: {e}")
    cases = [(models.resnet50, networks.resnet50, (1, 3, 224, 224)),
             (models.resnext50_32x4d, networks.resnext50_32x4d, (1, 3, 224, 224)),
             (models.mobilenet_v2, networks.mobilenet_v2, (1, 3, 224, 224)),
             (models.vgg16, networks.vgg16, (1, 3, 224, 224)),
             (models.regnet_x_400mf, networks.regnet_x_400mf, (1, 3, 224, 224)),
             (models.regnet_y_400mf, networks.regnet_y_400mf, (1, 3, 224, 224)),
             (models.resnext101_32x8d, networks.resnext101_32x8d, (1, 3, 224, 224)),
             (models.resnext101_64x4d, networks.resnext101_64x4d, (1, 3, 224, 224)),
             (video.r3d_18, networks.r3d_18, (1, 3, 16, 112, 112))]
    for make_model, walk, shape in cases:
        if make_model in (models.regnet_x_400mf, models.regnet_y_400mf):
            # RegNet's BlockParams reads tensor values while building: not on "meta".
            model = make_model().to("meta")
        else:
            with torch.device("meta"):
                model = make_model()
        seen: list[tuple[str, ConvGeometry]] = []

        def hook(mod, args, out, seen=seen):
            dims = mod.weight.dim() - 2
            lift = (lambda t, f: tuple(t)) if dims == 3 else (lambda t, f: (f, *t))
            d, h, w = lift(args[0].shape[2:], 1)
            t, r, s = lift(mod.kernel_size, 1)
            seen.append((mod._name, ConvGeometry(
                n=1, c=mod.in_channels, k=mod.out_channels, h=h, w=w, r=r, s=s,
                g=mod.groups, d=d, t=t, stride=lift(mod.stride, 1), pad=lift(mod.padding, 0),
                dilation=lift(mod.dilation, 1), dims=dims)))

        for name, mod in model.named_modules():
            if isinstance(mod, (torch.nn.Conv2d, torch.nn.Conv3d)):
                mod._name = name
                mod.register_forward_hook(hook)
        model.eval()(torch.empty(shape, device="meta"))
        first: dict[tuple, list] = {}
        for name, geom in seen:
            first.setdefault(geom.key(), [name, 0])[1] += 1
        want = [(x.name, x.geom.key(), x.count) for x in walk()]
        got = [(name, key, cnt) for key, (name, cnt) in first.items()]
        assert got == want, make_model.__name__


# -- split and plans -------------------------------------------------------------

def test_split_is_disjoint_and_holdout_networks_stay_out_of_train():
    assert not set(TRAIN_SETS) & set(HOLDOUT_SETS)
    assert set(TRAIN_SETS) | set(HOLDOUT_SETS) == set(list_sets())
    train, holdout = plan("train"), plan("holdout")
    assert all(split_of(p) == "train" for p in train)
    assert all(split_of(p) == "holdout" for p in holdout)
    assert {"resnext50_32x4d", "sd_vae"} <= {p.set for p in holdout}
    assert not {p.set for p in train} & {"resnext50_32x4d", "sd_vae", "random_holdout"}
    assert not {p.id for p in train} & {p.id for p in holdout}
    # A shape shared with a train network (ResNeXt's stem is ResNet's) is left out.
    assert not {_shape(p) for p in train} & {_shape(p) for p in holdout}
    assert "resnext50_32x4d/conv1/n1/float16" not in {p.id for p in holdout}
    assert any(p.layer == "conv1" for p in load_set("resnext50_32x4d"))
    with pytest.raises(ValueError, match="no split"):
        split_of(dataclasses.replace(train[0], set="elsewhere"))


@pytest.mark.parametrize("name,minimum", [("train", 320), ("holdout", 110)])
def test_plan_sizes_and_coverage(name, minimum):
    problems = plan(name)
    assert len(problems) >= minimum
    assert len({p.id for p in problems}) == len(problems)
    by_dtype = {d: sum(p.geom.dtype == d for p in problems)
                for d in ("float16", "bfloat16", "float32")}
    assert by_dtype["float16"] > len(problems) / 2
    assert 0 < by_dtype["bfloat16"] < by_dtype["float16"]
    assert 0 < by_dtype["float32"] < by_dtype["float16"]
    assert {p.geom.dims for p in problems} == {2, 3}
    assert any(p.geom.is_depthwise for p in problems)
    assert any(p.geom.g > 1 and not p.geom.is_depthwise for p in problems)
    assert any(p.geom.g == 1 for p in problems)
    assert all(within_caps(p.geom) for p in problems)
    # Mostly small batches: the sweep times every candidate of every problem.
    assert sum(p.geom.n <= 64 for p in problems) > 0.8 * len(problems)


def test_plan_with_dtypes_and_unknown_plan():
    shapes = {_shape(p) for p in plan("smoke")}
    fp32 = plan("smoke", ["float32"])
    assert {p.geom.dtype for p in fp32} == {"float32"}
    assert {_shape(p) for p in fp32} == shapes
    assert set(plan_names()) >= {"train", "holdout"}
    with pytest.raises(ValueError, match="unknown plan"):
        plan("nope")


def test_load_problems_specs():
    both = load_problems("vgg16,resnet50", ["float16", "float32"])
    assert len(both) == 2 * (len(load_set("vgg16")) + len(load_set("resnet50")))
    assert len({p.id for p in both}) == len(both)
    assert load_problems("vgg16,vgg16") == load_set("vgg16")
    assert load_problems("vgg16", "bfloat16") == load_set("vgg16", "bfloat16")
    assert [p.id for p in load_problems("train")] == [p.id for p in plan("train")]
    rnd = load_problems("random_holdout:1005:3", ["bfloat16"])
    assert rnd == random_problems(1005, 3, "bfloat16")
    one = load_set("vgg16", "bfloat16")[2]
    assert load_problems(f"{one.id},vgg16") == [one] + load_set("vgg16")
    for bad, match in [("resnet5O", "unknown problem set"),
                       ("vgg16/nope/n1/float16", "no problem"), ("random_train:1005:3", "reserved"),
                       ("random_train:x:3", "bad random spec"), ("", "non-empty")]:
        with pytest.raises(ValueError, match=match):
            load_problems(bad)
    with pytest.raises(ValueError, match="dtype"):
        load_problems("vgg16", ["float8"])


# -- random generator ------------------------------------------------------------

def test_random_problems_deterministic_and_seed_dependent():
    a, b = random_problems(7, 40), random_problems(7, 40)
    assert a == b
    assert random_problems(7, 15) == a[:15]
    c = random_problems(8, 40)
    assert [p.geom for p in a] != [p.geom for p in c]
    assert {p.id for p in a}.isdisjoint(p.id for p in c)
    assert all(p.set == "random_train" for p in a)
    assert all(p.set == "random_holdout" for p in random_problems(1000, 3))
    assert [p.geom.dtype for p in random_problems(7, 2, "float32")] == ["float32"] * 2
    for seed, count in [(-1, 3), (1.5, 3), (1, -2)]:
        with pytest.raises(ValueError):
            random_problems(seed, count)


def test_random_problems_cover_the_space():
    geoms = [p.geom for p in random_problems(3, 300)]
    assert len({g.key() for g in geoms}) == len(geoms)
    assert all(within_caps(g) for g in geoms)
    assert all(3 <= g.c <= 1024 for g in geoms)
    assert {g.dims for g in geoms} == {2, 3}
    assert any(g.is_depthwise for g in geoms)
    assert any(g.g > 1 and not g.is_depthwise for g in geoms)
    assert any(max(g.dilation) > 1 for g in geoms)
    assert {max(g.stride) for g in geoms} == {1, 2, 3}
    assert {(g.r, g.s) for g in geoms} >= {(1, 1), (3, 3), (5, 5), (7, 7), (1, 7), (7, 1)}
    assert any(g.h % 2 for g in geoms) and any(g.h != g.w for g in geoms)
    sizes = sorted(g.n for g in geoms)
    assert sizes[0] == 1 and sizes[-1] > 64 and sizes[len(sizes) // 2] <= 64


# -- CSV files ---------------------------------------------------------------------

def test_csv_columns_are_the_geometry_row():
    assert set(csvio.GEOMETRY_COLUMNS) == set(ConvGeometry(1, 1, 1, 1, 1, 1, 1).as_row())
    assert csvio.COLUMNS[:2] == ("set", "layer")


def test_csv_round_trip(tmp_path):
    problems = load_set("mobilenet_v2")[:5] + random_problems(4, 5)
    path = tmp_path / "p.csv"
    path.write_text(csvio.to_text(problems))
    assert csvio.read_problems(path) == problems


def _corrupt(tmp_path, column: str, value: str, row: int = 2):
    problems = load_set("resnet50")[:3]
    lines = csvio.to_text(problems).splitlines()
    header = lines[0].split(",")
    fields = lines[row].split(",")
    fields[header.index(column)] = value
    lines[row] = ",".join(fields)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("column,value", [
    ("c", "x"), ("h", "-3"), ("dtype", "float8"), ("layout", "nhwc"), ("dims", "4"),
    ("count", "0"), ("layer", "a/b"), ("set", "vgg16"),
])
def test_malformed_csv_names_row_and_column(tmp_path, column, value):
    path = _corrupt(tmp_path, column, value)
    with pytest.raises(ValueError) as e:
        csvio.read_problems(path, expect_set="resnet50")
    msg = str(e.value)
    assert str(path) in msg and "row 2" in msg and f"'{column}'" in msg


def test_malformed_csv_geometry_header_and_duplicates(tmp_path):
    path = _corrupt(tmp_path, "g", "5")  # groups must divide the channels
    with pytest.raises(ValueError, match=r"row 2 .*groups"):
        csvio.read_problems(path)
    path = tmp_path / "dup.csv"
    path.write_text(csvio.to_text(load_set("vgg16")[:1] * 2))
    with pytest.raises(ValueError, match="row 2.*repeats row 1"):
        csvio.read_problems(path)
    path.write_text("set,layer,n\nvgg16,a,1\n")
    with pytest.raises(ValueError, match="missing"):
        csvio.read_problems(path)
    text = csvio.to_text(load_set("vgg16")[:1])
    path.write_text(text.rstrip("\n") + ",1\n")
    with pytest.raises(ValueError, match="row 1.*fields"):
        csvio.read_problems(path)


def test_csv_files_match_build_sets():
    """The CSVs and README tables on disk are what build_sets produces: they cannot drift."""
    assert build_sets.stale_files() == []


def test_problem_by_id_reads_the_problem_from_its_set():
    from convdispatch.data.problems import problem_by_id

    for pid in ("resnet50/layer3.0.conv2/n128/float16", "random_train/r0_13/n32/float16",
                "resnet50/conv1/n1/bfloat16"):
        assert problem_by_id(pid).id == pid
    assert problem_by_id("resnet50/layer3.0.conv2/n128/float16").geom.stride == (1, 2, 2)
    with pytest.raises(ValueError, match="no problem"):
        problem_by_id("resnet50/layer9.conv1/n1/float16")
    with pytest.raises(ValueError, match="SET/LAYER"):
        problem_by_id("resnet50")
