"""The Ladder lesson: page.py draws it, prose.md teaches it, questions.py checks it, maths.py holds the rungs and
what the page computes from their shipped results (lessons/ladder/weights/, written by python -m tools.train_ladder)."""
