"""The computations the lesson pages draw, cached once per process and shared by every session.

A lesson page is a script that runs again on every slider move, so a cache wrapper made in it would be
made anew each time, and Streamlit would hash the function's source again: about 1 ms a wrapper, every
rerun. Made here, in a module imported once, each wrapper is built once.

The results are kept once per process in plain dictionaries and shared read-only (ui.compute.memo), not copied
out of st.cache_data on every call.
"""

from __future__ import annotations

from core.demos import heads, word_heads
from ui.compute.memo import Shared

single_head = Shared(heads.single_head, 256)
# the toy-English model on a sentence (the word lessons' trained weights)
trained_attention = Shared(word_heads.trained_attention, 128)
trained_layer = Shared(word_heads.layer_heads, 128)
