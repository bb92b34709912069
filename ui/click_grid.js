// ROSE click grid: the exact PNG a model sees, with a clickable overlay on the saved cell boxes.
// A click toggles the cell at once in the page. Every action is an event numbered from
// restore.next_seq; the state "grid" carries only the events the server has not stored yet
// (seq >= ack_seq), so each event crosses the wire until it is acknowledged and never after.
// DONE / SUBMIT sends the final answer with setTriggerValue and locks it until the server replies:
// the next item, or `refusals` going up (the server could not take it: the item unlocks). Without a
// reply for RESEND_MS the button may send the same answer again; the selection stays locked, so
// what the page shows is always the answer the server got. The gold answer is never in `data`: the
// server scores the submission.
//
// Streamlit calls this function again whenever `data` changes (a rerun with a new ack_seq): the
// live item (DOM, selection, timers) is kept per mount point and only a new view_id rebuilds it.

const ACTIONS = new Set(["click", "unclick", "undo", "clear", "count_input"]);
const WHOLE = /^\d{1,6}$/;  // the server accepts 0-999999 (rose_core/instrument/grid_input.py)
const COUNT_DEBOUNCE_MS = 400;
const BOTTOM_GAP_PX = 12;
const MIN_STAGE_PX = 120;
const MIN_ITEM_PX = 800;
const PRESS_GUARD_MS = 400;  // DONE is pressable this long after the item appeared: a press sooner is the second
                             // half of a hasty double-click on the previous item's DONE, never an answer to this one
const RESEND_MS = 15000;    // no reply for this long (a lost message): DONE may send the same answer again

