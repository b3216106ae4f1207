"""Tests for core/tokenize.py (word and character tokenizers) and core/costs.py (parameters, memory, FLOPs).

Shapes: T sequence length, D embedding width / d_model, H heads, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.costs import (
    attention_costs,
    attention_flops,
    attention_memory,
    attention_params,
    count_params,
    human_bytes,
    kv_cache_bytes,
    memory_curves,
    param_count,
)
from core.model import ModelConfig, init_params
from core.tokenize import CharTokenizer, attaches, draws_nothing, word_embeddings, word_tokens

# ---- word tokens and embeddings -----------------------------------------------------------------


def test_word_tokens_sentence():
    assert word_tokens("The cat sat on the mat.") == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert word_tokens("The cat sat on the mat.", max_tokens=3) == ["The", "cat", "sat"]
    assert word_tokens("Hi, you!") == ["Hi", ",", "you", "!"]
    assert word_tokens("") == [] and word_tokens("   \n\t") == []


@pytest.mark.parametrize(
    "text, must_contain",
    [
        ("naïve café déjà vu", ["naïve", "café"]),
        ("東京は晴れ。", ["。"]),
        ("Привет, мир!", ["Привет", "мир"]),
        ("مرحبا بالعالم", ["مرحبا"]),
        ("I 😀 emoji 🐍🐍", ["😀", "emoji"]),
        ("नमस्ते दुनिया", []),
        ("\u200b\ufeff zero-width", ["zero"]),
    ],
)
def test_word_tokens_any_script(text, must_contain):
    tokens = word_tokens(text)
    assert tokens and all(isinstance(t, str) and t for t in tokens)
    for tok in must_contain:
        assert tok in tokens
    emb = word_embeddings(tokens, 8)
    assert emb.shape == (len(tokens), 8) and np.all(np.isfinite(emb))


@pytest.mark.parametrize(("text", "tokens"), [
    ("👩\u200d💻 codes ❤\ufe0f!", ["👩\u200d💻", "codes", "❤\ufe0f", "!"]),  # joiner and variation selector inside
    ("👍🏽 1\ufe0f\u20e3 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
     ["👍🏽", "1\ufe0f\u20e3", "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"]),
    ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),  # Python's \w stops at the virama and the vowel signs
    ("cafe\u0301s naïve", ["cafe\u0301s", "naïve"]),  # a combining accent stays in its word
    ("می\u200cخواهم", ["می\u200cخواهم"]),  # a non-joiner inside a Persian word
    ("a\u200bb \ufeff \u200d \ufe0f \x00 c", ["a", "b", "c"]),  # what draws nothing alone is no token
    ("😀😀 hi👋", ["😀", "😀", "hi", "👋"]),
])
def test_word_tokens_keep_what_a_reader_sees_as_one(text, tokens):
    assert word_tokens(text) == tokens


def test_no_word_token_draws_nothing():
    """Every token shows something on a chart's axis or in the tokens line: none is made only of joiners,
    variation selectors, marks, format or control characters."""
    text = "".join(chr(c) for c in [*range(0, 0x250), *range(0x2000, 0x2070), *range(0xfe00, 0xfe10), 0xfeff,
                                    0x1f469, 0x200d, 0x1f4bb, 0x1f3fd, 0xe0067, 0xe007f])
    tokens = word_tokens(text)
    assert tokens and not [t for t in tokens if all(map(draws_nothing, t))]
    assert tokens[-1].startswith("👩\u200d💻🏽") and attaches("🏽") and not attaches("👩")


def test_ascii_text_is_split_as_any_other():
    """ASCII text takes a shorter way (no marks, no joiners): it splits as the general way does."""
    ascii_text = "".join(map(chr, range(128))) + " The cat_1 sat, on the mat... 3.14 a-b\x7f"
    assert word_tokens(ascii_text) == word_tokens(ascii_text + " é")[:-1]
    assert word_tokens(ascii_text, 5) == word_tokens(ascii_text)[:5]


def test_word_tokens_rejects_non_text():
    with pytest.raises(ValueError, match="text"):
        word_tokens(None)  # type: ignore[arg-type]


def test_word_embeddings_same_word_same_row():
    tokens = word_tokens("The cat sat on the mat.")
    e = word_embeddings(tokens, 16, seed=3)
    assert e.shape == (7, 16)
    np.testing.assert_array_equal(e[0], e[4])  # "The" and "the": case-insensitive
    assert not np.allclose(e[1], e[2])
    # The same word gets the same vector in another sentence, and on another call.
    other = word_embeddings(["a", "cat"], 16, seed=3)
    np.testing.assert_array_equal(other[1], e[1])
    np.testing.assert_array_equal(word_embeddings(tokens, 16, seed=3), e)
    assert not np.allclose(word_embeddings(tokens, 16, seed=4), e)


def test_word_embeddings_are_roughly_standard_normal():
    e = word_embeddings([f"w{i}" for i in range(200)], 50)
    assert abs(e.mean()) < 0.05 and 0.9 < e.std() < 1.1


def test_word_embeddings_edge_cases():
    assert word_embeddings([], 4).shape == (0, 4)
    with pytest.raises(ValueError, match="width"):
        word_embeddings(["a"], 0)


# ---- characters ---------------------------------------------------------------------------------


def test_char_tokenizer_round_trip():
    tok = CharTokenizer.fit("hello world")
    assert tok.vocab_size == len(set("hello world")) + 1  # + the unknown id 0
    ids = tok.encode("hold the owl")[:4]
    assert ids.dtype == np.int64 and np.all(ids > 0)
    for text in ["hello", "world hello", "", "lol"]:
        assert tok.decode(tok.encode(text)) == text
    assert tok.itos[0] == CharTokenizer.UNKNOWN


def test_char_tokenizer_unknown_characters():
    tok = CharTokenizer("abc ")
    ids = tok.encode("a zebra 🦓")
    assert ids.tolist()[:2] == [tok.stoi["a"], tok.stoi[" "]]
    assert ids[2] == 0 and ids[-1] == 0
    assert tok.decode(ids) == "a \ufffd\ufffdb\ufffda \ufffd"
    assert tok.unknown("a zebra 🦓") == ["z", "e", "r", "🦓"]
    assert tok.decode([99, -1, 1]) == "\ufffd\ufffd" + tok.itos[1]


def test_char_tokenizer_dict_round_trip():
    tok = CharTokenizer("The quick brown fox — naïve 😀\n")
    d = json.loads(json.dumps(tok.to_dict()))
    again = CharTokenizer.from_dict(d)
    assert again.itos == tok.itos and again.vocab_size == tok.vocab_size
    text = "quick 😀 fox?"
    np.testing.assert_array_equal(again.encode(text), tok.encode(text))


@pytest.mark.parametrize("corpus", ["", "\ufffd"])
def test_char_tokenizer_needs_characters(corpus):
    with pytest.raises(ValueError, match="at least one character"):
        CharTokenizer.fit(corpus)


# ---- costs --------------------------------------------------------------------------------------

CONFIGS = [
    dict(vocab_size=5, d_model=4, n_heads=2, n_layers=1, max_len=8),
    dict(vocab_size=65, d_model=64, n_heads=4, n_layers=2, max_len=128),
    dict(vocab_size=65, d_model=64, n_heads=4, n_layers=2, max_len=128, pos_encoding="learned"),
    dict(vocab_size=30, d_model=24, n_heads=3, n_layers=3, max_len=16, d_ff=50, pos_encoding="learned"),
]


@pytest.mark.parametrize("kw", CONFIGS)
def test_param_count_matches_initialised_params(kw):
    cfg = ModelConfig(**kw)
    counts = param_count(cfg)
    assert counts["total"] == count_params(init_params(cfg, np.random.default_rng(0)))
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    assert ("positional table" in counts) == (cfg.pos_encoding == "learned")


def test_param_count_by_hand():
    # V=5, D=4, F=8, one layer: wte 20; attention 48 + 12 + 16 + 4 = 80; MLP 32 + 8 + 32 + 4 = 76;
    # two layer norms 16; final layer norm 8: 200 in all (+ 8 * 4 = 32 with a learned table).
    cfg = ModelConfig(vocab_size=5, d_model=4, n_heads=2, n_layers=1, max_len=8, d_ff=8)
    assert param_count(cfg)["total"] == 200
    assert param_count(ModelConfig(**{**cfg.to_dict(), "pos_encoding": "learned"}))["total"] == 232


def test_attention_memory():
    m = attention_memory(100_000, dtype="float16")
    assert m["per_head"] == 20_000_000_000 == 2e10  # 1e10 weights x 2 bytes: ~20 GB for one matrix
    m = attention_memory(1000, n_heads=8, n_layers=6, dtype="float32")
    assert (m["per_head"], m["per_layer"], m["total"]) == (4_000_000, 32_000_000, 192_000_000)
    assert human_bytes(2e10) == "20.0 GB" and human_bytes(512) == "512 B"
    with pytest.raises(ValueError, match="dtype"):
        attention_memory(10, dtype="float8")
    for bad in (0, -5, 2.5):
        with pytest.raises(ValueError, match="sequence length"):
            attention_memory(bad)


def test_attention_flops_by_hand():
    # T=2, D=4: Q, K, V projections 2*4*12 = 96 multiply-adds, output 2*4*4 = 32 -> (96 + 32) * 2 = 256 FLOPs;
    # scores 2*2*4 = 16 and weights @ V 16 multiply-adds -> 64 FLOPs; 320 per layer.
    f = attention_flops(2, 4)
    assert (f["projections"], f["scores_and_mix"], f["per_layer"], f["total"]) == (256, 64, 320, 320)
    assert attention_flops(2, 4, n_layers=3)["total"] == 960
    # Past T ~ D the quadratic part takes over.
    big = attention_flops(4096, 64)
    assert big["scores_and_mix"] > big["projections"]


def test_kv_cache_bytes():
    assert kv_cache_bytes(10, 8, 2) == 2 * 10 * 8 * 2 * 4
    assert kv_cache_bytes(10, 8, 2, dtype="float16") == 640


def test_attention_params_is_the_attention_part_of_param_count():
    assert attention_params(4) == 80  # the hand count above: 48 + 12 + 16 + 4
    cfg = ModelConfig(**CONFIGS[1])
    assert param_count(cfg)["attention (W_qkv, W_o)"] == cfg.n_layers * attention_params(cfg.d_model)


def test_attention_costs_gathers_memory_flops_and_cache():
    cfg = ModelConfig(**CONFIGS[1])  # D = 64, 4 heads, 2 layers
    c = attention_costs(100_000, cfg, "float16")
    assert c["per_head"] == 2e10 and c["maps"] == 2e10 * 4 * 2
    assert c["kv_cache"] == kv_cache_bytes(100_000, 64, 2, "float16")
    flops = attention_flops(100_000, 64, 2)
    assert (c["flops"], c["flops_per_layer"]) == (flops["total"], flops["per_layer"])
    assert c["quadratic_share"] == pytest.approx(flops["scores_and_mix"] / flops["per_layer"])
    assert attention_costs(1, cfg)["quadratic_share"] < 0.01 < 0.99 < c["quadratic_share"]


def test_memory_curves_grow_like_t_squared_t_and_one():
    cfg = ModelConfig(**CONFIGS[1])
    lengths, curves = memory_curves(cfg, "float32")
    assert lengths[0] == 16 and lengths[-1] == 2**20 and list(curves) == ["attention maps", "KV cache", "parameters"]
    assert curves["attention maps"][0] == attention_memory(16, 4, 2, "float32")["total"]
    assert curves["KV cache"][-1] == kv_cache_bytes(2**20, 64, 2, "float32")
    assert (curves["parameters"] == param_count(cfg)["total"] * 4).all()
    # doubling T: x4 for the maps, x2 for the cache, x1 for the weights (slopes 2, 1, 0 on log-log axes)
    np.testing.assert_array_equal(curves["attention maps"][1:] / curves["attention maps"][:-1], 4)
    np.testing.assert_array_equal(curves["KV cache"][1:] / curves["KV cache"][:-1], 2)
    lengths, curves = memory_curves(cfg, "float16", lengths=[1, 10])
    assert list(lengths) == [1, 10] and list(curves["KV cache"]) == [512, 5120]
