"""Model directories: loading and refusing broken ones, find_model and its nearest-GPU rule,
and the dispatcher using a model (or the rules, with one warning, when it is broken)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from convdispatch.dispatcher import decide, explain, registry, selection, set_chooser, settings
from convdispatch.dispatcher.model_chooser import ModelChooser
from convdispatch.heuristics import model_store
from convdispatch.heuristics.features import (
    FAMILY_NAMES,
    FEATURE_NAMES,
    FORWARD_FAMILIES,
    N_FEATURES,
)
from convdispatch.heuristics.model_store import (
    MODELS_ROOT,
    LoadedModel,
    ModelLoadError,
    find_model,
    load_model,
    write_model_dir,
)
from convdispatch.heuristics.synthetic import synthetic_sweep
from convdispatch.heuristics.train import HyperParams, train
from convdispatch.heuristics.tree_model import sha256_file
from convdispatch.kernels.device import KNOWN, DeviceSpec
from convdispatch.kernels.geometry import ConvGeometry
from helpers import SHIPPED_H100, legacy_model_copy

lgb = pytest.importorskip("lightgbm")

H100 = KNOWN["h100"]
GEOM = ConvGeometry(n=8, c=64, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1))


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A real model directory written by train() (few trees)."""
    d = tmp_path_factory.mktemp("trained")
    synthetic_sweep(n_problems=15, seed=5).to_csv(d / "sweep.csv", index=False)
    train([d / "sweep.csv"], d / "h100", methods=["lgbm_regression"],
          hp=HyperParams(n_estimators=8, num_leaves=7, min_data_in_leaf=3, num_threads=1),
          folds=2,
          log=lambda _msg: None)
    return d / "h100"


@pytest.fixture
def copy(trained, tmp_path) -> Path:
    """A private copy of the trained model to break."""
    return Path(shutil.copytree(trained, tmp_path / "h100"))


def _edit_json(path: Path, **changes) -> None:
    obj = json.loads(path.read_text())
    obj.update(changes)
    path.write_text(json.dumps(obj))


def _drop_json(path: Path, key: str) -> None:
    obj = json.loads(path.read_text())
    del obj[key]
    path.write_text(json.dumps(obj))


def _reseal(d: Path) -> None:
    """Record model.txt's current sha256 in schema.json and meta.json (a consistent edit)."""
    sha = sha256_file(d / "model.txt")
    _edit_json(d / "schema.json", model_sha256=sha)
    _edit_json(d / "meta.json", model_sha256=sha)


# -- loading --------------------------------------------------------------------------

def test_load_model_reads_a_trained_directory(trained):
    m = load_model(trained)
    meta = json.loads((trained / "meta.json").read_text())
    assert isinstance(m, LoadedModel)
    assert m.sha256 == sha256_file(trained / "model.txt") == meta["model_sha256"]
    assert m.identity == m.sha256[:12] == meta["identity"]
    assert m.method == "lgbm_regression" and m.gpu == H100.name
    assert m.meta["data"]["sha256"] == meta["data"]["sha256"]
    assert m.families <= set(FAMILY_NAMES) and "implicit_gemm" in m.families
    assert m.ensemble.n_features == N_FEATURES
    cands = registry.candidates(GEOM, H100)
    ranked = m.rank(GEOM, cands, H100)
    scores = [s for _, s in ranked]
    assert sorted(c.id for c, _ in ranked) == sorted(c.id for c in cands)
    assert scores == sorted(scores) and all(s > 0 for s in scores), "exp(ln us) > 0"
    assert m.rank(GEOM, [], H100) == []
    with pytest.raises(ValueError, match=f"{N_FEATURES} feature columns"):
        m.predict(np.zeros((3, N_FEATURES - 1)))


def test_model_load_error_is_a_value_error():
    assert issubclass(ModelLoadError, ValueError)


