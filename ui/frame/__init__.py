"""The frame around every lesson: its opening, live parts and closing, and the Simple / Technical level (page), the
course's path (nav), the share link and settings file (share), check-yourself questions (exercises), teaching text
(prose) and the links from a term to its glossary entry (glossary)."""
