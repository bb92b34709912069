// SGP board: the current board and the goal (side by side, or behind a toggle), and the participant's moves.
// A move is the command string a model writes ("move red cube up"), made by clicking a geom (on the board or
// its button) and then an arrow button or a highlighted free cell next to it, by the keyboard, or typed (with
// sgp_several_moves several at once, comma-separated: the server splits them). The click targets are the
// renderer's hit polygons (data.cells, back to front, so a nearer 3D solid covers the cell behind it); a board
// click also sends the cells and the point clicked, which the server checks against the board. Moves are numbered from the server's count
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
const SVG = "http://www.w3.org/2000/svg";

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
  function move(text, input, click) {
    if (pendingNow() || data.finished) return;
    const t = sinceShown();
    if (S.firstAction === null) S.firstAction = t;
    const m = { seq: S.nextSeq++, text, input, t, active_ms: activeMs() };
    if (click) m.click = click;
    S.pending.push(m);
    render();
    send();
  }
  const geomAt = (coord) => data.geoms.find((g) => g.coord === coord) || null;
  const geomNamed = (name) => data.geoms.find((g) => g.name === name) || null;
  function moveSelected(dir, input, click) {
    const g = geomNamed(S.selected);
    if (!g) {
      error.textContent = "Choose a piece first.";
      return;
    }
    error.textContent = "";
    move(`move ${g.command_name} ${dir}`, input, click);
  }
  // The free cells the chosen piece can move to, by direction (what the board highlights).
  function reachable() {
    const sel = geomNamed(S.selected);
    const out = {};
    if (!sel) return out;
    const [sx, sy] = parseCoord(sel.coord);
    for (const d of DIRS) {
      const x = sx + STEP[d][0], y = sy + STEP[d][1];
      if (x < 0 || y < 0 || x >= data.board_size || y >= data.board_size) continue;
      const c = toCoord(x, y);
      if (!geomAt(c)) out[c] = d;
    }
    return out;
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
    // The image's alt text lists the board only where the page shows the board as text anyway.
    const alt = caption + (text ? ": " + text.replace(/\n/g, "; ") : " (image)");
    const img = el("img", "", { alt, draggable: "false" });
    img.src = src;
    stage.appendChild(img);
    if (clickable && data.cells.length && data.input !== "typed") {
      // Pointer targets only (the same actions have named buttons below, for screen readers): each piece, and
      // the free cells the chosen piece can reach, highlighted; clickable in click studies only.
      const targets = reachable();
      const svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("class", "sb-overlay" + (data.input === "click" ? " sb-live" : ""));
      svg.setAttribute("viewBox", `0 0 ${data.width} ${data.height}`);
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("aria-hidden", "true");
      for (const cell of data.cells) {     // back to front: a later polygon lies over an earlier one
        const g = cell.piece ? geomAt(cell.coord) : null;
        const dir = targets[cell.coord];
        if (!g && !dir) continue;
        const poly = document.createElementNS(SVG, "polygon");
        poly.setAttribute("points", cell.points.map((p) => p.join(",")).join(" "));
        poly.setAttribute("class", "sb-cell" + (dir ? " sb-target" : "") +
                          (g && g.name === S.selected ? " sb-selected" : ""));
        poly.dataset.coord = cell.coord;
        if (dir) poly.dataset.dir = dir;
        if (data.input === "click") {
          poly.addEventListener("click", (ev) => {
            ev.preventDefault();
            if (!dir) { select(g.name); return; }
            const box = svg.getBoundingClientRect();
            const x = round1(((ev.clientX - box.left) * data.width) / box.width);
            const y = round1(((ev.clientY - box.top) * data.height) / box.height);
            moveSelected(dir, "click", { from: geomNamed(S.selected).coord, to: cell.coord, x, y });
          });
        }
        svg.appendChild(poly);
      }
      stage.appendChild(svg);
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
      const w = data.words;
      const example = `move ${w.colours[0]} ${w.shapes[0]} up`;
      label.textContent = data.several ? "Your moves:" : "Your move:";
      typed = el("input", data.several ? "sb-command sb-several" : "sb-command", { id, type: "text", autocomplete: "off", spellcheck: "false",
                                           placeholder: data.several ? `${example}, move ${w.colours[0]} ${w.shapes[0]} left` : example,
                                           "data-k": "command", "aria-describedby": id + "-words" });
      typed.value = keep;
      typed.disabled = busy;
      const go = el("button", "sb-btn sb-send", { type: "button", "data-k": "send" });
      go.textContent = data.several ? "Send moves" : "Send move";
      go.disabled = busy;
      const sendTyped = () => {
        const v = typed.value;
        if (!v.trim()) {
          error.textContent = `Type a move, e.g. ${example}.`;
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
      // The allowed words, in the names this modality uses (2D: square, circle, …), next to the field.
      const words = el("div", "sb-words", { id: id + "-words" });
      words.textContent = `Words: ${w.verb.join(", ")} · colours: ${w.colours.join(", ")} · shapes: ` +
        `${w.shapes.join(", ")} · directions: ${w.directions.join(", ")}` +
        (data.several ? " · several moves: separate them with commas" : "");
      controls.append(row, words);
    } else {
      const pieces = el("div", "sb-pieces", { role: "group", "aria-label": "Pieces" });
      data.geoms.forEach((g, i) => {
        const b = el("button", "sb-btn sb-piece", { type: "button", "aria-pressed": String(g.name === S.selected),
                                                    "data-k": "piece-" + i });
        b.textContent = data.piece_coordinates ? `${g.name} at ${g.coord}` : g.name;
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
          "), then press an arrow key to move it; the free cells it can reach are highlighted.";
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
