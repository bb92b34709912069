"""Drive the participant UI like a person would, using the server's own records to know the answer."""
from __future__ import annotations

from rose_core.storage.connection import Store
from rose_core.instrument.screens import ItemScreen
from rose_core.instrument.study_kind import open_participant_session


def participant_id(store: Store, study_id: str, external_id: str) -> str:
    return store.query("SELECT participant_id FROM participants WHERE study_id = ? AND external_id = ?",
                       (study_id, external_id))[0]["participant_id"]


def shown_item(store: Store, ds, study_id: str, external_id: str) -> ItemScreen:
    """The item screen the server holds for this participant (what the page shows)."""
    screen = open_participant_session(store, ds, study_id, participant_id(store, study_id, external_id)).screen()
    assert isinstance(screen, ItemScreen), screen
    return screen


def answer(page, screen: ItemScreen, right: bool = True) -> None:
    key, mode = screen.item.key, screen.item.mode
    view = screen.view_id
    # While Streamlit swaps items, the answered item's element may linger a moment beside the new one:
    # always address the item the server holds.
    root = page.locator(f'.rg-root[data-view="{view}"]')
    root.wait_for()
    if mode != "count":
        cells = sorted(key.gold_cells) if right else [next((r, c) for r in range(1, key.rows + 1)
                                                          for c in range(1, key.cols + 1)
                                                          if (r, c) not in key.gold_cells)]
        for r, c in cells:
            cell = root.locator(f'.rg-cell[data-r="{r}"][data-c="{c}"]')
            cell.click()
            assert cell.get_attribute("aria-pressed") == "true"
    if mode != "click":
        root.locator(".rg-count input").fill(str(key.gold_count if right else key.gold_count + 1))
    root.locator(".rg-submit").click()
    page.wait_for_function("v => !document.querySelector(`.rg-root[data-view=\"${v}\"]`)", arg=view)


def wait_stage(page) -> str:
    """Which screen is up: grid, feedback, done, consent, instructions."""
    page.locator(".rg-root").or_(page.get_by_text("Thank you!")).or_(
        page.get_by_role("button", name="Continue")).first.wait_for(timeout=20_000)
    if page.get_by_text("Thank you!").count():
        return "done"
    if page.locator(".rg-root").count():
        return "grid"
    return "feedback"


def start(page, url: str) -> None:
    """Open a study link and go through consent and instructions."""
    page.goto(url)
    page.get_by_text("I have read the above").click()
    page.get_by_role("button", name="Continue").click()
    page.get_by_text("I have read the above").wait_for(state="detached")  # the instructions: Continue again
    page.get_by_role("button", name="Continue").click()
    # The click's callback runs on the server after the click returns: wait for the screen after the
    # instructions, so that what a test reads from the database next is that screen, not the instructions.
    page.locator(".rg-root, .sb-root").or_(page.get_by_text("Please wait a moment")).or_(
        page.get_by_text("Thank you!")).first.wait_for(timeout=30_000)


def wait_until(fetch, pred, timeout: float = 15, what: str = "", page=None):
    """Poll `fetch()` (a database read, usually) until `pred` holds on its result; no fixed pause.

    `page`: pause through it instead of sleeping. A test that routes the page's websocket (route_web_socket) must:
    in Playwright's sync API routed messages move only while the test is inside a Playwright call."""
    import time

    deadline = time.time() + timeout
    got = fetch()
    while not pred(got) and time.time() < deadline:
        if page is None:
            time.sleep(0.05)
        else:
            page.wait_for_timeout(50)
        got = fetch()
    assert pred(got), f"{what or 'condition'} not reached in {timeout} s: {got!r}"
    return got


def pressed_cells(page) -> set[tuple[int, int]]:
    """The cells the grid shows as selected (aria-pressed=true)."""
    return {(int(b.get_attribute("data-r")), int(b.get_attribute("data-c")))
            for b in page.locator('.rg-cell[aria-pressed="true"]').all()}


def sign_in(page, url: str, password: str) -> None:
    """Open the app as an experimenter and sign in."""
    page.goto(url)
    page.get_by_label("Experimenter password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Studies").wait_for()


def script_run(port: int, query: str = "", page_name: str = "", host: str = "127.0.0.1",
               headers: dict[str, str] | None = None) -> dict:
    """One browser-like visit at the websocket level (Streamlit's own protobufs): open a session, ask for `page_name`
    (the URL path a browser would send) with `query` (and extra handshake `headers`), and return what the first script run sent: how many pages the
    new session listed, every navigation message's page names, headings, alert texts and exceptions shown."""
    import asyncio

    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def visit() -> dict:
        got: dict = {"navigation": [], "headings": [], "alerts": [], "exceptions": []}
        async with websockets.connect(f"ws://{host}:{port}/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=None, additional_headers=headers) as ws:
            await ws.send(BackMsg(rerun_script=ClientState(query_string=query, page_name=page_name))
                          .SerializeToString())
            while True:
                m = ForwardMsg()
                m.ParseFromString(await asyncio.wait_for(ws.recv(), 60))
                kind = m.WhichOneof("type")
                if kind == "new_session":  # before st.navigation runs: the main script, named as the URL asked
                    got["session_pages"] = len(m.new_session.app_pages)
                elif kind == "navigation":
                    got["navigation"].append([p.page_name for p in m.navigation.app_pages])
                elif kind == "delta" and m.delta.WhichOneof("type") == "new_element":
                    el = m.delta.new_element
                    if el.WhichOneof("type") == "heading":
                        got["headings"].append(el.heading.body)
                    elif el.WhichOneof("type") == "alert":
                        got["alerts"].append(el.alert.body)
                    elif el.WhichOneof("type") == "exception":
                        got["exceptions"].append(f"{el.exception.type}: {el.exception.message}")
                elif kind == "script_finished":
                    return got

    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # its own event loop, beside Playwright's
        return pool.submit(asyncio.run, visit()).result()
