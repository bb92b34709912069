"""ui/plain.py: file-controlled text escaped for Streamlit's Markdown, shown exactly as written."""
from streamlit.testing.v1 import AppTest

SAMPLES = ["![x](http://203.0.113.9/p.png)", "**bold** _it_ `code`", "[link](javascript:alert(1))",
           ":red[alarm] $x^2$ <img src=x>", "# heading\n- item", "a\\b ~~gone~~ | c |"]


def _page(samples):
    import streamlit as st

    from ui.plain import md_text

    for s in samples:
        st.info(md_text(s))


def test_markdown_in_file_text_is_shown_as_written():
    at = AppTest.from_function(_page, args=(SAMPLES,)).run()
    assert not at.exception
    # AppTest hands back the Markdown source; its rendering is what Chromium shows (tests/e2e/test_model_runs_upload)
    from ui.plain import md_text
    assert [a.value for a in at.info] == [md_text(s) for s in SAMPLES]
    assert md_text("![x](h)") == "\\!\\[x\\]\\(h\\)" and md_text("a\nb") == "a  \nb"
