"""The Training lesson: page.py draws it, prose.md teaches it, questions.py checks it."""
