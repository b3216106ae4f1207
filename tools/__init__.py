"""Tools around core that a lesson never needs: the training command line, checkpoints, process tuning.

    python -m tools.train --data pydoc --steps 3000 --out core/weights/pydoc_char
"""
