// ROSE click grid: the exact PNG a model sees, with a clickable overlay on the saved cell boxes.
// A click toggles the cell at once in the page; the cumulative state (selection + event log) goes
// to the server with setStateValue; DONE / SUBMIT sends the final answer with setTriggerValue.
// The gold answer is never in `data`: the server scores the submission.
export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  let root = parentElement.querySelector(".rg-root");
  if (root && root.dataset.view === data.view_id) return; // same item: keep the DOM and its state
  if (!root) {
    root = document.createElement("div");
    root.className = "rg-root";
    parentElement.appendChild(root);
  }
  root.dataset.view = data.view_id;
  root.innerHTML = "";
  const t0 = performance.now();
  const st = { selected: [], events: [], firstAction: null, focusLost: false, submitted: false };
  const key = (r, c) => r + "," + c;
  const has = (r, c) => st.selected.some(([a, b]) => a === r && b === c);
  const log = (type, extra) => {
    const e = Object.assign({ type, t: Date.now() }, extra || {});
    st.events.push(e);
    if (st.firstAction === null && type !== "blur" && type !== "focus") st.firstAction = performance.now() - t0;
    return e;
  };
  const send = () => setStateValue("grid", { view_id: data.view_id, selected: st.selected, events: st.events });

  const stage = document.createElement("div");
  stage.className = "rg-stage";
  stage.style.maxWidth = data.width + "px";
  stage.style.aspectRatio = data.width + " / " + data.height;
  const img = document.createElement("img");
  img.src = data.image;
  img.alt = "grid image";
  img.draggable = false;
  stage.appendChild(img);
  root.appendChild(stage);

  const clickable = data.mode !== "count";
  const cells = new Map();
  const status = document.createElement("div");
  status.className = "rg-status";
  status.setAttribute("aria-live", "polite");
  const render = (r, c) => {
    const b = cells.get(key(r, c));
    if (b) b.setAttribute("aria-pressed", String(has(r, c)));
    status.textContent = st.selected.length === 1 ? "1 cell selected" : st.selected.length + " cells selected";
  };
  const toggle = (r, c, via) => {
    if (st.submitted) return;
    if (has(r, c)) {
      st.selected = st.selected.filter(([a, b]) => !(a === r && b === c));
      log("unclick", { r, c, via });
    } else {
      st.selected.push([r, c]);
      log("click", { r, c, via });
    }
    render(r, c); // visible at once, before the server hears of it
    send();
  };
  if (clickable) {
    const grid = document.createElement("div");
    grid.className = "rg-grid";
    grid.setAttribute("role", "grid");
    grid.setAttribute("aria-label", "Grid: arrows move, Enter or Space selects a cell");
    for (const [r, c, x0, y0, x1, y1] of data.cells) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "rg-cell";
      b.dataset.r = r;
      b.dataset.c = c;
      b.style.left = (100 * x0) / data.width + "%";
      b.style.top = (100 * y0) / data.height + "%";
      b.style.width = (100 * (x1 - x0)) / data.width + "%";
      b.style.height = (100 * (y1 - y0)) / data.height + "%";
      b.setAttribute("aria-label", "row " + r + " column " + c);
      b.setAttribute("aria-pressed", "false");
      b.tabIndex = r === 1 && c === 1 ? 0 : -1; // roving tabindex
      b.addEventListener("click", (ev) => { ev.preventDefault(); toggle(r, c, ev.detail === 0 ? "key" : "pointer"); });
      b.addEventListener("keydown", (ev) => {
        const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[ev.key];
        if (!d) return;
        ev.preventDefault();
        const nr = Math.min(data.rows, Math.max(1, r + d[0]));
        const nc = Math.min(data.cols, Math.max(1, c + d[1]));
        const nb = cells.get(key(nr, nc));
        b.tabIndex = -1;
        nb.tabIndex = 0;
        nb.focus();
      });
      cells.set(key(r, c), b);
      grid.appendChild(b);
    }
    stage.appendChild(grid);
  }

  const bar = document.createElement("div");
  bar.className = "rg-bar";
  root.appendChild(bar);
  const error = document.createElement("div");
  error.className = "rg-error";
  error.setAttribute("role", "alert");
  const mkButton = (label, cls, fn) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.className = "rg-btn " + cls;
    b.addEventListener("click", fn);
    bar.appendChild(b);
    return b;
  };
  if (clickable) {
    mkButton("Undo", "rg-undo", () => {
      if (st.submitted) return;
      for (let i = st.events.length - 1; i >= 0; i--) {
        const e = st.events[i];
        if (e.type === "click" || e.type === "unclick") {
          if (e.undone) continue;
          e.undone = true;
          if (e.type === "click") st.selected = st.selected.filter(([a, b]) => !(a === e.r && b === e.c));
          else st.selected.push([e.r, e.c]);
          log("undo", { r: e.r, c: e.c });
          render(e.r, e.c);
          send();
          return;
        }
      }
    });
    mkButton("Clear", "rg-clear", () => {
      if (st.submitted || !st.selected.length) return;
      const was = st.selected;
      st.selected = [];
      log("clear", { value: String(was.length) });
      was.forEach(([r, c]) => render(r, c));
      render(0, 0);
      send();
    });
    bar.appendChild(status);
    render(0, 0);
  }
  let countInput = null;
  if (data.mode !== "click") {
    const label = document.createElement("label");
    label.className = "rg-count";
    label.textContent = data.count_label + " ";
    countInput = document.createElement("input");
    countInput.type = "number";
    countInput.min = "0";
    countInput.step = "1";
    countInput.inputMode = "numeric";
    countInput.setAttribute("aria-label", data.count_label);
    countInput.addEventListener("change", () => log("count", { value: countInput.value }));
    countInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); submit(); } });
    label.appendChild(countInput);
    bar.appendChild(label);
  }
  const submitBtn = mkButton(data.submit_label, "rg-submit", () => submit());
  root.appendChild(error);

  function submit() {
    if (st.submitted) return;
    let count = null;
    if (countInput) {
      const v = countInput.value.trim();
      if (!/^\d+$/.test(v)) {
        error.textContent = "Please enter a whole number (0 or more).";
        countInput.focus();
        return;
      }
      count = parseInt(v, 10);
    }
    st.submitted = true;
    submitBtn.disabled = true;
    root.classList.add("rg-submitted");
    error.textContent = "";
    log("submit", { value: count === null ? null : String(count) });
    setTriggerValue("submit", {
      view_id: data.view_id, selected: st.selected, count, events: st.events,
      first_action_ms: st.firstAction, total_ms: performance.now() - t0,
      viewport: [window.innerWidth, window.innerHeight], dpr: window.devicePixelRatio || 1,
      focus_lost: st.focusLost,
    });
  }
  const onBlur = () => { if (root.dataset.view !== data.view_id) return; st.focusLost = true; log("blur"); };
  const onFocus = () => { if (root.dataset.view !== data.view_id) return; log("focus"); };
  window.addEventListener("blur", onBlur);
  window.addEventListener("focus", onFocus);
  document.addEventListener("visibilitychange", () => { if (document.hidden) onBlur(); });
  if (clickable) cells.get(key(1, 1)).focus({ preventScroll: true });
  else if (countInput) countInput.focus({ preventScroll: true });
}
