"""ui.compute.model_store: listing, loading and caching saved models, and the seeded random model."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from core.model import ModelConfig, forward, init_params
from core.model_file import save
from core.tokenize import CharTokenizer
from ui.compute import model_store

CORPUS = "hello world, the attention lab.\n"


def save_tiny(folder, name: str, tokenizer: dict | None = None, seed: int = 0, task: dict | None = None,
              **cfg_overrides) -> ModelConfig:
    tok = CharTokenizer.fit(CORPUS)
    cfg = ModelConfig(**{**dict(vocab_size=tok.vocab_size, d_model=8, n_heads=2, n_layers=1, max_len=16),
                         **cfg_overrides})
    params = init_params(cfg, np.random.default_rng(seed))
    meta = {"tokenizer": tokenizer or tok.to_dict(), "val_loss": 1.25, "corpus": "test"}
    if task:
        meta["task"] = task
    save(folder / name, params, cfg, meta)
    return cfg


@pytest.fixture
def weights(tmp_path, monkeypatch):
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)
    return tmp_path


def test_no_folder_means_no_models(tmp_path, monkeypatch):
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path / "missing")
    assert model_store.shipped_models() == []
    assert model_store.char_models() == []
    assert model_store.default_model() is None


def test_lists_only_complete_pairs(weights):
    save_tiny(weights, "char_a")
    (weights / "orphan.json").write_text("{}")  # no .npz beside it
    assert model_store.shipped_models() == ["char_a"]


def test_char_models_put_char_names_first_and_skip_other_tokenizers_and_tasks(weights):
    save_tiny(weights, "aaa_chars")
    save_tiny(weights, "char_small")
    save_tiny(weights, "words", tokenizer={"kind": "word", "words": ["a"]})
    save_tiny(weights, "copy", task={"kind": "copy", "length": 8})  # a synthetic task, not a language model
    assert model_store.char_models() == ["char_small", "aaa_chars"]
    assert model_store.load_model("copy").trained  # still loadable by name
    assert model_store.default_model() == "char_small"


def test_load_model_returns_trained_read_only_weights(weights):
    cfg = save_tiny(weights, "char_tiny")
    m = model_store.load_model("char_tiny")
    assert m.trained and m.name == "char_tiny" and m.cfg == cfg
    assert m.meta["val_loss"] == 1.25
    assert m.tokenizer.decode(m.tokenizer.encode("hello")) == "hello"
    assert m.tokenizer.vocab_size == cfg.vocab_size
    with pytest.raises(ValueError):
        m.params["wte"][0, 0] = 1.0  # shared by every session: must not be writable
    with pytest.raises(ValueError):
        m.params["blocks"][0]["attn"]["w_qkv"][0, 0] = 1.0
    logits, _ = forward(m.params, m.cfg, m.tokenizer.encode("hello"))
    assert logits.shape == (5, cfg.vocab_size)


def test_load_model_is_cached_and_reloads_a_changed_file(weights):
    save_tiny(weights, "char_tiny", seed=0)
    first = model_store.load_model("char_tiny")
    assert model_store.load_model("char_tiny") is first  # loaded once, shared
    save_tiny(weights, "char_tiny", seed=1)  # retrained: new weights under the same name
    stamp = first.source[2] + 10**9
    for suffix in (".json", ".npz"):
        os.utime(weights / f"char_tiny{suffix}", ns=(stamp, stamp))
    second = model_store.load_model("char_tiny")
    assert second is not first
    assert not np.array_equal(second.params["wte"], first.params["wte"])


@pytest.mark.parametrize("name", ["nope", "../char_tiny", "char_tiny.json", ""])
def test_unknown_names_raise_value_error(weights, name):
    save_tiny(weights, "char_tiny")
    with pytest.raises(ValueError, match="no saved model"):
        model_store.load_model(name)


def test_word_model_cannot_be_loaded_as_characters(weights):
    save_tiny(weights, "words", tokenizer={"kind": "word", "words": ["a"]})
    with pytest.raises(ValueError, match="does not read characters"):
        model_store.load_model("words")


def test_vocabulary_mismatch_is_reported(weights):
    save_tiny(weights, "char_bad", tokenizer={"kind": "char", "chars": "ab"})
    with pytest.raises(ValueError, match="token ids"):
        model_store.load_model("char_bad")


def test_broken_json_is_reported(weights):
    save_tiny(weights, "char_broken")
    (weights / "char_broken.json").write_text(json.dumps({"config": {"vocab_size": 3}}))
    with pytest.raises(ValueError, match="could not be read"):
        model_store.load_model("char_broken")


def test_random_model_is_seeded_read_only_and_ascii():
    a, b, c = model_store.random_model(3), model_store.random_model(3), model_store.random_model(4)
    assert not a.trained
    assert a is b  # cached: built once per seed
    assert not np.array_equal(a.params["wte"], c.params["wte"])
    assert (a.cfg.d_model, a.cfg.n_heads, a.cfg.n_layers, a.cfg.max_len) == (64, 4, 2, 64)
    assert a.cfg.vocab_size == a.tokenizer.vocab_size == len(model_store.RANDOM_CHARS) + 1  # + unknown
    assert all(a.tokenizer.stoi[ch] > 0 for ch in "The attention lab!~ \n")
    assert a.tokenizer.encode("😀é").tolist() == [0, 0]
    with pytest.raises(ValueError):
        a.params["ln_f"]["g"][0] = 2.0
    logits, trace = forward(a.params, a.cfg, a.tokenizer.encode("The cat"))
    assert logits.shape == (7, a.cfg.vocab_size)
    assert trace.layers[0].weights.shape == (4, 7, 7)


def test_random_model_like_a_shipped_one_copies_its_shape_and_tokenizer(weights):
    cfg = save_tiny(weights, "char_tiny")
    twin = model_store.random_model(7, like="char_tiny")
    trained = model_store.load_model("char_tiny")
    assert twin.cfg == cfg and not twin.trained
    assert twin.tokenizer.itos == trained.tokenizer.itos
    assert not np.array_equal(twin.params["wte"], trained.params["wte"])


def test_from_source_gives_back_the_same_model(weights):
    save_tiny(weights, "char_tiny")
    for m in (model_store.load_model("char_tiny"), model_store.random_model(5)):
        assert model_store.from_source(m.source) is m
    with pytest.raises(ValueError):
        model_store.from_source(("nowhere", 1))


def test_the_session_shelf_is_made_once_and_keeps_the_newest_models():
    state: dict = {}
    shelf = model_store.session_shelf(state)
    assert shelf == {} and model_store.session_shelf(state) is shelf is state[model_store.SESSION_KEY]
    base = model_store.random_model(0)
    named = [model_store.Model(f"run {i}", base.params, base.cfg, base.tokenizer, {}, True, ("session", f"run {i}", 1))
             for i in range(model_store.MAX_SESSION_MODELS + 1)]
    for model in named:
        model_store.add_session_model(shelf, model)
    assert list(shelf) == [m.name for m in named[1:]]  # the oldest went first
    model_store.add_session_model(shelf, named[2])  # a newer snapshot of a kept run moves to the end
    assert list(shelf)[-1] == "run 2" and len(shelf) == model_store.MAX_SESSION_MODELS


def test_a_model_added_to_the_folder_is_listed_at_once(weights):
    save_tiny(weights, "char_a")
    assert model_store.shipped_models() == ["char_a"]
    save_tiny(weights, "char_b")
    os.utime(weights, ns=(time.time_ns(), weights.stat().st_mtime_ns + 1_000_000))  # a later deploy's folder
    assert model_store.shipped_models() == ["char_a", "char_b"]
