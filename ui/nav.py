"""The app's pages in teaching order: one list that the navigation, the home page and the lesson path share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Lesson:
    path: str  # file under lessons/
    title: str
    url_path: str
    icon: str
    step: str  # the pipeline step it explains, for the home page


LESSONS = [
    Lesson("lessons/qkv.py", "QKV projection", "qkv", "🔑", "embeddings → Q, K, V → scores"),
    Lesson("lessons/scaling.py", "Scaling", "scaling", "📏", "scores ÷ √d_k → softmax"),
    Lesson("lessons/masking.py", "Masking", "masking", "🎭", "causal mask → weighted sum"),
    Lesson("lessons/multi_head.py", "Multi-head", "multi-head", "🧩", "heads → concat → W_O"),
    Lesson("lessons/full_model.py", "Full model", "model", "🧠", "blocks → logits → next token"),
    Lesson("lessons/training.py", "Training", "training", "🏋️", "loss → gradients → learning"),
]


def available() -> list[Lesson]:
    """Lessons whose page file exists (a page still being written is left out, not broken)."""
    return [lesson for lesson in LESSONS if (ROOT / lesson.path).exists()]
