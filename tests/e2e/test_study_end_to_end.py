"""A study from its file to the paper bundle, in Chromium on the real server, at a desktop and a phone size.

docs/examples/study.toml (with its [texts] and [info]), shrunk for the small test dataset, is created through
`python -m rose_core study create`; the experimenter previews it from the Studies page (a whole run as a
participant); two Prolific participants come through the participant link: one answers right and completes, one
fails the practice and lands on the study's own screen-out page with its code; `study approvals` lists exactly
those two (never the preview), and `report --out` writes a bundle holding the study's texts whose numbers count
the two, never the preview."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rose_core.storage import open_store

from .conftest import PASSWORD
from .helpers import answer, shown_item, sign_in
from .test_experimenter_pages import _participant_link

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
SIZES = {"desktop": {"width": 1280, "height": 720}, "phone": {"width": 390, "height": 844}}
DESKTOP = SIZES["desktop"]
COMPLETION, SCREEN_OUT = "C1A2B3C4", "SO-9Z8Y"
# The study's own words (docs/examples/texts), filled with its [info]: what the participant pages must show.
CONSENT_WORDS = ("Finding the odd one out", "Dr Ada Example", "approval UEREC-2026-0421")
SCREEN_OUT_WORDS = "Your practice answers did not reach the level this study needs"
MIN_ITEM_S = 1.6   # server time per main item: above the standard "too fast" rule (median < 1.5 s), as a person


def _study_file(folder: Path, landing: str, size: str) -> Path:
    """The example study file, shrunk for the small dataset, beside a copy of its texts (the .md paths are
    relative to the file). Each change is a whole line of the example, so a change there fails here loudly."""
    shutil.copytree(EXAMPLES / "texts", folder / "texts")
    text = (EXAMPLES / "study.toml").read_text(encoding="utf-8")
    changes = {
        r'^name = .*$': f'name = "ROSE end to end ({size})"',
        # two kinds of answer (a count, clicks in a named region): a practice round of two items
        r'^templates = .*$': 'templates = ["T2", "T3"]',
        r'^sample = \{per_cell = 4,': 'sample = {per_cell = 1,',
        r'^items_per_participant = .*$': 'items_per_participant = 2',
        r'^participants = .*$': '',          # as many as the pool needs
        r'^practice_items = .*$': 'practice_items = 2',
        r'^practice_max_attempts = .*$': 'practice_max_attempts = 1',   # one failed round screens out
        r'^attention_every = .*$': 'attention_every = 0',
        r'^completion_url = .*$': (f'completion_url = "{landing}/complete?cc={COMPLETION}"\n'
                                   f'screen_out_code = "{SCREEN_OUT}"\n'
                                   f'screen_out_url = "{landing}/screened?cc={SCREEN_OUT}"\n'
                                   'allow_phones = true'),
    }
    for pattern, new in changes.items():
        text, n = re.subn(pattern, new, text, count=1, flags=re.M)
        assert n == 1, f"docs/examples/study.toml: no line matches {pattern!r}"
    assert f'completion_code = "{COMPLETION}"' in text and "[texts]" in text and "[info]" in text
    out = folder / "study.toml"
    out.write_text(text, encoding="utf-8")
    return out


def _cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "rose_core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"rose_core {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _shot(page, folder: Path, name: str, full_page: bool = False) -> None:
    """A screenshot in the test's folder, and in $ROSE_E2E_SHOTS too when it names one (for the record)."""
    page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)
    if os.environ.get("ROSE_E2E_SHOTS"):
        shots = Path(os.environ["ROSE_E2E_SHOTS"])
        shots.mkdir(parents=True, exist_ok=True)
        shutil.copy(folder / f"{name}.png", shots / f"{name}.png")


def _through(page, store, ds, study_id: str, pid: str, right: bool, wait_main: bool = False) -> None:
    """From consent to the end: consent, instructions, each item answered (right or wrong; the answer read from the
    item the server holds), each practice feedback acknowledged, the end questions sent as left (all optional)."""
    page.get_by_text("I have read the above").click()
    page.get_by_role("button", name="Continue").click()
    page.get_by_text("I have read the above").wait_for(state="detached")   # the instructions
    page.get_by_role("button", name="Continue").click()
    # the first item (the click's callback runs on the server after the click returns)
    page.locator(".rg-root").or_(page.get_by_text("Thank you!")).first.wait_for()
    for _ in range(20):
        thanks, questions = page.get_by_text("Thank you!"), page.get_by_role("button", name="Submit answers")
        button = page.get_by_role("button", name="Continue")
        page.locator(".rg-root").or_(button).or_(questions).or_(thanks).first.wait_for()
        if thanks.count():
            return
        if questions.count():
            questions.click()
            thanks.wait_for()
            return
        if button.count():   # practice feedback
            button.click()
            button.wait_for(state="detached")
            continue
        screen = shown_item(store, ds, study_id, pid)
        if wait_main and screen.kind == "main":
            page.wait_for_timeout(MIN_ITEM_S * 1000)
        answer(page, screen, right=right)
    raise AssertionError(f"{pid}: no end page reached")


