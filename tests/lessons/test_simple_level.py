"""The Simple level keeps its promise: the ideas, the pictures and the questions, and no formulas.

Every lesson is rendered at the Simple level (the word lessons with random and with trained weights), its
"Check yourself" questions open, and every text a reader reads is searched for a formula: the Markdown, the
captions, the boxes, the tables' headings and text cells, and each shown question's prompt, options and
explanation. What names a picture rather than explaining it (a chart's title and shape line, a metric's or a
control's label) is the same at both levels, so that a Simple and a Technical reader of one link see one
picture under one name: it is not searched. A formula is LaTeX, a formula's symbol (Σ, ε, Φ, ⊙, x̂, ∈), a
function applied to an expression (softmax(…), exp(…), log2(…)), −log or ln of something, a root of an
expression or a division by a root, e to a power, or an equation whose right side is an expression of symbols
(q = x W_Q; D = 48 is a setting, not a formula). Shapes such as (T, d_k) = (7, 8) are not formulas.

A question names the section (prose part) it asks about; at the Simple level no question about a section
that level hides is shown.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from lessons import COURSE
from tests.apptest_helpers import for_lesson, ok, run_page, shown_tables
from ui.frame import exercises, prose

SHAPES = re.compile(r"shape \([^)]*\)(?: = \([^)]*\))?|\((?:[A-Za-z_0-9·₁₂ ]+,)+[A-Za-z_0-9·₁₂ +−-]*\)")
FORMULA = {
    "LaTeX": re.compile(r"\\[a-zA-Z]{2,}\b|\$[^$\s][^$]*\$"),
    "a formula's symbol": re.compile(r"[Σ∑∏∂∇⊙Φε∈]|x̂"),
    "a function applied": re.compile(
        r"\b(?:exp|log2?|ln|sin|cos|tanh|softmax|GELU|ReLU|LN|FFN|Var|argmax|max|PE|MultiHead|Attention)\((?!\))"),
    "a function of an expression": re.compile(r"\b[A-Za-z][\w-]*\((?:[A-Za-z_][\w]*\(|[^()]*[+·/])"),
    "a logarithm": re.compile(r"(?<![A-Za-z])[−-]\s?(?:log|ln)\b|\bln\s?(?:\d|[A-Z]\b)|\blog2\s?\d"),
    "a root": re.compile(r"√\(|[/÷]\s?√"),
    "a power of e": re.compile(r"\be\s?\^|\be[⁰¹²³⁻⁺]"),
    "an equation": re.compile(
        r"(?<![\w.`])[A-Za-z][\wᵀ'₀-₉]*(?:\[[^\]]*\]|\([^)]*\))?\s=\s(?=[A-Za-z(|√∑Σ]|[−-][A-Za-z])"),
}
WORD_LESSONS = {"qkv", "multi-head", "communication"}  # the lessons with a trained-weights view
VIEWS = [(lesson.url_path, weights) for lesson in COURSE
         for weights in (("random", "trained") if lesson.url_path in WORD_LESSONS else ("random",))]


def formulas(text: str) -> list[str]:
    """Each formula the text holds, with a little of the text around it."""
    text = SHAPES.sub("", text)
    return [f"{kind}: …{text[max(0, m.start() - 40): m.end() + 40]}…".replace("\n", " ")
            for kind, pattern in FORMULA.items() for m in pattern.finditer(text)]


def test_the_search_finds_formulas_and_leaves_plain_text():
    for formula in ("q = x W_Q", "softmax(Q Kᵀ / √d_k)", "√(var + ε)", "−log P(next)", "ln 24 = 3.18",
                    "PE[p, 2i] = sin(p / 10000^(2i/D))", "z_i = Σ_j a_ij v_j", "exp(m_old − m_new)",
                    "since e^−∞ = 0", "d_k = D / H", "Q Kᵀ / √d_k", r"\frac{a}{b}", "x + attn(ln_1(x))",
                    "ln_1(x + attn(x))", "then + ffn(ln_2(·))"):
        assert formulas(formula), formula
    for plain in ("D = 48 and d_k = 12", "Q · shape (7, 8) = (T, d_k)", "the dog sat on the log", "the weights of "
                  "the softmax (0 puts everything on one key)", "a · b = 0.866, positive", "log-log axes",
                  "z(mat) = 0.05·v(The) + 0.02·v(cat)", "cosine 0.59 after layer 1", "scores divided by √d_k"):
        assert not formulas(plain), (plain, formulas(plain))


def simple_page(url_path: str, weights: str):
    lesson = next(lesson for lesson in COURSE if lesson.url_path == url_path)
    query = {"level": "simple", **({"weights": weights} if weights != "random" else {})}
    return ok(run_page(lesson.path, query, timeout=300, opened=[exercises.open_key(url_path)]))


def reading(at) -> list[str]:
    """What a reader reads on the page: running text, boxes, and the tables' headings and text cells."""
    found = [str(el.value) for kind in ("markdown", "caption", "info", "warning", "error", "success", "header")
             for el in getattr(at, kind)]
    for frame in shown_tables(at):  # a column of numbers comes back as numbers: the text columns are left
        found += [str(c) for c in frame.columns]
        found += [str(x) for column in frame.columns if pd.api.types.is_string_dtype(frame[column])
                  for x in frame[column]]
    return found


