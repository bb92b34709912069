"""Participant flow: consent → instructions → practice with feedback → main items → end page.

Layout only: `ParticipantSession.screen()` decides what to show from the database (one transaction), so a
reload, a closed tab or a restarted server resumes at the same screen; this script matches on it. Every study
comes through here: ROSE's one-shot items are drawn below (the click grid), SGP's episodes by their plugin
(`ui.sgp_participant`: the board and its moves, a practice episode's feedback).

Faults never reach the participant as a traceback: a database that cannot store (disk full, read-only,
corrupt) keeps the item on screen with its selection and sends the answer again every few seconds; a damaged
image is replaced by another item; a second tab is asked which one to continue in.
"""
import sys
from functools import partial

import streamlit as st

from rose_core.benchmarks.rose.dataset import DatasetError
from rose_core.instrument.device import device_gate, refusal_text, report_device
from rose_core.instrument.episode_kind import EpisodeFeedback, EpisodeScreen
from rose_core.instrument.items import item_png
from rose_core.instrument.study_kind import open_participant_session, study_benchmark
from rose_core.instrument.screens import Closed, OtherTab, OtherTabError, Wait
from rose_core.instrument.storage_errors import StorageError
from rose_core.instrument.config import StudyError
from rose_core.instrument.joining import join
from rose_core.instrument.screens import Consent, End, Instructions, ItemScreen, PracticeFeedback, Questionnaire
from rose_core.instrument.study import get_study
from rose_core.instrument.page_data import identity_from_query, needs_prolific_id, practice_feedback_png, worked_example_pictures
from rose_core.instrument.manage import is_preview
from rose_core.instrument.texts import QUESTIONS, opening_problems
from ui.click_grid import click_grid, image_url
from ui.client import device_probe, leave_guard, tab
from ui.countdown import countdown
from ui.redirect import end_page, reload_with_param
from ui.resources import dataset, store
from ui import sgp_participant as sgp_plugin
from ui.sgp_resources import sgp_dataset

ss = st.session_state
RETRY_S = 3.0          # a pending answer is sent again this often while storage fails
WAIT_S = 5.0           # a waiting participant (items held, another tab) checks this often
UNAVAILABLE = ("The study cannot be shown right now because of a problem on our side. This page tries again by "
               "itself; you can also come back later with the same link.")


UNREADABLE = "the page sent something it should not have"
NEEDS_PROLIFIC = ("This study takes part through Prolific: please start it from the study's page on Prolific, "
                  "which opens it with your Prolific ID. Nothing has been recorded.")


def _grid_raw(name: str) -> object:
    """What the browser sent under `name` in the grid's value (anything: nothing a browser sends is trusted)."""
    value = ss.get("part_grid")
    try:
        return value.get(name) if value is not None and hasattr(value, "get") else None
    except Exception:
        return None


def _grid_value(name: str) -> dict | None:
    """The grid's `grid` (live state) or `submit` (the answer) when it is a JSON object, else None."""
    value = _grid_raw(name)
    return value if isinstance(value, dict) else None


