"""Attention Lab's pure-NumPy core: attention, layers, a small causal transformer, sampling, training.

Shape legend used in every module:
    B batch, T sequence length, D d_model, H heads, d_k per-head size (D / H),
    V vocabulary, F feed-forward width.
"""
