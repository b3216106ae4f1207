"""The course: its lessons in teaching order, each with its folder, title, link, icon and the pipeline step it
explains. The navigation, the home page and every page's title and previous / next links read one `Course`
(lessons.COURSE)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    name: str  # its folder under lessons/, which holds page.py, prose.md and questions.py
    title: str
    url_path: str
    icon: str
    step: str  # the pipeline step it explains, for the home page

    @property
    def path(self) -> str:
        """The page's file from the repository root, as st.Page and st.page_link take it."""
        return f"lessons/{self.name}/page.py"


class Course(tuple[Lesson, ...]):
    """The lessons in teaching order (a tuple), found by folder name."""

    def lesson(self, name: str) -> Lesson:
        return next(lesson for lesson in self if lesson.name == name)

    def number(self, lesson: Lesson) -> int:
        """Its place in the course, from 1."""
        return self.index(lesson) + 1

    def neighbours(self, lesson: Lesson) -> tuple[Lesson | None, Lesson | None]:
        """The previous and next lessons in the course's order."""
        i = self.index(lesson)
        return (self[i - 1] if i > 0 else None), (self[i + 1] if i + 1 < len(self) else None)