function mountItem(component) {
  const { data, parentElement } = component;
  let api = { setStateValue: component.setStateValue, setTriggerValue: component.setTriggerValue };
  const restore = data.restore || {};
  const S = {
    selected: (restore.selection || []).map(([r, c]) => [r, c]),
    nextSeq: Math.max(restore.next_seq || 0, data.ack_seq || 0),
    ack: data.ack_seq || 0,
    pending: [],          // events not yet acknowledged by the server
    undo: [],             // click/unclick actions that Undo can revert (emptied by Clear)
    firstAction: restore.first_action_ms === undefined ? null : restore.first_action_ms,
    focusLost: false,
    submitting: false,    // an answer is on its way: the item is locked until the server replies
    sent: null,           // that answer, sent again as it is when DONE is pressed after RESEND_MS
    refusals: data.refusals || 0,  // answers of this view the server could not take (data.refusals)
    kept: !!data.pending, // the server holds this view's answer and sends it again itself (storage failing)
    refused: false,       // a submit was refused for the number: validate it as it is typed
    loggedCount: restore.count === undefined || restore.count === null ? "" : String(restore.count),
  };
  // Active time (the page visible and the window focused) and time since shown: a lost focus is logged, sent,
  // and ends a count being typed.
  const clocks = viewClocks("rose-grid-shown:", data.view_id, restore.active_ms || 0, (type) => {
    if (type === "blur" || type === "hidden") S.focusLost = true;
    if (type === "blur" || type === "hidden") flushCount();
    log(type);
    send();
  });
  const { activeMs, sinceShown } = clocks;

  // ---- DOM ------------------------------------------------------------------------------------
  let root = parentElement.querySelector(".rg-root");
  if (!root) {
    root = el("div", "rg-root");
    parentElement.appendChild(root);
  }
  root.innerHTML = "";
  root.className = "rg-root";
  root.dataset.view = data.view_id;
  root.dataset.ack = String(S.ack);
  const head = el("div", "rg-head");
  // The study's progress bar (data.progress_fraction, when given): drawn here rather than as a Streamlit
  // element, so a click's rerun has one element to send, not two.
  const meter = el("div", "rg-meter", { role: "progressbar", "aria-label": "Progress", "aria-valuemin": "0",
                                        "aria-valuemax": "100" });
  const meterFill = el("div", "rg-meter-fill");
  meter.appendChild(meterFill);
  const progress = el("div", "rg-progress");
  const instruction = el("div", "rg-instruction", { id: "rg-instruction-" + data.view_id });
  head.append(meter, progress, instruction);
  const stage = el("div", "rg-stage");
  stage.style.aspectRatio = data.width + " / " + data.height;
  const img = el("img", "", { alt: "grid image", draggable: "false" });
  img.src = data.image;
  stage.appendChild(img);
  const bar = el("div", "rg-bar");
  const error = el("div", "rg-error", { role: "alert" });
  const note = el("div", "rg-note", { "aria-live": "polite" });
  const item = el("div", "rg-item");
  item.append(head, stage, bar, error, note);
  root.appendChild(item);

  const clickable = data.mode !== "count";
  const cells = new Map();
  const key = (r, c) => r + "," + c;
  const has = (r, c) => S.selected.some(([a, b]) => a === r && b === c);
  const status = el("div", "rg-status", { "aria-live": "polite" });

  function setText(d) {
    const frac = typeof d.progress_fraction === "number" ? Math.min(1, Math.max(0, d.progress_fraction)) : null;
    meter.hidden = frac === null;
    if (frac !== null) {
      meterFill.style.width = (100 * frac).toFixed(1) + "%";
      meter.setAttribute("aria-valuenow", String(Math.round(100 * frac)));
    }
    progress.textContent = d.progress || "";
    progress.hidden = !d.progress;
    instruction.textContent = d.instruction || "";
  }
  setText(data);

  function log(type, extra) {
    const active = activeMs();  // read first: time since shown, read after, is never below it
    const e = Object.assign({ seq: S.nextSeq++, type }, extra || {}, { t: sinceShown(), active_ms: active });
    S.pending.push(e);
    if (S.firstAction === null && ACTIONS.has(type)) S.firstAction = e.t;
    return e;
  }
  function countValue() {
    if (!countInput) return null;
    const v = countInput.value.trim();
    return v === "" ? null : v;
  }
  function unacked() {
    return S.pending.filter((e) => e.seq >= S.ack);
  }
  function send() {
    api.setStateValue("grid", {
      view_id: data.view_id, events: unacked(), selection: S.selected.map(([r, c]) => [r, c]),
      count: countValue(), active_ms: activeMs(), first_action_ms: S.firstAction,
    });
  }
  function renderCell(r, c) {
    const b = cells.get(key(r, c));
    if (b) b.setAttribute("aria-pressed", String(has(r, c)));
  }
  function renderStatus() {
    status.textContent = S.selected.length === 1 ? "1 cell selected" : S.selected.length + " cells selected";
  }
  function toggle(r, c) {
    if (S.submitting) return;
    const on = !has(r, c);
    if (on) S.selected.push([r, c]);
    else S.selected = S.selected.filter(([a, b]) => !(a === r && b === c));
    renderCell(r, c); // visible at once, before the server hears of it
    renderStatus();
    S.undo.push({ type: on ? "click" : "unclick", r, c });
    log(on ? "click" : "unclick", { r, c });
    send();
  }

  if (clickable) {
    const grid = el("div", "rg-grid", { role: "group", "aria-label": "Grid: arrows move, Enter or Space selects a cell",
                                        "aria-describedby": instruction.id });
    for (const [r, c, x0, y0, x1, y1] of data.cells) {
      const b = el("button", "rg-cell", { type: "button", "aria-label": "row " + r + " column " + c });
      b.dataset.r = r;
      b.dataset.c = c;
      b.style.left = (100 * x0) / data.width + "%";
      b.style.top = (100 * y0) / data.height + "%";
      b.style.width = (100 * (x1 - x0)) / data.width + "%";
      b.style.height = (100 * (y1 - y0)) / data.height + "%";
      b.tabIndex = r === 1 && c === 1 ? 0 : -1; // roving tabindex: Tab enters the grid once
      b.addEventListener("click", (ev) => { ev.preventDefault(); toggle(r, c); });
      b.addEventListener("keydown", (ev) => {
        const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[ev.key];
        if (!d) return;
        ev.preventDefault();
        const nb = cells.get(key(Math.min(data.rows, Math.max(1, r + d[0])), Math.min(data.cols, Math.max(1, c + d[1]))));
        if (!nb) return;
        cells.forEach((x) => { x.tabIndex = -1; });
        nb.tabIndex = 0;
        nb.focus();
      });
      cells.set(key(r, c), b);
      grid.appendChild(b);
    }
    stage.appendChild(grid);
    cells.forEach((_, k) => { const [r, c] = k.split(",").map(Number); renderCell(r, c); });
  }

  const mkButton = (label, cls, fn) => {
    const b = el("button", "rg-btn " + cls, { type: "button" });
    b.textContent = label;
    b.addEventListener("click", fn);
    return b;
  };
  const tools = el("div", "rg-tools");
  if (clickable) {
    tools.appendChild(mkButton("Undo", "rg-undo", () => {
      if (S.submitting) return;
      const a = S.undo.pop();
      if (!a) return;
      if (a.type === "click") S.selected = S.selected.filter(([x, y]) => !(x === a.r && y === a.c));
      else S.selected.push([a.r, a.c]);
      renderCell(a.r, a.c);
      renderStatus();
      log("undo", { r: a.r, c: a.c, value: a.type }); // value: the action undone, so a replay needs no stack
      send();
    }));
    tools.appendChild(mkButton("Clear", "rg-clear", () => {
      if (S.submitting || !S.selected.length) return;
      const was = S.selected;
      S.selected = [];
      S.undo = [];
      was.forEach(([r, c]) => renderCell(r, c));
      renderStatus();
      log("clear", { value: String(was.length) });
      send();
    }));
    tools.appendChild(status);
    renderStatus();
  }
  let countInput = null;
  let countTimer = null;
  const flushCount = () => {
    if (countTimer !== null) { clearTimeout(countTimer); countTimer = null; }
    if (!countInput || countInput.value === S.loggedCount) return false;
    S.loggedCount = countInput.value;
    log("count_input", { value: countInput.value });
    return true;
  };
  const answer = el("div", "rg-answer");
  if (data.mode !== "click") {
    const id = "rg-count-" + data.view_id;
    const label = el("label", "rg-count-label", { for: id });
    label.textContent = data.count_label || "Number";
    countInput = el("input", "rg-count-input", {
      id, type: "text", inputmode: "numeric", pattern: "[0-9]*", autocomplete: "off", spellcheck: "false",
    });
    countInput.value = S.loggedCount;
    countInput.addEventListener("input", () => {
      if (S.firstAction === null) S.firstAction = sinceShown(); // typing is an action from the first key
      // After a refused submit the message follows the input: gone as soon as it is a whole number.
      if (WHOLE.test(countInput.value.trim())) clearError();
      else if (S.refused) showError();
      if (countTimer !== null) clearTimeout(countTimer);
      countTimer = setTimeout(() => { if (flushCount()) send(); }, COUNT_DEBOUNCE_MS);
    });
    countInput.addEventListener("change", () => { if (flushCount()) send(); });
    countInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); submit(); } });
    const wrap = el("div", "rg-count");
    wrap.append(label, countInput);
    answer.appendChild(wrap);
  }
  const submitBtn = mkButton(data.submit_label, "rg-submit", () => submit());
  answer.appendChild(submitBtn);
  submitBtn.disabled = true;  // PRESS_GUARD_MS: the second press of a double-click on the last item's button
  setTimeout(() => { if (!S.submitting) submitBtn.disabled = false; }, PRESS_GUARD_MS);
  bar.append(tools, answer);

  function showError() {
    error.textContent = "Please enter a whole number from 0 to 999999.";
    countInput.setAttribute("aria-invalid", "true");
  }
  function clearError() {
    error.textContent = "";
    if (countInput) countInput.removeAttribute("aria-invalid");
  }
  let resendTimer = null;
  function submit() {
    if (S.submitting) {
      if (S.sent === null || submitBtn.disabled) return;
      submitBtn.disabled = true;  // no reply yet: the same answer once more (the server stores it once)
      note.textContent = "";
      api.setTriggerValue("submit", S.sent);
      armResend();
      return;
    }
    let count = null;
    if (countInput) {
      const v = countInput.value.trim();
      if (!WHOLE.test(v)) {
        S.refused = true;
        showError();
        countInput.focus();
        return;
      }
      count = v;
    }
    flushCount();
    clearError();
    S.submitting = true;
    submitBtn.disabled = true;
    if (countInput) countInput.readOnly = true;
    root.classList.add("rg-submitted");
    S.sent = {
      view_id: data.view_id, selection: S.selected.map(([r, c]) => [r, c]), count, events: unacked(),
      first_action_ms: S.firstAction, active_ms: activeMs(), client_total_ms: sinceShown(),
      viewport: [window.innerWidth, window.innerHeight], dpr: window.devicePixelRatio || 1,
      focus_lost: S.focusLost,
    };
    api.setTriggerValue("submit", S.sent);
    armResend();
  }
  // Normally the next item replaces this one; a refusal unlocks it (update). A message can still be
  // lost (a dropped connection): after RESEND_MS, DONE sends the same answer again.
  function armResend() {
    if (resendTimer !== null) clearTimeout(resendTimer);
    resendTimer = setTimeout(() => {
      resendTimer = null;
      if (!S.submitting || S.kept) return;
      submitBtn.disabled = false;
      note.textContent = "Your answer has not been confirmed yet. Press " + data.submit_label +
        " to send the same answer again.";
    }, RESEND_MS);
  }
  function unlock() {
    if (resendTimer !== null) { clearTimeout(resendTimer); resendTimer = null; }
    S.submitting = false;
    S.sent = null;
    submitBtn.disabled = false;
    if (countInput) countInput.readOnly = false;
    root.classList.remove("rg-submitted");
    note.textContent = "";
  }

  // ---- fit the whole item on the screen --------------------------------------------------------
  // The stage (image + cell buttons) gets the width that makes the item end above the bottom of the
  // viewport: the height left below the component's top, minus what the text and the bar take.
  function docTop(e) {
    let y = e.getBoundingClientRect().top + window.scrollY;
    for (let p = e.parentElement; p; p = p.parentElement) y += p.scrollTop;
    return y;
  }
  function fit() {
    if (!root.isConnected) return;
    const avail = root.clientWidth;
    if (!avail) return;
    // The text and the bar span the image's width (at least MIN_ITEM_PX) so DONE sits by the grid; a
    // narrower item can wrap the bar onto more lines, so settle in a few passes, never growing back.
    const apply = (w) => {
      item.style.width = Math.min(avail, Math.max(w, MIN_ITEM_PX)) + "px";
      stage.style.width = w + "px";
    };
    let w = Math.min(avail, data.width);
    for (let pass = 0; pass < 4; pass++) {
      apply(w);
      const chrome = item.offsetHeight - stage.offsetHeight;
      const room = window.innerHeight - docTop(item) - chrome - BOTTOM_GAP_PX;
      const next = Math.floor(Math.max(MIN_STAGE_PX, Math.min(avail, data.width, (room * data.width) / data.height)));
      if (next >= w) break;
      w = next;
    }
    apply(w);
  }
  if (S.kept) {  // remounted while the server still holds the answer: it stays as it was sent, locked
    S.submitting = true;
    submitBtn.disabled = true;
    if (countInput) countInput.readOnly = true;
    root.classList.add("rg-submitted");
  }

  const refit = () => requestAnimationFrame(fit);
  window.addEventListener("resize", refit);
  window.addEventListener("orientationchange", refit);
  const ro = typeof ResizeObserver === "function" ? new ResizeObserver(refit) : null;
  if (ro) ro.observe(parentElement instanceof Element ? parentElement : root);
  fit();
  requestAnimationFrame(fit);
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(refit);

  function destroy() {
    clocks.destroy();
    window.removeEventListener("resize", refit);
    window.removeEventListener("orientationchange", refit);
    if (ro) ro.disconnect();
    if (countTimer !== null) clearTimeout(countTimer);
    if (resendTimer !== null) clearTimeout(resendTimer);
  }
  return {
    viewId: data.view_id,
    destroy,
    // Same item, new data (a rerun): take the server's acknowledgement and texts, keep everything live.
    update(next) {
      api = { setStateValue: next.setStateValue, setTriggerValue: next.setTriggerValue };
      const ack = next.data.ack_seq || 0;
      if (ack > S.ack) {
        S.ack = ack;
        S.pending = S.pending.filter((e) => e.seq >= ack);
        if (S.nextSeq < ack) S.nextSeq = ack;
        root.dataset.ack = String(ack);
      }
      // What became of the answer: refused (unlock for another one), or kept by the server, which sends it
      // again itself while storage fails (stay locked; nothing to press).
      const wasKept = S.kept;
      S.kept = !!next.data.pending;
      if (wasKept && !S.kept && S.submitting) armResend();
      if ((next.data.refusals || 0) > S.refusals) {
        S.refusals = next.data.refusals;
        if (S.submitting) unlock();
      }
      if (S.kept && S.submitting) { submitBtn.disabled = true; note.textContent = ""; }
      setText(next.data);
      refit();
    },
  };
}

export default mountPerView(mountItem);