@pytest.mark.slow   # ~35 s a size on a loaded two-core machine
@pytest.mark.parametrize("size", list(SIZES))
def test_study_file_to_bundle(server, browser, small_dataset, landing, tmp_path, size):
    started = time.time()
    db, ds = str(server.db), small_dataset
    # 1. The study from its file.
    out = _cli("study", "create", str(_study_file(tmp_path / "study", landing, size)), "--db", db,
               "--dataset", str(ds.root), "--base-url", server.url)
    study_id = re.search(r"created study (\w+) ", out).group(1)
    assert "DRAFT" not in out, out                          # [info] filled: open to participants at once
    assert f"{server.url}/?study={study_id}" in out, out    # the participant link
    store = open_store(server.db)
    shots = tmp_path / "shots"
    shots.mkdir()

    contexts = []

    def visitor(viewport):   # each person in a browser of their own (no cookie or storage shared)
        contexts.append(browser.new_context(viewport=viewport))
        pg = contexts[-1].new_page()
        pg.set_default_timeout(30_000)
        return pg

    try:
        # 2. The preview: from the Studies page, a whole run as a participant (on the participants' screen size).
        page = visitor(DESKTOP)   # the experimenter, at a desk
        sign_in(page, server.url, PASSWORD)
        assert study_id in _participant_link(page)   # the only study: shown at once
        page.get_by_role("button", name="Open the study as a participant").click()   # makes the preview
        link = page.get_by_role("link", name="Start the preview (new tab)")
        link.wait_for()
        url = link.get_attribute("href")
        assert url.startswith(f"{server.url}/?study={study_id}&pid=preview-"), url
        preview_pid = url.rsplit("pid=", 1)[1]
        preview = visitor(SIZES[size])
        preview.goto(url)
        for words in CONSENT_WORDS:
            preview.get_by_text(words).first.wait_for()
        _through(preview, store, ds, study_id, preview_pid, right=True)
        preview.get_by_text(COMPLETION).wait_for()
        assert store.query("SELECT origin, end_reason FROM participants WHERE external_id = ?", (preview_pid,)) == [
            {"origin": "preview", "end_reason": "completed"}]

        # 3. Two participants through the Prolific link: one completes, one fails the practice.
        prolific = f"{server.url}/?study={study_id}&PROLIFIC_PID={{}}&STUDY_ID=PS-1&SESSION_ID=SES-{{}}"
        good = visitor(SIZES[size])
        good.goto(prolific.format("PROLIFIC-A", "A"))
        for words in CONSENT_WORDS:
            good.get_by_text(words).first.wait_for()
        assert "[[" not in good.locator("body").inner_text()
        _shot(good, shots, f"consent-{size}", full_page=True)
        _through(good, store, ds, study_id, "PROLIFIC-A", right=True, wait_main=True)
        good.get_by_text(COMPLETION, exact=True).wait_for()
        good.get_by_text("Thank you for helping us.").wait_for()      # the study's end text

        bad = visitor(SIZES[size])
        bad.goto(prolific.format("PROLIFIC-B", "B"))
        _through(bad, store, ds, study_id, "PROLIFIC-B", right=False)
        code = bad.get_by_text(SCREEN_OUT, exact=True)
        code.wait_for()
        bad.get_by_text(SCREEN_OUT_WORDS).wait_for()                 # the study's own screen-out page
        assert bad.get_by_text("enter the screen-out code shown below").count() >= 1
        assert bad.get_by_text("Dr Ada Example").count() >= 1
        assert bad.get_by_text(COMPLETION).count() == 0               # never the completion code
        box = code.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SIZES[size]["height"]   # seen without scrolling
        _shot(bad, shots, f"screen-out-{size}")
        # then each is sent on to the study's own URL (both timers ran while the other participant went through)
        good.wait_for_url(f"{landing}/complete*", timeout=20_000)
        bad.wait_for_url(f"{landing}/screened*", timeout=20_000)
        assert bad.locator("body").inner_text() == f"landed /screened?cc={SCREEN_OUT}"
    finally:
        for ctx in contexts:
            ctx.close()
    ends = {r["external_id"]: (r["origin"], r["end_reason"]) for r in store.query(
        "SELECT external_id, origin, end_reason FROM participants WHERE study_id = ?", (study_id,))}
    assert ends == {preview_pid: ("preview", "completed"), "PROLIFIC-A": ("participant", "completed"),
                    "PROLIFIC-B": ("participant", "screened_out")}, ends

    # 4. The approvals: the two Prolific participants, never the preview.
    approvals = tmp_path / "approvals.csv"
    _cli("study", "approvals", study_id, "--out", str(approvals), "--db", db)
    rows = list(csv.DictReader(approvals.open(encoding="utf-8")))
    assert [(r["participant_id"], r["submission_id"], r["status"]) for r in rows] == [
        ("PROLIFIC-A", "SES-A", "approve"), ("PROLIFIC-B", "SES-B", "screened_out")], rows
    assert rows[1]["reason"] == "did not pass the practice"

    # 5. The paper bundle: the study's texts as participants read them, numbers that never count the preview.
    bundle = tmp_path / "bundle"
    _cli("report", "--out", str(bundle), "--db", db, "--dataset", str(ds.root), "--no-figures")
    texts = bundle / "texts" / study_id
    for key in ("consent", "instructions", "worked_examples", "end", "screen_out", "debrief"):
        assert (texts / "v1" / f"{key}.md").is_file(), key
    consent = (texts / "v1" / "consent.md").read_text(encoding="utf-8")
    assert all(w in consent for w in CONSENT_WORDS) and "{researcher}" not in consent, consent
    assert SCREEN_OUT_WORDS in (texts / "v1" / "screen_out.md").read_text(encoding="utf-8")
    assert json.loads((texts / "info.json").read_text(encoding="utf-8"))["researcher"] == "Dr Ada Example"
    methods = (bundle / "methods.md").read_text(encoding="utf-8")
    assert "2 participants joined and 1 completed" in methods, methods
    checklist = (bundle / "checklist.md").read_text(encoding="utf-8")
    assert "2 joined, 2 consented, 1 completed" in checklist, checklist
    assert preview_pid not in (methods + checklist)
    print(f"\n{size}: study file to bundle in {time.time() - started:.1f} s")
