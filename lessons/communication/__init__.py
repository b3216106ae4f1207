"""The Context and order lesson: page.py draws it, prose.md teaches it, questions.py checks it,
maths.py computes what only it draws."""
