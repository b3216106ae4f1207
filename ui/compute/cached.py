"""The computations several lessons draw, cached once per process and shared by every session: the toy-English
model reading a sentence, which the word lessons' trained sections draw (ui.sections.trained_views, Multi-head).

A lesson page is a script that runs again on every slider move, so a cache wrapper made in it would be
made anew each time, and Streamlit would hash the function's source again: about 1 ms a wrapper, every
rerun. Made in a module imported once, each wrapper is built once: here for what lessons share, and in the
lesson's own folder for what one lesson alone draws (its cached.py).

The results are kept once per process in plain dictionaries and shared read-only (ui.compute.memo), not copied
out of st.cache_data on every call.
"""

from __future__ import annotations

from core.demos import word_heads
from ui.compute.memo import shared

# the toy-English model on a sentence (the word lessons' trained weights)
trained_attention = shared(128)(word_heads.trained_attention)