def _log(what: str, e: BaseException) -> None:
    """For the operator, in the server's log; a full disk may refuse even that, which must not reach the page."""
    try:
        print(f"ROSE participant page: {what}: {e}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _retry_soon(seconds: float) -> None:
    """Rerun the whole page after `seconds` (a fragment timer; its first run, inside this run, does nothing)."""
    ss["part_tick_armed"] = False

    @st.fragment(run_every=seconds)
    def tick() -> None:
        if ss.get("part_tick_armed"):
            st.rerun(scope="app")
        ss["part_tick_armed"] = True

    tick()


try:
    db = store()
    benchmark = study_benchmark(db, ss.get("part_study") or st.query_params.get("study"))
    ds = sgp_dataset() if benchmark == "sgp" else dataset()  # the study's benchmark's items
except Exception as e:  # a damaged dataset, or a database that cannot be opened: the details (paths) in the log only
    _log("dataset or database", e)
    st.info(UNAVAILABLE)
    _retry_soon(30.0)
    st.stop()

# -- who is this? ------------------------------------------------------------------------------
if "part_pid" not in ss:
    ident = identity_from_query(st.query_params.to_dict())
    try:
        study = get_study(db, ident.study_id) if ident.study_id else None
    except Exception as e:  # a database that cannot even be read: calm message, try again
        _log("reading the study", e)
        st.info(UNAVAILABLE)
        _retry_soon(WAIT_S)
        st.stop()
    if study is None or not (study.active or is_preview(db, study.study_id, ident.external_id)):
        st.error("This study link is not valid or the study is closed. Please check the link you were given.")
        st.stop()
    not_ready = opening_problems(study.config) if benchmark != "sgp" else []  # SGP pages word themselves
    if not_ready:  # a template marker or a missing fact: never shown to a participant
        _log("study texts not ready", StudyError("; ".join(not_ready)))
        st.error("This study is not ready yet. Please contact the researcher who sent you the link.")
        st.stop()
    if study.dataset_hash != ds.dataset_hash:
        st.error("This study was set up on a different version of the dataset; please contact the researcher.")
        st.stop()
    if needs_prolific_id(study.config, ident) and not is_preview(db, study.study_id, ident.external_id):
        st.title("Please open this study from Prolific")  # never reaches consent; nothing is stored
        st.info(NEEDS_PROLIFIC)
        st.stop()
    if ident.generated:  # a new anonymous id: into the address first (in place: Back never finds the id-less link)
        st.caption("Starting the study…")
        reload_with_param("pid", ident.external_id)
        st.stop()
    try:
        p = join(db, study, ident.external_id, ident.source, ident.prolific_study_id, ident.prolific_session_id)
    except StudyError as e:  # a bad id, or a known id arriving with another Prolific session (recorded)
        st.error(f"Cannot start: {e}")
        st.stop()
    except StorageError as e:
        _log("joining", e)
        st.info(UNAVAILABLE)
        _retry_soon(WAIT_S)
        st.stop()
    ss["part_pid"], ss["part_study"] = p.participant_id, study.study_id

CLOSED_TEXT = {
    "closed": "This study is closed now, so nothing more can be recorded here. Thank you for your time. If you came "
              "from Prolific and have questions about your submission, please message the researcher there.",
    "excluded": "Your participation in this study has ended, so nothing more can be recorded here. If you came from "
                "Prolific and have questions, please message the researcher there.",
}
PENDING_NOTE = ("Your answer could not be saved just yet (a problem on our side). Your selection is kept and the "
                "answer is sent again by itself in a few seconds: there is nothing you need to do.")
REFUSED_NOTE = {
    "released": "That item had been given to another participant after a long pause, so your answer to it was not "
                "counted. Here is another one.",
    "late": "The time limit had passed, so that answer was not counted.",
}

try:
    session = open_participant_session(db, ds, ss["part_study"], ss["part_pid"], client=tab())
    if session is None:
        st.error("This study link is not valid or the study is closed. Please check the link you were given.")
        st.stop()
    pending = ss.get("part_pending")
    if pending is not None:  # an answer kept while storage failed: send it first (refused if it may not count)
        rec = session.submit(*pending)
        ss.pop("part_pending", None)
        if rec.refused in REFUSED_NOTE:
            ss["part_notice"] = REFUSED_NOTE[rec.refused]
    screen = session.screen()
except StorageError as e:
    _log("storage", e)
    screen = None
except StudyError as e:  # a practice picture that cannot be shown: nothing the participant can do
    _log("study", e)
    st.info(UNAVAILABLE)
    _retry_soon(30.0)
    st.stop()


def send(screen: ItemScreen, sub: dict) -> str:
    """Store an answer. "next": the next item is in `part_item` (this fragment shows it); "rerun": a full rerun
    shows what comes (feedback, the end, a notice, another tab); "pending": storage failed, the answer is kept
    to send again; "unreadable": a malformed message, said on the item."""
    try:
        rec = session.submit(screen, sub)
    except StorageError as e:
        _log("storing an answer", e)
        ss["part_pending"] = (screen, sub)
        return "pending"
    except Exception as e:  # StudyError: said as is; anything else is a message no browser of ours sends
        if not isinstance(e, StudyError):
            _log("a submit the page could not read", e)
        ss["part_grid_error"] = str(e) if isinstance(e, StudyError) else UNREADABLE
        refusals = ss.setdefault("part_refusals", {})
        refusals[screen.view_id] = refusals.get(screen.view_id, 0) + 1  # the item unlocks for another answer
        return "unreadable"
    ss.pop("part_pending", None)
    if rec.refused == "other_tab":
        return "rerun"
    if rec.refused in REFUSED_NOTE:
        ss["part_notice"] = REFUSED_NOTE[rec.refused]
    try:
        nxt = session.screen()
    except (StorageError, StudyError):
        return "rerun"
    if isinstance(nxt, ItemScreen) and "part_notice" not in ss:
        ss["part_item"] = nxt
        return "next"
    return "rerun"


def show_item(first: ItemScreen, retrying: bool = False) -> None:
    """The item: the component shows the instruction, "Item k of n", the grid and DONE/SUBMIT.

    The answer is stored in the component's submit callback, before the fragment reruns, and the next screen
    is computed there from the database: when it is another item, that one fragment rerun shows it (no full
    rerun per item); anything else (feedback, the end) is shown by a full rerun. While storage fails
    (`retrying`), the same fragment sends the kept answer again every RETRY_S seconds."""
    ss["part_item"] = first  # what this full run computed; the submit callback moves it on to the next item
    known = ss.setdefault("part_known_seq", {})

    def store_events() -> None:
        """Store the new events of the grid's state, so that this rerun already acknowledges them (ack_seq) and the
        browser stops sending them. Called by the grid's callback, before the rerun the change caused, and again in
        the rerun (nothing new then: no transaction) in case Streamlit folded a change into a rerun without the
        callback. The item on screen is `part_item`: a late message of an answered item names another view and
        stores nothing."""
        screen: ItemScreen = ss["part_item"]
        state = _grid_value("grid")
        if not state:
            return
        try:
            known[screen.view_id] = session.record_events(screen, state, known.get(screen.view_id, -1))
        except OtherTabError:
            ss["part_leave_item"] = True  # the fragment's rerun shows the other-tab screen
        except StorageError as e:  # not acknowledged: the browser sends these events again with the next ones
            _log("storing events", e)
        except StudyError as e:
            ss["part_grid_error"] = str(e)
        except Exception as e:  # a message no browser of ours sends: said on the item, never a traceback
            _log("a grid state the page could not read", e)
            ss["part_grid_error"] = UNREADABLE

    def on_submit(screen: ItemScreen) -> None:
        sub = _grid_value("submit")
        if sub is None or sub.get("view_id") != screen.view_id:
            if (ss.get("part_grid") or {}) and sub is None and _grid_raw("submit") is not None:
                _log("a submit the page could not read", TypeError(type(_grid_raw("submit")).__name__))
                ss["part_grid_error"] = UNREADABLE
            return
        outcome = send(screen, sub)
        if outcome == "rerun" or (outcome == "pending" and not retrying):
            ss["part_leave_item"] = True  # a full rerun: the next screen, or the retry timer armed

    @st.fragment(run_every=RETRY_S if retrying else None)
    def item() -> None:
        if ss.pop("part_leave_item", False):
            st.rerun(scope="app")
        screen: ItemScreen = ss["part_item"]
        pending = ss.get("part_pending")
        if pending is not None and pending[0].view_id == screen.view_id and ss.get("part_retry_armed"):
            if send(*pending) != "pending":
                st.rerun(scope="app")  # stored: the next screen, without the retry timer
        ss["part_retry_armed"] = True  # the first run (inside the full run) only shows the item
        png = ss.get("part_png")
        if png is None or png[0] != screen.view_id:
            try:
                png = ss["part_png"] = (screen.view_id, item_png(ds, screen.item, screen.drawing))
            except DatasetError as e:  # missing or changed on disk: never shown; another item instead
                _log("image", e)
                try:
                    session.drop_item(screen, str(e))
                except (StorageError, StudyError) as e2:
                    _log("releasing an item", e2)
                st.rerun(scope="app")
        store_events()
        if ss.pop("part_leave_item", False):
            st.rerun(scope="app")
        kept = ss.get("part_pending")  # an answer storage refused, sent again by this fragment
        data = screen.component_data(image_url(png[1]), known.get(screen.view_id, -1),
                                     ss.get("part_refusals", {}).get(screen.view_id, 0),
                                     kept is not None and kept[0].view_id == screen.view_id)
        data["progress_fraction"] = screen.progress_fraction  # drawn by the component: one element per rerun
        # One key for every item: the component rebuilds itself for a new view_id, and Streamlit keeps one widget
        # state instead of one per item answered since the last full rerun (each is re-read at every rerun).
        click_grid(key="part_grid", data=data, on_grid=store_events, on_submit=partial(on_submit, screen))
        if "part_pending" in ss:
            st.warning(PENDING_NOTE)
        err = ss.pop("part_grid_error", None)
        if err:
            st.error(f"Your answer could not be read ({err}). Please try again.")

    ss["part_retry_armed"] = False
    item()


def wait_for_change(current) -> None:
    """Check again every WAIT_S seconds; the page moves on by itself once the screen is another one."""
    ss["part_wait_armed"] = False

    @st.fragment(run_every=WAIT_S)
    def watch() -> None:
        if ss.get("part_wait_armed"):
            try:
                if session.screen() != current:
                    st.rerun(scope="app")
            except StorageError as e:
                _log("storage", e)
        ss["part_wait_armed"] = True

    watch()


notice = ss.pop("part_notice", None)
if notice:
    st.info(notice)

if not isinstance(screen, (Consent, End, Closed)):  # inside the study (also while storage fails): leaving asks first
    leave_guard()  # mounted before the item, in every run that shows one, so the item's element keeps its place

if screen is None:  # storage is failing
    if isinstance(ss.get("part_item"), ItemScreen) and "part_pending" in ss:
        show_item(ss["part_item"], retrying=True)
    else:
        st.info(UNAVAILABLE)
        _retry_soon(RETRY_S)
    st.stop()


def show_feedback(fb: PracticeFeedback) -> None:
    st.title("Practice")
    st.markdown(f"**The instruction was:** {fb.instruction}")
    if fb.passed:
        st.success("Correct, well done.")
    else:
        st.warning("Not quite. Here is the right answer next to yours.")
    try:
        picture = practice_feedback_png(ds, fb.item, fb.clicked)
    except DatasetError as e:  # missing or changed on disk since it was shown: the feedback without its picture
        _log("practice feedback picture", e)
        st.caption("The picture cannot be shown right now; the right cells are listed below.")
    else:
        st.image(picture, output_format="PNG", caption=(
            "Green: the right cells. Blue dot: your clicks. Orange: the region the instruction names; "
            "red: the excluded region."))
    if fb.gold_count is not None:
        st.markdown(f"Your number: **{'—' if fb.count is None else fb.count}** · the right number: "
                    f"**{fb.gold_count}**")
    if fb.item.mode != "count":
        rows = [f"- R{r},C{c}: " + ("a right cell, " if line.correct else "not one of the cells asked for, ")
                + ("you clicked it" if line.clicked else "**you did not click it**")
                for line in fb.lines for r, c in [line.cell]]
        st.markdown("\n".join(rows) if rows else "No cell fits this instruction: the right answer clicks nothing.")
    round_end(fb.outcome, fb.view_id, ROUND_NOTES, "part_fb_btn")


ROUND_NOTES = {"passed": "Practice complete. From now on there is no feedback; answer as accurately as you can.",
               "retry": "Not enough practice answers were right yet: let's do the practice once more, with new "
                        "pictures."}


def round_end(outcome: str, view_id: str, notes: dict[str, str], key: str) -> None:
    """Below any practice item's feedback (one path for every kind): where the round stands, in the kind's words
    (`notes`), and 'Continue', stored in its callback, before the rerun: that one rerun shows the next screen."""
    if outcome == "screened_out":
        st.info("That was the last practice round.")
    elif outcome in notes:
        st.info(notes[outcome])
    with actions():
        st.button("Continue", type="primary", key=key, on_click=storage_fault_logged(session.acknowledge_feedback),
                  args=(view_id,))


def show_examples(templates: tuple[str, ...]) -> None:
    """One worked example per output kind the study asks for, in tabs (the page stays short)."""
    examples = worked_example_pictures(templates)
    if not examples:
        return
    st.markdown("**Worked examples** (one per kind of screen in this study):")
    for tab_, (ex, png) in zip(st.tabs([ex.title for ex, _ in examples]), examples):
        with tab_:
            a, b = st.columns([2, 3])
            a.image(png, output_format="PNG")
            b.markdown(ex.text)


def show_questionnaire(questions: tuple[str, ...]) -> None:
    """The study's end questions (each optional); the answers are checked on the server when stored."""
    st.title("A few last questions")
    st.caption("Every question is optional. Your answers are stored with your participant id, not your name.")
    with st.form("part_questionnaire"):
        answers = {}
        for key in questions:
            q = QUESTIONS[key]
            if q.choices:
                labels = dict(q.choices)
                answers[key] = st.radio(q.label, list(labels), index=None, format_func=labels.get,
                                        horizontal=True, key=f"part_q_{key}")
            else:
                answers[key] = st.text_area(q.label, max_chars=q.max_chars, key=f"part_q_{key}", height=80)
        send_, skip = st.columns(2)
        sent = send_.form_submit_button("Submit answers", type="primary")
        skipped = skip.form_submit_button("Skip the questions")
    if sent or skipped:
        try:
            session.answer_questionnaire({} if skipped else answers)
        except StudyError as e:
            st.error(f"Your answers could not be stored: {e}")
            return
        except StorageError as e:
            _log("storing the questionnaire", e)
            st.error("Your answers could not be stored just now (a problem on our side). Please press the button "
                     "again in a moment.")
            return
        st.rerun()


def storage_fault_logged(action):
    """A button's callback: a storage fault leaves the screen as it was (the next run says so) instead of a
    traceback."""
    def run(*args):
        try:
            action(*args)
        except StorageError as e:
            _log("storage", e)
    return run


# Layout of the pages around the item: their one forward button sits in a bar kept at the bottom of the window, so it
# is visible without scrolling on any screen (1280×720, a 390×844 phone) whatever the text and pictures above.
# (Streamlit wraps a keyed container in a layout wrapper of its own height: the wrapper is what sticks.)
ACTIONS_CSS = """<style>
[data-testid="stLayoutWrapper"]:has(> .st-key-part_actions), .st-key-part_actions { position: sticky; bottom: 0;
  z-index: 90; }
.st-key-part_actions { padding: .6rem 0 .9rem; background: #fff; border-top: 1px solid rgba(128, 128, 128, .3); }
@media (prefers-color-scheme: dark) { .st-key-part_actions { background: #0e1117; } }
</style>"""


def actions():
    """The bar that holds a page's buttons (the same key on every page: one style, one place)."""
    st.html(ACTIONS_CSS)
    return st.container(key="part_actions")


def check_device() -> None:
    """Before consent: store what the browser says about its window, and stop at a page saying what is needed
    while it is below the study's minimum (the probe reports again after a resize; the page then goes on)."""
    pid, cfg = ss["part_pid"], session.cfg

    def on_report() -> None:
        try:
            report_device(db, cfg, pid, (ss.get("part_device") or {}).get("device"))
        except StorageError as e:
            _log("storing the device", e)

    device_probe("part_device", on_report)
    try:
        gate = device_gate(db, cfg, pid)
    except StorageError as e:
        _log("reading the device", e)
        st.info(UNAVAILABLE)
        _retry_soon(WAIT_S)
        st.stop()
    if gate.ok:
        return
    if gate.reported:
        st.title("Please use a larger screen")
        st.markdown(refusal_text(gate))
    else:
        st.caption("Checking the size of your browser window… If this message stays, please reload the page.")
    st.stop()


def show_deadline() -> None:
    """The time limit's countdown (server time; the page only displays it), and a timer that reruns the page just
    after it runs out, where the server ends the participant as timed out and the end page says so."""
    try:
        dl = session.deadline()
    except StorageError as e:
        _log("storage", e)
        return
    if dl is None:
        return
    countdown(dl.seconds_left)
    ss["part_deadline_armed"] = False

    @st.fragment(run_every=max(1.0, dl.seconds_left + 1.0))
    def deadline_timer() -> None:
        if ss.get("part_deadline_armed"):
            st.rerun(scope="app")
        ss["part_deadline_armed"] = True

    deadline_timer()


if not isinstance(screen, (Consent, End, Closed)):
    show_deadline()


if isinstance(screen, Consent) and benchmark != "sgp":  # SGP studies set no device policy (the board scales)
    check_device()

match screen:
    case Consent(time_limit_minutes=limit, text=text):
        if not text.startswith("#"):  # a text with its own heading needs no second one
            st.title("Welcome")
        st.markdown(text)  # the study's own text: Markdown only, raw HTML is not rendered
        if limit:
            st.info(f"The study has a time limit of {limit} minutes from the moment you agree; a clock in the top "
                    "right corner shows the time left. When it runs out the study ends: the answers you gave until "
                    "then are kept, and an answer sent after it is not counted.")
        with actions():
            agree = st.checkbox("I have read the above and agree to take part.", key="part_agree")
            st.button("Continue", type="primary", disabled=not agree, key="part_consent_btn",
                      on_click=storage_fault_logged(session.consent))

    case Instructions(has_practice=has_practice, text=text, templates=templates):
        st.title("How it works")
        st.markdown(text)
        show_examples(templates)
        if has_practice and templates:  # a kind without worked examples says it in its own text
            st.markdown("First a short practice with feedback: one screen of each kind you will meet.")
        with actions():
            st.button("Continue", type="primary", key="part_instr_btn",
                      on_click=storage_fault_logged(session.finish_instructions))

    case PracticeFeedback():
        show_feedback(screen)

    case ItemScreen():
        show_item(screen, retrying="part_pending" in ss)

    case EpisodeFeedback():
        sgp_plugin.show_feedback(screen)
        round_end(screen.outcome, screen.view_id, sgp_plugin.ROUND_NOTES, "sgpp_fb_btn")

    case EpisodeScreen():
        sgp_plugin.show_episode(session, screen)

    case OtherTab():
        st.title("This study is open in another tab")
        st.markdown("You have this study open in another tab or window. Please continue there, or continue here: "
                    "the other tab then stops. (Only one tab at a time can record your answers.)")
        with actions():
            st.button("Continue here", type="primary", key="part_take_over",
                      on_click=storage_fault_logged(session.take_over))
        wait_for_change(screen)

    case Wait(reason=reason):
        st.title("Please wait a moment")
        if reason == "held":
            st.info("Every remaining item is being answered by other participants right now. Please keep this page "
                    "open: it continues by itself as soon as an item is free. You can also come back later with the "
                    "same link; your progress is kept.")
        else:
            st.info("Several people from your network are taking part at the same time. Please keep this page open: "
                    "it continues by itself as soon as one of them has finished an item.")
        wait_for_change(screen)

    case Questionnaire(questions=questions):
        show_questionnaire(questions)

    case Closed(why=why):
        st.title("This study has ended")
        st.info(CLOSED_TEXT[why])

    case End():
        end_page(screen, text=screen.text, **(sgp_plugin.END_WORDS if benchmark == "sgp" else {}))
        if screen.debrief:
            st.divider()
            st.markdown(screen.debrief)
