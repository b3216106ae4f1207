"""Set-ups several lessons share: small seeded examples and experiments built from the model's parts (one head
and its multi-head form, a word in context and the mask conventions, knocking out heads, the measures the
lessons print, the word model's heads).

Nothing here is part of the model. Each function gathers the arrays the lessons draw; the maths itself
(softmax, masks, attention) comes from core.attention. A set-up that one lesson alone runs lives in that
lesson's folder, as lessons/<lesson>/maths.py.
"""
