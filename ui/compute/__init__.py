"""Shared computations: the lessons' core calls cached once per process (cached, memo) and the models a page
can read (model_store).

How results are kept, one way per need:
- a computation whose result holds arrays (a lesson's matrices, a model, a corpus), asked for by every session
  with small arguments: `memo.shared`, one bounded dictionary per function (ui.cache.SharedCache: a result
  several sessions ask for at once is computed once), its arrays read-only;
- a finished heatmap (its JSON and description), keyed by its matrix, labels and settings: ui.drawing.render,
  in a SharedCache bounded in bytes;
- a pure function of constants (a prose file, a function's source, a chart design, a font, a colour sample, a
  lesson's questions built from its defaults): `functools.cache` or `functools.lru_cache` where it lives.
Nothing uses st.cache_data (it copies every result on every call) or st.cache_resource.
"""
