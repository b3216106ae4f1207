"""Set-ups several lessons share: small seeded examples and experiments built from the model's parts (one head,
the mask conventions and a query row worked by hand, knocking out heads, the measures the lessons print and the
set-ups' argument checks, the word model and its measured heads).

Nothing here is part of the model. Each function gathers the arrays the lessons draw; the maths itself
(softmax, masks, attention) comes from core.attention. A set-up that one lesson alone runs lives in that
lesson's folder, as lessons/<lesson>/maths.py.
"""
