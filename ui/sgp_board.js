// SGP board: the current board and the goal (side by side, or behind a toggle), and the participant's moves.
// A move is the command string a model writes ("move red cube up"), made by clicking a geom and then an
// arrow button or an adjacent cell, by the keyboard, or typed. Moves are numbered from the server's count
// (ack_seq); the state "board" carries the moves the server has not stored yet, and the controls wait for
// the server's new board before the next move (the outcome of a move is the server's to decide).
//
// Streamlit calls this function again whenever `data` changes (a rerun with the new board): the live
// episode (selection, timers, typed text) is kept per mount point; a new view_id rebuilds it.

const DIRS = ["up", "down", "left", "right"];
const KEY_DIR = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
const STEP = { up: [0, 1], down: [0, -1], left: [-1, 0], right: [1, 0] };

const parseCoord = (c) => [c.charCodeAt(0) - 65, Number(c.slice(1)) - 1];
const toCoord = (x, y) => String.fromCharCode(65 + x) + String(y + 1);

function mountEpisode(component) {
  const { parentElement } = component;
  let data = component.data;
  let api = { setStateValue: component.setStateValue };
  const restore = data.restore || {};
  const S = {
    ack: data.ack_seq || 0,
    nextSeq: data.ack_seq || 0,
    pending: [],
    giveUp: null,
    selected: null,           // "red cube": kept across moves of the same episode
    showGoal: false,
    firstAction: restore.first_action_ms === undefined ? null : restore.first_action_ms,
  };
  const clocks = viewClocks("rose-sgp-shown:", data.view_id, restore.active_ms || 0);
  const { activeMs, sinceShown } = clocks;

  // ---- DOM ------------------------------------------------------------------------------------
  let root = parentElement.querySelector(".sb-root");
  if (!root) {
    root = el("div", "sb-root");
    parentElement.appendChild(root);
  }
  root.innerHTML = "";
  root.dataset.view = data.view_id;
  const head = el("div", "sb-head");
  const progress = el("div", "sb-progress");
  const instruction = el("div", "sb-instruction");
  const counter = el("div", "sb-counter", { "aria-live": "polite" });
  head.append(progress, instruction, counter);
  const boards = el("div", "sb-boards");
  const current = el("figure", "sb-board sb-current");
  const goal = el("figure", "sb-board sb-goal");
  boards.append(current, goal);
  const controls = el("div", "sb-controls");
  const error = el("div", "sb-error", { role: "alert" });
  root.append(head, boards, controls, error);

  const pendingNow = () => S.pending.length > 0 || S.giveUp !== null;

  function send() {
    api.setStateValue("board", {
      view_id: data.view_id, moves: S.pending.slice(), give_up: S.giveUp,
      active_ms: activeMs(), first_action_ms: S.firstAction,
    });
  }
  function move(text, input) {
    if (pendingNow() || data.finished) return;
    const t = sinceShown();
    if (S.firstAction === null) S.firstAction = t;
    S.pending.push({ seq: S.nextSeq++, text, input, t, active_ms: activeMs() });
    render();
    send();
  }
  const geomAt = (coord) => data.geoms.find((g) => g.coord === coord) || null;
  const geomNamed = (name) => data.geoms.find((g) => g.name === name) || null;
  function moveSelected(dir, input) {
    const g = geomNamed(S.selected);
    if (!g) {
      error.textContent = "Choose a piece first.";
      return;
    }
    error.textContent = "";
    move(`move ${g.command_name} ${dir}`, input);
  }

  // The current board: the image with buttons over its cells (when the image has a grid to click on),
  // or the text listing; the goal beside it or behind a toggle.
  function boardFigure(fig, src, text, caption, clickable) {
    fig.innerHTML = "";
    const cap = el("figcaption", "sb-caption");
    cap.textContent = caption;
    if (data.modality === "text") {
      const pre = el("pre", "sb-text");
      pre.textContent = text;
      fig.append(cap, pre);
      return;
    }
    const stage = el("div", "sb-stage");
    stage.style.aspectRatio = data.width + " / " + data.height;
    const img = el("img", "", { alt: caption + ": " + text.replace(/\n/g, "; "), draggable: "false" });
    img.src = src;
    stage.appendChild(img);
    if (clickable && data.cells.length) {
      const sel = geomNamed(S.selected);
      const [sx, sy] = sel ? parseCoord(sel.coord) : [null, null];
      for (const cell of data.cells) {
        const [x, y] = parseCoord(cell.coord);
        const g = geomAt(cell.coord);
        let dir = null;
        if (sel) for (const d of DIRS) if (sx + STEP[d][0] === x && sy + STEP[d][1] === y) dir = d;
        if (!g && !dir) continue;
        // Pointer targets only: the same actions have named buttons below (screen readers use those).
        const b = el("button", "sb-cell", { type: "button", tabindex: "-1", "aria-hidden": "true" });
        b.dataset.coord = cell.coord;
        const [x0, y0, x1, y1] = cell.box;
        b.style.left = (100 * x0) / data.width + "%";
        b.style.top = (100 * y0) / data.height + "%";
        b.style.width = (100 * (x1 - x0)) / data.width + "%";
        b.style.height = (100 * (y1 - y0)) / data.height + "%";
        if (g && g.name === S.selected) b.classList.add("sb-selected");
        if (dir) {
          b.classList.add("sb-target");
          b.dataset.dir = dir;
          b.addEventListener("click", (ev) => { ev.preventDefault(); moveSelected(dir, "click"); });
        } else {
          b.addEventListener("click", (ev) => { ev.preventDefault(); select(g.name); });
        }
        stage.appendChild(b);
      }
    }
    fig.append(cap, stage);
  }

  function select(name) {
    if (pendingNow()) return;
    S.selected = name; // choosing the chosen piece again keeps it chosen (a number key pressed twice, a double click)
    error.textContent = "";
    render();
  }

  let typed = null;
  let lastK = null;       // the control that last had the keyboard focus (its data-k)
  controls.addEventListener("focusin", (ev) => { if (ev.target.dataset && ev.target.dataset.k) lastK = ev.target.dataset.k; });
  function renderControls() {
    const keep = typed ? typed.value : "";
    controls.innerHTML = "";
    const busy = pendingNow() || data.finished;
    if (data.input === "typed") {
      const id = "sb-command-" + data.view_id;
      const label = el("label", "sb-label", { for: id });
      label.textContent = "Your move:";
      typed = el("input", "sb-command", { id, type: "text", autocomplete: "off", spellcheck: "false",
                                           placeholder: "move red cube up", "data-k": "command" });
      typed.value = keep;
      typed.disabled = busy;
      const go = el("button", "sb-btn sb-send", { type: "button", "data-k": "send" });
      go.textContent = "Send move";
      go.disabled = busy;
      const sendTyped = () => {
        const v = typed.value;
        if (!v.trim()) {
          error.textContent = "Type a move, e.g. move red cube up.";
          return;
        }
        error.textContent = "";
        typed.value = "";
        move(v, "typed");
      };
      go.addEventListener("click", sendTyped);
      typed.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); sendTyped(); } });
      const row = el("div", "sb-row");
      row.append(label, typed, go);
      controls.appendChild(row);
    } else {
      const pieces = el("div", "sb-pieces", { role: "group", "aria-label": "Pieces" });
      data.geoms.forEach((g, i) => {
        const b = el("button", "sb-btn sb-piece", { type: "button", "aria-pressed": String(g.name === S.selected),
                                                    "data-k": "piece-" + i });
        b.textContent = `${g.name} at ${g.coord}`;
        b.dataset.name = g.name;
        b.title = data.input === "keyboard" && i < 9 ? `key ${i + 1}` : "";
        b.disabled = busy;
        b.addEventListener("click", () => select(g.name));
        pieces.appendChild(b);
      });
      controls.appendChild(pieces);
      if (data.input === "click") {
        const arrows = el("div", "sb-arrows", { role: "group", "aria-label": "Move the chosen piece" });
        for (const d of DIRS) {
          const b = el("button", "sb-btn sb-arrow sb-" + d, { type: "button", "data-k": "arrow-" + d });
          b.textContent = "move " + d;
          b.disabled = busy || !S.selected;
          b.addEventListener("click", () => moveSelected(d, "click"));
          arrows.appendChild(b);
        }
        controls.appendChild(arrows);
      } else {
        const hint = el("div", "sb-hint");
        hint.textContent = "Choose a piece (its button, or keys 1–" + Math.min(9, data.geoms.length) +
          "), then press an arrow key to move it.";
        controls.appendChild(hint);
      }
    }
    if (data.goal_view === "toggle" && data.modality !== "text") {
      const b = el("button", "sb-btn sb-toggle", { type: "button", "aria-pressed": String(S.showGoal),
                                                   "data-k": "toggle" });
      b.textContent = S.showGoal ? "Show my board" : "Show the goal";
      b.addEventListener("click", () => { S.showGoal = !S.showGoal; render(); });
      controls.appendChild(b);
    }
    if (data.can_give_up) {
      const b = el("button", "sb-btn sb-giveup", { type: "button", "data-k": "giveup" });
      b.textContent = "Give up this puzzle";
      b.disabled = busy;
      b.addEventListener("click", () => {
        if (pendingNow() || !window.confirm("Give up this puzzle and go on to the next one?")) return;
        S.giveUp = S.nextSeq;
        render();
        send();
      });
      controls.appendChild(b);
    }
  }

  function render() {
    progress.textContent = data.progress || "";
    instruction.textContent = data.instruction || "";
    const used = S.ack + S.pending.length;
    counter.textContent = "Moves: " + used + (data.step_cap ? " of " + data.step_cap : " (no limit)") +
      (data.last_command ? " · your last move: " + data.last_command : "") + (pendingNow() ? " · …" : "");
    root.dataset.pending = pendingNow() ? "1" : "0";
    root.dataset.ack = String(S.ack);
    const showGoal = data.goal_view === "toggle" && S.showGoal;
    boardFigure(current, showGoal ? data.goal_image : data.image, showGoal ? data.goal_text : data.text,
                showGoal ? "Goal" : "Your board", !showGoal);
    goal.hidden = data.goal_view === "toggle";
    if (!goal.hidden) boardFigure(goal, data.goal_image, data.goal_text, "Goal", false);
    renderControls();
    // Keep the keyboard where it was: the controls are rebuilt after every move (and disabled while the
    // server stores it), so focus goes back to the control of the same name once it is usable again.
    const active = document.activeElement;
    if (lastK && (!active || active === document.body || root.contains(active))) {
      const again = controls.querySelector(`[data-k="${lastK}"]`);
      if (again && !again.disabled) again.focus({ preventScroll: true });
    }
  }

  function onKey(ev) {
    if (data.input !== "keyboard" || !root.isConnected) return;
    if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "TEXTAREA")) return;
    const dir = KEY_DIR[ev.key];
    if (dir) {
      ev.preventDefault();
      if (!pendingNow()) moveSelected(dir, "keyboard");
      return;
    }
    const k = Number(ev.key);
    if (k >= 1 && k <= Math.min(9, data.geoms.length)) {
      ev.preventDefault();
      select(data.geoms[k - 1].name);
    }
  }
  window.addEventListener("keydown", onKey);

  render();
  if (data.input === "typed" && typed) typed.focus({ preventScroll: true }); // type at once, as in iVISPAR

  function destroy() {
    window.removeEventListener("keydown", onKey);
    clocks.destroy();
  }
  return {
    viewId: data.view_id,
    destroy,
    // Same episode, new data: the server stored moves up to ack_seq and sends the board after them.
    update(next) {
      api = { setStateValue: next.setStateValue };
      data = next.data;
      const ack = data.ack_seq || 0;
      if (ack > S.ack) {
        S.ack = ack;
        S.pending = S.pending.filter((m) => m.seq >= ack);
        if (S.nextSeq < ack) S.nextSeq = ack;
      }
      if (data.error) { // the server refused the message: nothing of it was stored; the participant tries again
        error.textContent = data.error;
        S.pending = [];
        S.giveUp = null;
        S.nextSeq = S.ack;
      }
      if (S.selected && !geomNamed(S.selected)) S.selected = null;
      render();
    },
  };
}

export default mountPerView(mountEpisode);
