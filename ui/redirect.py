"""Send the participant on: to the completion URL (Prolific's, usually) after a short pause, or to this page again with
its anonymous id in the address.

A tiny components-v2 element. Its mount point is a shadow root (styles are isolated), which has no
`dataset`: the earlier version read `parentElement.dataset` and stopped with a TypeError while the page
promised a redirect. The timer is now kept in the module, one per URL, and only http(s) URLs are followed
(checked here and again in the browser).
"""
from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

_JS = """
const timers = new Map(); // url -> timeout id, so a rerun never starts a second timer

export default function (component) {
  const { data } = component;
  let url;
  try { url = new URL(data.url, window.location.href); } catch (e) { return; }
  if (url.protocol !== "http:" && url.protocol !== "https:") return;
  const href = url.href;
  if (!timers.has(href)) {
    timers.set(href, setTimeout(() => window.location.assign(href), Math.max(0, Number(data.delay_ms) || 0)));
  }
  return () => { clearTimeout(timers.get(href)); timers.delete(href); };
}
"""
_COMPONENT = st.components.v2.component("rose_redirect", js=_JS)

# Load the page again with one more query parameter, in place of the current history entry. Setting
# st.query_params instead pushes a new entry, so Back returns to the address without it.
_WITH_PARAM_JS = """
export default function (component) {
  const { data } = component;
  const url = new URL(window.location.href);
  if (url.searchParams.get(data.name) === data.value) return;
  url.searchParams.set(data.name, data.value);
  window.location.replace(url.href);
}
"""
_WITH_PARAM = st.components.v2.component("rose_reload_with_param", js=_WITH_PARAM_JS)


def redirect_target(url: str) -> str:
    """The URL to go to, or ValueError: only absolute http(s) URLs with a host (never javascript:, data:, …)."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"completion URL must be an absolute http(s) URL, got {url!r}")
    return url.strip()


def redirect(url: str, delay_ms: int = 4000) -> None:
    """Go to `url` after `delay_ms` (raises ValueError for anything but an http(s) URL)."""
    _COMPONENT(key="redirect", data={"url": redirect_target(url), "delay_ms": int(delay_ms)}, height=0)


def reload_with_param(name: str, value: str) -> None:
    """Load this page again with `name=value` in its address, replacing its history entry: an anonymous participant's
    generated id then stays in every address the browser can go back or forward to (a reload keeps them)."""
    _WITH_PARAM(key="reload_with_param", data={"name": name, "value": value}, height=0)


SCREEN_OUT_TEXT = ("Thank you for your time. Your {practice} did not reach the study's criterion, so the study ends "
                   "here.")
ATTENTION_TEXT = "Thank you for your time. An attention check was not answered as asked, so the study ends here."
RETURN_ADVICE = ("If you came from Prolific, please **return your submission** (\"Return submission\" on the study's "
                 "page on Prolific) so that it does not count against you.")


def end_page(end, practice: str = "practice answers", exhausted: str = "Every item of this study already has enough "
             "answers.", text: str = "") -> None:
    """The end screen of any study (ROSE or SGP): the code and the redirect back to the platform (the completion
    code when completed, the screen-out code when screened out: `end.code`, `end.url`), or the reason it ended and
    the advice to return the submission when there is no code. `practice` and `exhausted` word the benchmark's own
    units. `text`: the study's own end page (its screen-out page when screened out; Markdown, no raw HTML), shown
    in place of the built-in sentence when screened out and below the reason otherwise."""
    st.title("Thank you!")
    if end.reason == "completed":
        st.success("You have finished the study.")
        if end.code:
            st.markdown(f"Your completion code is **`{end.code}`**.")
    elif end.reason == "screened_out":
        default = ATTENTION_TEXT if getattr(end, "attention", False) else SCREEN_OUT_TEXT.format(practice=practice)
        if text:
            st.markdown(text)
            text = ""
        else:
            st.info(default)
        if end.code:
            st.markdown(f"Your screen-out code is **`{end.code}`**: enter it on Prolific so that your time is "
                        "paid as the study's screen-out payment.")
    elif end.reason == "timed_out":
        st.info("The time limit for this study has passed, so the study ends here; the answers you gave before it "
                "are kept. Thank you for your time.")
    else:
        st.info(f"{exhausted} Thank you for your time.")
    if end.reason in ("completed", "screened_out") and end.url:
        st.link_button("Return to the study platform", end.url, type="primary")
        st.caption("You will be redirected in a few seconds.")
        redirect(end.url)
    elif end.reason != "completed" and not end.code:
        st.markdown(RETURN_ADVICE)
    if text:
        st.markdown(text)
