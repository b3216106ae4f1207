"""The frame around every lesson: header and footer (page), the course's path (nav), the share link (share),
check-yourself questions (exercises) and teaching text (prose)."""
