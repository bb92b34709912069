"""Text from files (run files' error texts, solver names, file names) shown as text, never as Markdown.

`st.success`, `st.info`, `st.error`, `st.caption` and `st.markdown` render Markdown: a run file's error text
`![x](https://host/p.png)` made the experimenter's browser load an image from the file author's host, and
`[click](…)`, `**…**`, `:red[…]`, `$…$` or HTML-looking text would be drawn as such. Every ASCII punctuation
character is escaped with a backslash (CommonMark lets any be), so the text shows exactly as written.
"""
from __future__ import annotations

import re

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # all ASCII punctuation


def md_text(text: object) -> str:
    """`text` as literal text inside a Markdown string; line breaks kept as breaks."""
    escaped = _PUNCT.sub(r"\\\1", str(text))
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")
