"""Set-ups the lessons run: small seeded examples and experiments built from the model's parts.

Nothing here is part of the model. Each function gathers, for one lesson, the arrays it draws; the maths
itself (softmax, masks, attention) comes from core.attention.
"""
