// What every participant component shares (the ROSE click grid, the SGP board): one live item per mount point
// kept across Streamlit's calls and rebuilt only for a new view_id, `data` as UTF-8 JSON bytes, DOM helpers,
// and the item's clocks (time since first shown, kept across reloads; active time: page visible and window
// focused). ui/components.py puts this file in front of each component's own script, so each ends with
// `export default mountPerView(mountItsItem)`.

// `data` arrives as UTF-8 JSON bytes (ui/components.py encode_data: Streamlit forwards bytes untouched,
// whereas a dict is sniffed for dataframes on every rerun); a plain object is accepted as well.
const DECODER = new TextDecoder();
function decoded(component) {
  const d = component.data;
  if (!(d instanceof Uint8Array || d instanceof ArrayBuffer)) return component;
  return { data: JSON.parse(DECODER.decode(d)), parentElement: component.parentElement,
           setStateValue: component.setStateValue, setTriggerValue: component.setTriggerValue };
}

// The component's function: `mount(component)` builds an item {viewId, destroy, update(component)}; the same
// view_id on the same mount point only updates it (a rerun with new data keeps selection, timers, typed text).
function mountPerView(mount) {
  const items = new WeakMap(); // parentElement -> live item
  return function (raw) {
    const component = decoded(raw);
    const { data, parentElement } = component;
    let item = items.get(parentElement);
    if (!item || item.viewId !== data.view_id) {
      if (item) item.destroy();
      item = mount(component);
      items.set(parentElement, item);
    } else {
      item.update(component);
    }
    const live = item;
    return () => { live.destroy(); if (items.get(parentElement) === live) items.delete(parentElement); };
  };
}

function el(tag, cls, attrs) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

const round1 = (x) => Math.round(x * 10) / 10;

// When the view was first shown in this browser (epoch ms), kept across reloads and reopened tabs under
// `prefix + viewId`; entries older than two days are forgotten. Without storage, the best lower bound is
// "now minus the active time already stored".
function shownAt(prefix, viewId, restoredActiveMs) {
  const k = prefix + viewId;
  try {
    for (let i = window.localStorage.length - 1; i >= 0; i--) {
      const old = window.localStorage.key(i);
      if (old && old.startsWith(prefix) && Date.now() - Number(window.localStorage.getItem(old)) > 1728e5) {
        window.localStorage.removeItem(old);
      }
    }
    const v = Number(window.localStorage.getItem(k));
    if (v > 0) return v;
    const now = Date.now() - restoredActiveMs;
    window.localStorage.setItem(k, String(now));
    return now;
  } catch (e) {
    return Date.now() - restoredActiveMs;
  }
}

// The view's clocks, on the page's monotonic clock (active time, same clock, never exceeds time since shown):
// activeMs() counts while the page is visible and the window focused, from `restoredActiveMs` (what the server
// stored); sinceShown() is the time since first shown. `onChange(type)` hears every focus, blur, visible and
// hidden after the clocks took it into account. `destroy()` removes the listeners.
function viewClocks(prefix, viewId, restoredActiveMs, onChange) {
  let stored = restoredActiveMs || 0;
  const t0 = performance.now() - (Date.now() - shownAt(prefix, viewId, stored));
  let visible = document.visibilityState === "visible";
  let focused = document.hasFocus();
  let activeSince = visible && focused ? performance.now() : null;
  const activeMs = () => round1(stored + (activeSince === null ? 0 : performance.now() - activeSince));
  // t0 is rebuilt from Date.now(), which has whole-millisecond resolution, after a remount: time since shown
  // can then read up to 1 ms under the active time it contains by definition.
  const sinceShown = () => Math.max(round1(performance.now() - t0), activeMs());
  function attention(type) {
    const now = performance.now();
    if (activeSince !== null) { stored += now - activeSince; activeSince = null; }
    if (type === "focus") focused = true;
    if (type === "blur") focused = false;
    if (type === "visible") visible = true;
    if (type === "hidden") visible = false;
    if (visible && focused) activeSince = now;
    if (onChange) onChange(type);
  }
  const onFocus = () => attention("focus");
  const onBlur = () => attention("blur");
  const onVisibility = () => attention(document.visibilityState === "visible" ? "visible" : "hidden");
  window.addEventListener("focus", onFocus);
  window.addEventListener("blur", onBlur);
  document.addEventListener("visibilitychange", onVisibility);
  return {
    activeMs,
    sinceShown,
    destroy() {
      window.removeEventListener("focus", onFocus);
      window.removeEventListener("blur", onBlur);
      document.removeEventListener("visibilitychange", onVisibility);
    },
  };
}