@pytest.mark.parametrize(("url_path", "weights"), VIEWS, ids=[f"{u}-{w}" for u, w in VIEWS])
def test_the_simple_level_shows_no_formula(url_path, weights):
    at = simple_page(url_path, weights)
    assert not at.latex, [el.value for el in at.latex]
    assert not any(e.label == "Show the code" for e in at.expander)
    found = [f for text in reading(at) for f in formulas(text)]
    assert not found, "\n".join(found)
    # a part hidden at this level leaves nothing behind: no empty caption or paragraph where it was
    assert all(str(el.value).strip() for kind in ("markdown", "caption") for el in getattr(at, kind))


@pytest.mark.parametrize("lesson", list(COURSE), ids=[lesson.url_path for lesson in COURSE])
def test_the_questions_shown_at_the_simple_level_hold_no_formula(lesson, monkeypatch):
    monkeypatch.setattr(prose, "technical", lambda: False)
    from ui.frame import page
    shown = page.shown_questions(lesson.name, for_lesson(lesson.url_path))
    found = [f"{ex.id}: {f}" for ex in shown for text in (ex.prompt, *ex.options, ex.explanation)
             for f in formulas(text)]
    assert not found, "\n".join(found)
    assert all(not ex.code for ex in shown), [ex.id for ex in shown if ex.code]  # code is Technical


@pytest.mark.parametrize("lesson", list(COURSE), ids=[lesson.url_path for lesson in COURSE])
def test_every_question_names_its_section_and_simple_hides_those_of_hidden_sections(lesson, monkeypatch):
    parts = prose.parts(lesson.name)
    questions = for_lesson(lesson.url_path)
    for ex in questions:
        assert ex.part in parts, f"{lesson.name}: question {ex.id!r} names no prose part of the lesson ({ex.part!r})"
    from ui.frame import page
    monkeypatch.setattr(prose, "technical", lambda: False)
    hidden = prose.technical_parts(lesson.name)
    assert all(ex.part not in hidden for ex in page.shown_questions(lesson.name, questions))
    monkeypatch.setattr(prose, "technical", lambda: True)
    assert page.shown_questions(lesson.name, questions) == tuple(questions)


@pytest.mark.parametrize("url_path", ["scaling", "masking"])
def test_a_question_about_a_technical_section_is_not_drawn_at_the_simple_level(url_path):
    """Scaling's √d_v bug and Masking's two mistakes sit in sections the Simple level hides."""
    technical = [ex for ex in for_lesson(url_path)
                 if ex.part in prose.technical_parts(next(x.name for x in COURSE if x.url_path == url_path))]
    assert technical
    at = simple_page(url_path, "random")
    drawn = "\n".join(str(m.value) for m in at.markdown)
    for ex in technical:
        assert ex.prompt[:40] not in drawn, ex.id


def test_the_glossary_at_the_simple_level_shows_no_formula():
    """Its entries' definitions and explanations (the formula: lines are Technical), and the short definitions
    that every lesson's links carry on hover."""
    from lessons.glossary import PAGE
    at = ok(run_page(PAGE, {"level": "simple"}))
    assert not at.latex
    found = [f for text in reading(at) for f in formulas(text)]
    assert not found, "\n".join(found)
