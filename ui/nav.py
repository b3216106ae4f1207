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
    try_this: tuple[str, ...] = ()  # the guided path: what to try on this page, in order


LESSONS = [
    Lesson("lessons/qkv.py", "QKV projection", "qkv", ":material/key:", "embeddings → Q, K, V → scores", (
        "Type a sentence with a repeated word: its rows in X, Q, K and V are identical.",
        "Click a row of the weights: the table shows that token's output as a weighted sum of value rows.",
        "Read that row worked by hand below: each dot product equals its cell of the scores, then the softmax.",
        "Change the seed: new random projections, new scores, same shapes.",
    )),
    Lesson("lessons/scaling.py", "Scaling", "scaling", ":material/straighten:", "scores ÷ √d_k → softmax", (
        "Set d_k to 512 and switch scaling off: the weights collapse onto one key per row.",
        "Switch scaling back on at d_k = 512: the rows spread out again.",
        "Read the saturation curves: unscaled max weight climbs to 1 as d_k grows; scaled stays flat.",
    )),
    Lesson("lessons/masking.py", "Masking", "masking", ":material/visibility_off:", "causal mask → weighted sum", (
        "Compare the weights with and without the mask: the upper triangle becomes exactly 0.",
        "Look at row 0 under the mask: the first token can only attend to itself, weight 1.",
        "Compare the three ways to write the mask (allowed, blocked with np.triu, additive −∞): same weights.",
        "Change a later token in the no-peeking check: earlier outputs do not move at all.",
    )),
    Lesson("lessons/multi_head.py", "Multi-head", "multi-head", ":material/view_column:", "heads → concat → W_O", (
        "Go from 1 head to 4 at the same d_model: each head gets d_model / 4 dimensions and its own pattern.",
        "Check the three implementations: their largest difference is at float rounding, about 1e-16.",
    )),
    Lesson("lessons/communication.py", "Context and order", "communication", ":material/forum:",
           "tokens talk: context, order, cross-attention", (
        "Compare the two sentences: the shared word gets two outputs, with a cosine similarity below 1.",
        "Read the cross-attention map: sentence 1's queries against sentence 2's keys, a (T₁, T₂) matrix.",
        "Shuffle the words with positions off: every output row moves with its word, nothing else changes.",
        "Switch positional encodings on: the same shuffle now changes the outputs themselves.",
        "Compare the encoder and the decoder: the same sentence, the mask decides who hears whom.",
        "Move the recurrence's keep share: token 0 fades over the steps; attention reaches it in one.",
    )),
    Lesson("lessons/tiles.py", "Attention in tiles", "tiles", ":material/grid_view:", "one block of keys at a time", (
        "Move 'Blocks folded in so far' up one at a time: m only goes up, and the rescale factor drops below 1 "
        "exactly where it does.",
        "At the last block the tiled output equals the full softmax to about 1e-16, whatever the block size.",
        "Type T = 100,000 in the memory panel: the full score matrix takes tens of gigabytes, one tile megabytes.",
    )),
    Lesson("lessons/bigram.py", "Bigram model", "bigram", ":material/text_fields:", "counts → probabilities → text", (
        "Read a row of the probability table: with its 'other' column it sums to 1, as the table beside it shows.",
        "Set the smoothing alpha to 0: the sample uses only pairs seen in the text, and the held-out loss is infinite.",
        "Compare the bigram loss with the transformer's on the same held-out text: the transformer's is lower.",
        "Choose 'Your own text' and type 'la la la' many times: now the bigram model beats the transformer.",
    )),
    Lesson("lessons/full_model.py", "Full model", "model", ":material/psychology:", "blocks → logits → next token", (
        "Move the temperature to 0: all probability goes to one character. Move it to 2: the bars flatten.",
        "Generate twice with the same seed: the same text. Change the seed: different text.",
        "Type a length of 100,000 in the cost panel: one head's attention matrix alone is gigabytes.",
    )),
    Lesson("lessons/circuit.py", "Induction circuit", "circuit", ":material/repeat:",
           "previous-token head → induction head", (
        "At the defaults, read the two maps: layer 1 · head 2 looks one letter back, layer 2 · head 2 at the "
        "letter after the earlier copy of the current one.",
        "Compare the mean losses: near 0 on the repeat, far above ln 24 on the first copy.",
        "Switch off layer 1 · head 2, then layer 2 · head 2: the repeat's loss jumps by several nats; the other "
        "two heads barely move it.",
        "Choose 'typed' and type a stretch of your own twice: the induction head copies it too.",
    )),
    Lesson("lessons/training.py", "Training", "training", ":material/model_training:", "loss → gradients → learning", (
        "Train the copy task and watch one head's map turn into a shifted diagonal.",
        "Compare the loss curve with the bigram baseline line: attention is what takes it below.",
    )),
]


def by_path(path: str) -> Lesson:
    return next(lesson for lesson in LESSONS if lesson.path == path)


def neighbours(path: str) -> tuple[Lesson | None, Lesson | None]:
    """The previous and next available lessons in teaching order."""
    lessons = available()
    i = next(i for i, lesson in enumerate(lessons) if lesson.path == path)
    return (lessons[i - 1] if i > 0 else None), (lessons[i + 1] if i + 1 < len(lessons) else None)


def available() -> list[Lesson]:
    """Lessons whose page file exists (a page still being written is left out, not broken)."""
    return [lesson for lesson in LESSONS if (ROOT / lesson.path).exists()]
