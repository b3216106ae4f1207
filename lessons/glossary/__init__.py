"""The glossary page: every term the lessons use (terms.md, read by ui/frame/glossary.py), searchable, each with
the lesson that first uses it. A reference page beside the course, not one of its numbered lessons."""

PAGE = "lessons/glossary/page.py"
