"""Sections that several lessons draw: token lines and heatmaps side by side, the Query row and its worked
example, the layers x heads grid, the head knockout table and the model's maps."""