def _break(d: Path, case: str) -> str:
    """Damage the model directory ``d``; returns the file the error must name."""
    if case == "missing_dir":
        shutil.rmtree(d)
        return str(d)
    if case in ("missing_model", "missing_schema", "missing_meta"):
        name = {"missing_model": "model.txt", "missing_schema": "schema.json",
                "missing_meta": "meta.json"}[case]
        (d / name).unlink()
        return str(d / name)
    if case == "truncated_model":
        text = (d / "model.txt").read_text()
        (d / "model.txt").write_text(text[: len(text) // 2])
        return str(d / "model.txt")
    if case == "truncated_model_resealed":  # schema and meta updated too: the parser catches it
        text = (d / "model.txt").read_text()
        (d / "model.txt").write_text(text[: text.index("end of trees")])
        _reseal(d)
        return str(d / "model.txt")
    if case == "corrupt_schema_json":
        (d / "schema.json").write_text('{"schema_version": 2, "feature_')
        return str(d / "schema.json")
    if case == "corrupt_meta_json":
        (d / "meta.json").write_bytes(b"\xff\xfe not json")
        return str(d / "meta.json")
    if case == "schema_not_object":
        (d / "schema.json").write_text("[1, 2]")
        return str(d / "schema.json")
    if case == "schema_version":
        _edit_json(d / "schema.json", schema_version=1)
        return str(d / "schema.json")
    if case == "feature_renamed":
        names = list(FEATURE_NAMES)
        names[5] = "not_a_feature"
        _edit_json(d / "schema.json", feature_names=names)
        return str(d / "schema.json")
    if case == "feature_count_schema":
        _edit_json(d / "schema.json", feature_names=list(FEATURE_NAMES) + ["extra"])
        return str(d / "schema.json")
    if case == "feature_count_model":  # a consistent directory for a model of other features
        rng = np.random.default_rng(0)
        X = rng.normal(size=(200, N_FEATURES - 1))
        b = lgb.train(dict(objective="regression", verbosity=-1, num_leaves=4, num_threads=1),
                      lgb.Dataset(X, X[:, 0], feature_name=list(FEATURE_NAMES[:-1])),
                      num_boost_round=2)
        b.save_model(str(d / "model.txt"))
        _reseal(d)
        return str(d / "model.txt")
    if case == "swapped_meta":
        _edit_json(d / "meta.json", model_sha256="0" * 64)
        return str(d / "meta.json")
    if case == "bad_transform":
        _edit_json(d / "schema.json", score={"transform": "sigmoid", "unit": "?"})
        return str(d / "schema.json")
    if case == "bad_families":
        _edit_json(d / "schema.json", families=["implicit_gemm", "winograd"])
        return str(d / "schema.json")
    raise AssertionError(case)


BROKEN = {
    "missing_dir": "directory not found",
    "missing_model": "model file not found",
    "missing_schema": "file not found",
    "truncated_model": "does not match",
    "truncated_model_resealed": "truncated",
    "corrupt_schema_json": "unreadable JSON",
    "corrupt_meta_json": "unreadable JSON",
    "schema_not_object": "JSON object",
    "schema_version": "schema version 1",
    "feature_renamed": "position 5",
    "feature_count_schema": "feature_names differ",
    "feature_count_model": f"takes {N_FEATURES - 1} features",
    "swapped_meta": "different models",
    "bad_transform": "transform",
    "bad_families": "families",
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_model_directory_is_refused_naming_the_file(copy, case):
    path = _break(copy, case)
    with pytest.raises(ModelLoadError) as err:
        load_model(copy)
    msg = str(err.value)
    assert msg.startswith(path + ":"), msg
    assert BROKEN[case] in msg, msg
    with pytest.raises(ValueError):
        ModelChooser.load(copy)


def test_meta_json_is_optional_provenance(copy):
    (copy / "meta.json").unlink()
    assert load_model(copy).meta == {}
    (copy / "meta.json").write_text(json.dumps({"note": "no sha recorded"}))
    assert load_model(copy).meta == {"note": "no sha recorded"}


def test_schema_without_families_means_all(copy):
    schema = json.loads((copy / "schema.json").read_text())
    del schema["families"]
    (copy / "schema.json").write_text(json.dumps(schema))
    assert load_model(copy).families == set(FORWARD_FAMILIES)


def test_write_model_dir_refuses_unknown_families(trained, tmp_path):
    booster = lgb.Booster(model_file=str(trained / "model.txt"))
    with pytest.raises(ValueError, match="families"):
        write_model_dir(tmp_path / "m", booster, "lgbm_regression", H100, {},
                        np.zeros((1, N_FEATURES), np.float32), families=["winograd"])


def test_untrained_family_ranks_last(copy):
    schema = json.loads((copy / "schema.json").read_text())
    _edit_json(copy / "schema.json", families=["implicit_gemm"], family_config_values={
        "implicit_gemm": schema["family_config_values"]["implicit_gemm"]})
    m = load_model(copy)
    cands = registry.candidates(GEOM, H100)
    assert {c.family for c in cands} > {"implicit_gemm"}
    ranked = m.rank(GEOM, cands, H100)
    fams = [c.family for c, _ in ranked]
    n = fams.count("implicit_gemm")
    assert set(fams[:n]) == {"implicit_gemm"}
    assert all(s == np.inf for _, s in ranked[n:])
    assert all(np.isfinite(s) for _, s in ranked[:n])
    assert [c.id for c, _ in ranked[n:]] == sorted(c.id for c, _ in ranked[n:]), "ties by id"


def test_trained_model_records_its_config_keys(trained, tmp_path):
    """train() writes the config keys of its training rows (the synthetic sweep's
    families' knobs), a subset of CONFIG_KEYS; the shipped forward model records its own
    (TMA among them); a model saved before keys were recorded reads as having seen every
    legacy key."""
    from convdispatch.heuristics.model_store import LEGACY_CONFIG_KEYS
    from convdispatch.heuristics.train import config_keys_of
    from convdispatch.kernels.base import CONFIG_KEYS

    rows = synthetic_sweep(n_problems=15, seed=5)
    keys = json.loads((trained / "schema.json").read_text())["config_keys"]
    # (the training rows: the sweep's less its holdout problems)
    assert set(keys) <= set(config_keys_of(rows["config"][rows["ok"] == 1]))
    assert set(keys) <= set(CONFIG_KEYS) and "BLOCK_M" in keys
    assert config_keys_of(["BLOCK_M=64;num_warps=4", "BLOCK_M=32;ITEMS=2"]) == [
        "BLOCK_M", "ITEMS", "num_warps"]
    assert set(LEGACY_CONFIG_KEYS) <= set(CONFIG_KEYS)
    assert {"TMA", "WGMMA", "ITEMS"} <= load_model(SHIPPED_H100).config_keys
    legacy = legacy_model_copy(SHIPPED_H100, tmp_path / "legacy")
    assert "config_keys" not in json.loads((legacy / "schema.json").read_text())
    assert load_model(legacy).config_keys == frozenset(LEGACY_CONFIG_KEYS)


def test_unseen_config_key_ranks_last(copy):
    """A candidate whose config has a key the model never saw in training is ranked after
    the rest with score inf (its features would read as a config the model knows), ties
    by id, as an untrained family is; a model that saw none of the candidates' keys falls
    back to the rules."""
    cands = registry.candidates(GEOM, H100)
    with_group = [c for c in cands if "SPLIT_K" in c.config]
    assert with_group and len(with_group) < len(cands)
    keys = sorted({k for c in cands for k in c.config} - {"SPLIT_K"})
    _edit_json(copy / "schema.json", config_keys=keys)
    _drop_json(copy / "schema.json", "config_values")
    _drop_json(copy / "schema.json", "family_config_values")
    m = load_model(copy)
    assert m.unseen(with_group) == [True] * len(with_group)
    ranked = m.rank(GEOM, cands, H100)
    n = len(cands) - len(with_group)
    assert all(np.isfinite(s) and "SPLIT_K" not in c.config for c, s in ranked[:n])
    assert all(s == np.inf and "SPLIT_K" in c.config for c, s in ranked[n:])
    assert [c.id for c, _ in ranked[n:]] == sorted(c.id for c, _ in ranked[n:])
    decision = ModelChooser(m).choose(GEOM, with_group, H100)
    assert decision.chooser == "rule" and "config keys" in decision.reason


def test_trained_model_records_its_config_values(trained):
    """train() writes each config key's values in its training rows, keyed by exactly its
    config keys; the model reads them back."""
    from convdispatch.heuristics.train import config_values_of

    rows = synthetic_sweep(n_problems=15, seed=5)
    schema = json.loads((trained / "schema.json").read_text())
    values = schema["config_values"]
    assert sorted(values) == schema["config_keys"]
    every = config_values_of(rows["config"][rows["ok"] == 1])
    assert all(set(v) <= set(every[k]) and v == sorted(v) for k, v in values.items())
    assert config_values_of(["BLOCK_M=64;num_warps=4", "BLOCK_M=32;ITEMS=2"]) == {
        "BLOCK_M": [32, 64], "ITEMS": [2], "num_warps": [4]}
    assert load_model(trained).config_values == {k: frozenset(v) for k, v in values.items()}
    # and each family's, over its own rows
    per_family = schema["family_config_values"]
    assert sorted(per_family) == schema["families"]
    for fam, fam_values in per_family.items():
        assert all(set(v) <= set(values[k]) for k, v in fam_values.items()), fam
    assert load_model(trained).family_config_values == {
        f: {k: frozenset(v) for k, v in vs.items()} for f, vs in per_family.items()}


def test_a_value_another_family_had_is_unseen_in_this_one(copy):
    """With 'family_config_values', a candidate is unseen where its own family's rows never
    held one of its values, though another family's did (grouped_flat's 64-wide tiles
    beside other families' BLOCK_N=64): ranked last, score inf."""
    cands = registry.candidates(GEOM, H100)
    keys = sorted({k for c in cands for k in c.config})
    fams = sorted({c.family for c in cands})
    per_family = {f: {k: sorted({c.config[k] for c in cands if c.family == f and k in c.config})
                      for k in keys} for f in fams}
    per_family = {f: {k: v for k, v in vs.items() if v} for f, vs in per_family.items()}
    wide = [c for c in cands if c.config.get("BLOCK_N") == 64]
    fam = wide[0].family
    others = {c.family for c in wide} - {fam}
    assert others, "another family offers BLOCK_N=64 too"
    per_family[fam]["BLOCK_N"] = [v for v in per_family[fam]["BLOCK_N"] if v != 64]
    values = {k: sorted({c.config[k] for c in cands if k in c.config}) for k in keys}
    _edit_json(copy / "schema.json", config_keys=keys, config_values=values, families=fams,
               family_config_values=per_family)
    m = load_model(copy)
    new = [c.family == fam and c.config.get("BLOCK_N") == 64 for c in cands]
    assert m.unseen(cands) == new
    ranked = m.rank(GEOM, cands, H100)
    assert all(s == np.inf for c, s in ranked if c.family == fam and c.config["BLOCK_N"] == 64)
    assert all(np.isfinite(s) for c, s in ranked
               if c.family in others and c.config.get("BLOCK_N") == 64)


@pytest.mark.parametrize("case", ["list", "other family", "other keys", "empty", "text"])
def test_malformed_family_config_values_refuse_to_load(copy, case):
    schema = json.loads((copy / "schema.json").read_text())
    good = schema["family_config_values"]
    fam = schema["families"][0]
    values = {"list": [fam], "other family": {**good, "no_such_family": good[fam]},
              "other keys": {**good, fam: {**good[fam], "WARP": [1]}},
              "empty": {**good, fam: {"BLOCK_M": []}},
              "text": {**good, fam: {"BLOCK_M": ["64"]}}}[case]
    _edit_json(copy / "schema.json", family_config_values=values)
    with pytest.raises(ModelLoadError, match="family_config_values"):
        load_model(copy)


def test_unseen_config_value_ranks_last(copy):
    """A candidate with a config value the model never saw (a key's value outside
    'config_values') is ranked after the rest with score inf, as an unseen key is."""
    cands = registry.candidates(GEOM, H100)
    schema = json.loads((copy / "schema.json").read_text())
    keys = sorted({k for c in cands for k in c.config})
    # every value of the candidates seen, but BLOCK_M=128
    values = {k: sorted({c.config[k] for c in cands if k in c.config}
                        - ({128} if k == "BLOCK_M" else set())) for k in keys}
    _edit_json(copy / "schema.json", config_keys=keys, config_values=values,
               families=sorted({c.family for c in cands} | set(schema["families"])))
    _drop_json(copy / "schema.json", "family_config_values")  # (the model-wide record alone)
    m = load_model(copy)
    new = [c.config.get("BLOCK_M") == 128 for c in cands]
    assert any(new) and not all(new)
    assert m.unseen(cands) == new
    ranked = m.rank(GEOM, cands, H100)
    n = new.count(False)
    assert all(np.isfinite(s) and c.config.get("BLOCK_M") != 128 for c, s in ranked[:n])
    assert all(s == np.inf and c.config["BLOCK_M"] == 128 for c, s in ranked[n:])


def test_models_without_config_values_never_saw_the_new_ones(tmp_path):
    """A model that records no 'config_values' (those saved before them) saw every value
    but NEW_SINCE_LEGACY_VALUES: grouped_flat's configs of one item a program rank last
    under it, its others as before. The shipped model, trained on their rows, sees them."""
    from convdispatch.heuristics.model_store import NEW_SINCE_LEGACY_VALUES

    assert NEW_SINCE_LEGACY_VALUES == {"ITEMS": (1,)}
    legacy = load_model(legacy_model_copy(SHIPPED_H100, tmp_path / "legacy"))
    assert legacy.config_values is None
    geom = ConvGeometry(n=1, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1),
                        dims=3)
    cands = [c for c in registry.candidates(geom, H100) if c.family == "grouped_flat"]
    one = [c.config["ITEMS"] == 1 and "TMA" not in c.config for c in cands]
    assert any(one)
    tma = ["TMA" in c.config for c in cands]
    # (and grouped_flat's 64-wide tiles: NEW_SINCE_LEGACY_FAMILY_VALUES)
    wide = [c.config["BLOCK_N"] == 64 for c in cands]
    assert any(wide) and not all(wide)
    assert legacy.unseen(cands) == [any(t) for t in zip(one, tma, wide)]
    assert not any(load_model(SHIPPED_H100).unseen(cands))


@pytest.mark.parametrize("case", ["list", "missing keys", "other keys", "empty", "text",
                                  "bool"])
def test_malformed_config_values_refuse_to_load(copy, case):
    schema = json.loads((copy / "schema.json").read_text())
    good = schema["config_values"]
    key = schema["config_keys"][0]
    values = {"list": [2, 4], "missing keys": {key: good[key]},
              "other keys": {**good, "WARP": [1]}, "empty": {**good, key: []},
              "text": {**good, key: ["64"]}, "bool": {**good, key: [True]}}[case]
    _edit_json(copy / "schema.json", config_values=values)
    with pytest.raises(ModelLoadError, match="config_values"):
        load_model(copy)


@pytest.mark.parametrize("keys", [[], ["BLOCK_M", "WARP_SPECIALIZE"], "BLOCK_M"])
def test_malformed_config_keys_refuse_to_load(copy, keys):
    _edit_json(copy / "schema.json", config_keys=keys)
    with pytest.raises(ModelLoadError, match="config_keys"):
        load_model(copy)


@pytest.mark.parametrize("record, why", [
    ({"config_keys": ["WARP_SPECIALIZE"]}, "config keys"),
    ({"config_values": {"BLOCK_M": []}}, "config values"),
    ({"config_values": {"BLOCK_M": [True]}}, "integers"),
    ({"config_values": {"BLOCK_M": [64.5]}}, "integers"),
    ({"config_values": {"BLOCK_M": 64}}, "integers"),
    ({"config_values": {"BLOCK_M": [64]}, "config_keys": ["BLOCK_M", "ITEMS"]}, "differ"),
    ({"config_values": {"WARP_SPECIALIZE": [1]}}, "config keys")])
def test_write_model_dir_refuses_unknown_config_keys_or_empty_values(trained, tmp_path,
                                                                     record, why):
    booster = lgb.Booster(model_file=str(trained / "model.txt"))
    with pytest.raises(ValueError, match=why):
        write_model_dir(tmp_path / "m", booster, "lgbm_regression", H100, {},
                        np.zeros((1, N_FEATURES), np.float32), **record)


def test_equal_scores_are_ordered_by_candidate_id(trained, tmp_path):
    # A model of single-leaf trees scores every candidate the same.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, N_FEATURES)).astype(np.float32)
    b = lgb.train(dict(objective="regression", verbosity=-1, min_data_in_leaf=1000, num_threads=1),
                  lgb.Dataset(X, np.ones(50), feature_name=list(FEATURE_NAMES)),
                  num_boost_round=2)
    write_model_dir(tmp_path / "flat", b, "lgbm_regression", H100, {"families_known": []}, X)
    m = load_model(tmp_path / "flat")
    cands = registry.candidates(GEOM, H100)
    ranked = m.rank(GEOM, list(reversed(cands)), H100)
    assert [c.id for c, _ in ranked] == sorted(c.id for c in cands)


# -- find_model -----------------------------------------------------------------------

def _fake_model_dir(root: Path, key: str, capability, sm_count: int) -> Path:
    d = root / key
    d.mkdir(parents=True)
    (d / "schema.json").write_text(json.dumps(
        {"gpu": {"key": key, "capability": list(capability), "sm_count": sm_count}}))
    return d


def test_find_model_exact_by_name_key_and_spec(tmp_path):
    d = _fake_model_dir(tmp_path, "h100", (9, 0), 132)
    for gpu in ("NVIDIA H100 80GB HBM3", "h100", "NVIDIA H100 PCIe", H100):
        assert find_model(gpu, root=tmp_path) == d
    assert MODELS_ROOT == Path(model_store.__file__).resolve().parent.parent / "models"


def test_find_model_nearest_same_architecture(tmp_path):
    h100 = _fake_model_dir(tmp_path, "h100", (9, 0), 132)
    _fake_model_dir(tmp_path, "a100", (8, 0), 108)
    found = find_model("NVIDIA H200", root=tmp_path)
    assert isinstance(found, tuple)
    path, note = found
    assert path == h100
    assert "NVIDIA H200" in note and "h100" in note and "sm_9x" in note
    assert find_model("NVIDIA H200", nearest=False, root=tmp_path) is None
    assert find_model("NVIDIA L40S", root=tmp_path)[0].name == "a100"


def test_find_model_prefers_same_minor_then_closest_sm_count(tmp_path):
    _fake_model_dir(tmp_path, "l40s", (8, 9), 142)
    _fake_model_dir(tmp_path, "a100", (8, 0), 108)
    _fake_model_dir(tmp_path, "a30", (8, 0), 56)
    a10 = DeviceSpec("a10", "NVIDIA A10", 72, 101376, (8, 6))
    assert find_model(a10, root=tmp_path)[0].name == "a30", "closest SM count"
    rtx = DeviceSpec("ada", "NVIDIA RTX 6000 Ada", 60, 101376, (8, 9))
    assert find_model(rtx, root=tmp_path)[0].name == "l40s", "same (major, minor) first"


def test_find_model_none_and_bad_input(tmp_path):
    _fake_model_dir(tmp_path, "a100", (8, 0), 108)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "schema.json").write_text("{not json")
    assert find_model("h100", root=tmp_path) is None, "no Hopper model"
    assert find_model("NVIDIA Quadro X9", root=tmp_path) is None, "unknown GPU: no nearest"
    assert find_model("h100", root=tmp_path / "absent") is None
    with pytest.raises(TypeError, match="name or a DeviceSpec"):
        find_model(132, root=tmp_path)
    with pytest.raises(ValueError, match="empty"):
        find_model(" ", root=tmp_path)


def test_find_model_returns_a_broken_exact_directory(copy):
    (copy / "schema.json").unlink()
    assert find_model("h100", root=copy.parent) == copy
    with pytest.raises(ModelLoadError, match="schema.json"):
        load_model(copy)


# -- through the dispatcher -----------------------------------------------------------

def test_set_chooser_uses_the_model_and_explain_shows_it(trained, clean_dispatcher):
    chooser = ModelChooser.load(trained)
    model = load_model(trained)
    set_chooser(chooser)
    dec = decide(GEOM, H100)
    assert dec.chooser == "model" and dec.model == model.identity
    ranked = model.rank(GEOM, registry.candidates(GEOM, H100), H100)
    assert dec.candidate == ranked[0][0]
    assert [c for c, _ in dec.ranked] == [c for c, _ in ranked]
    ex = explain(GEOM, gpu="h100")
    assert ex.model == model.identity and ex.chooser == "model"
    assert f"(model {model.identity})" in str(ex)
    assert ex.to_dict()["model"] == model.identity
    assert explain(GEOM, gpu="h100", chooser="rule").model is None


def _models_root(monkeypatch, root: Path) -> None:
    monkeypatch.setattr(model_store, "MODELS_ROOT", root)


def test_shipped_model_is_used_by_chooser_for(trained, tmp_path, monkeypatch, clean_dispatcher):
    shutil.copytree(trained, tmp_path / "h100")
    _models_root(monkeypatch, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chooser = selection.chooser_for(H100)
    assert chooser.identity == f"model-{load_model(trained).identity}"
    assert decide(GEOM, H100).chooser == "model"
    # An H200 has no model of its own: the H100 one, with a note.
    with pytest.warns(RuntimeWarning, match="nearest GPU"):
        assert selection.chooser_for(KNOWN["h200"]).identity == chooser.identity


@pytest.mark.parametrize("damage", ["truncated_model", "corrupt_schema_json", "corrupt_meta_json"])
def test_broken_shipped_model_falls_back_to_rules_with_one_warning(
        trained, tmp_path, monkeypatch, clean_dispatcher, damage):
    d = Path(shutil.copytree(trained, tmp_path / "h100"))
    path = _break(d, damage)
    _models_root(monkeypatch, tmp_path)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(3):
            assert selection.chooser_for(H100) is selection.RULE
        dec = decide(GEOM, H100)
        decide(ConvGeometry(n=1, c=32, k=32, h=8, w=8, r=1, s=1), H100)
    msgs = [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1, msgs
    assert path in msgs[0] and "rule chooser" in msgs[0]
    assert dec.chooser == "rule"


def test_broken_shipped_model_raises_in_strict_mode(trained, tmp_path, monkeypatch,
                                                    clean_dispatcher):
    d = Path(shutil.copytree(trained, tmp_path / "h100"))
    path = _break(d, "truncated_model")
    _models_root(monkeypatch, tmp_path)
    monkeypatch.setattr(settings, "_strict", True)
    with pytest.raises(ModelLoadError, match=path):
        selection.chooser_for(H100)
