// Where an app's frame lives, and how it is laid over its place in the output (host.py joins this file and
// host.js into the widget's one ES module: anywidget's loader takes no imports of our own).
//
// A frame must outlive whatever the person removes, or the app could never be told (ui/resource-teardown):
// JupyterLab and Notebook 7 detach an output's DOM before its widget's cleanup runs (Clear Outputs, a
// re-run cell), deleting a cell disposes its output area, closing the notebook's tab disposes the whole
// panel, and a detached iframe's page is gone at once; moving an iframe in the DOM reloads it. So the frame
// lives in one layer of ours under document.body, which nothing in the notebook removes, laid over a slot in
// its output (as VS Code hosts webviews): every animation frame it is placed (position:fixed) over the
// slot's box, clipped to what can be seen of it (the window cut by every ancestor that clips its overflow:
// the notebook's scroller, a scrolled output), and hidden while the slot is not shown (a collapsed output,
// another tab, a removed output). Removing the output removes only the slot: the view's cleanup sends
// ui/resource-teardown, waits for the answer (bounded), and only then removes the frame. Outside an output
// area (another front end) the frame goes into the slot itself.
//
// Keyboard and assistive technology: the layer is at the end of the page, so the frame is out of the Tab
// order there, and its slot leads to it and out of it again (see "the keyboard" below); the slot owns the
// frame (aria-owns), so a screen reader finds the app in its output.
//
// Stacking: the layer comes after JupyterLab's shell in body, with z-index 0 for an inline frame, so the
// notebook's content is under it and JupyterLab's menus, dialogs and completers (z-index 10000 and more,
// also in body) are over it; fullscreen and picture-in-picture frames sit just over their own overlay.

const LAYER_CLASS = "mcpnb-app-layer";
const Z_INLINE = "0";
const Z_OVERLAY = "10001"; // the output's fullscreen / pip box is 10000 (MODE_STYLE)
const CLIPPERS_EVERY = 30; // animation frames between two looks at which ancestors clip the slot
let slotsMade = 0;

function appLayer() {
  let layer = document.querySelector(`body > .${LAYER_CLASS}`);
  if (!layer) {
    layer = document.createElement("div");
    layer.className = LAYER_CLASS;
    layer.style.cssText = "width:0;height:0"; // no box: each frame is fixed over its slot
    // a frame the keyboard entered shows that it has the focus while it keeps it (an iframe with the focus
    // in it matches no :focus in Chromium)
    const style = document.createElement("style");
    style.textContent =
      `.${LAYER_CLASS} > iframe[data-mcpnb-keyed]` +
      "{outline:2px solid var(--jp-brand-color1, #1976d2);outline-offset:-2px}";
    layer.append(style);
    document.body.append(layer);
  }
  return layer;
}

// the slot's ancestors that clip what overflows them (overflow other than visible)
function clippersOf(slot) {
  const found = [];
  for (let node = slot.parentElement; node && node !== document.body; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (style.overflowX !== "visible" || style.overflowY !== "visible") found.push(node);
  }
  return found;
}

// the part of the window where the slot can be seen: inside every clipping ancestor's client box (its
// scrollbars excluded)
function visibleArea(clippers) {
  let left = 0;
  let top = 0;
  let right = innerWidth;
  let bottom = innerHeight;
  for (const node of clippers) {
    const box = node.getBoundingClientRect();
    const x = box.left + node.clientLeft;
    const y = box.top + node.clientTop;
    left = Math.max(left, x);
    top = Math.max(top, y);
    right = Math.min(right, x + node.clientWidth);
    bottom = Math.min(bottom, y + node.clientHeight);
  }
  return { left, top, right, bottom };
}

const HIDDEN = { visibility: "hidden" };
const shown = (slot) =>
  slot.isConnected && (!slot.checkVisibility || slot.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true }));

// The frame's box over the slot: fixed, clipped to the visible area while inline; over the whole window in
// the other modes (their box is fixed too: no ancestor clips it).
function placement(slot, inline, clippers) {
  if (!shown(slot)) return HIDDEN;
  const box = slot.getBoundingClientRect();
  if (!(box.width > 0 && box.height > 0)) return HIDDEN;
  let clipPath = "none";
  if (inline) {
    const area = visibleArea(clippers);
    const cut = [area.top - box.top, box.right - area.right, box.bottom - area.bottom, area.left - box.left];
    if (cut[0] >= box.height || cut[2] >= box.height || cut[1] >= box.width || cut[3] >= box.width) return HIDDEN;
    if (cut.some((c) => c > 0)) clipPath = `inset(${cut.map((c) => `${Math.max(0, c)}px`).join(" ")})`;
  }
  return {
    position: "fixed",
    left: `${box.left}px`,
    top: `${box.top}px`,
    width: `${box.width}px`,
    height: `${box.height}px`,
    zIndex: inline ? Z_INLINE : Z_OVERLAY,
    clipPath,
    visibility: "",
  };
}

// ---- the keyboard. The frame's place in the page's Tab order is its slot's (an entry at each end of the
// slot takes the focus to it: follower). Out of the frame, the Tab key reaches the element after it in the
// layer: a guard, one before and one after the frame that has the focus, which takes the focus on to the
// element the Tab key reaches after (or before) the slot (the follower's beside, in focus.js's order). The
// guards are in the Tab order only while their frame has the focus: the end of the page stays the end.
const inLayerNode = (node) => Boolean(node.closest && node.closest(`.${LAYER_CLASS}`));
const isLayer = (node) => node.classList.contains(LAYER_CLASS);

let guards = null; // { before, after, slot, beside }
function guard(frame, slot, beside) {
  if (!guards) {
    const make = (forward) => {
      const node = document.createElement("div");
      node.className = `${LAYER_CLASS}-guard`;
      node.tabIndex = -1;
      node.addEventListener("focus", () => {
        const next = guards.beside ? guards.beside(forward) : null;
        unguard(guards.slot);
        if (next) next.focus();
        else node.blur();
      });
      return node;
    };
    guards = { before: make(false), after: make(true), slot: null, beside: null };
  }
  frame.before(guards.before);
  frame.after(guards.after);
  guards.before.tabIndex = 0;
  guards.after.tabIndex = 0;
  guards.slot = slot;
  guards.beside = beside;
}
function unguard(slot) {
  if (!guards || guards.slot !== slot) return;
  guards.before.tabIndex = -1;
  guards.after.tabIndex = -1;
  guards.slot = null;
  guards.beside = null;
}

// Keeps one view's frame over its slot: show(frame) puts a (new) frame in place, taking the old one's place
// in the DOM (the old one's page ends); stop() ends the following and hides the frame (it stays in the page
// until removed); moved() is told each change of display mode.
// mode() says how the view is shown (inline, fullscreen, pip), box is the view's own box (the output's app
// box, the overlay in fullscreen and picture-in-picture), exit() brings it back inline. The slot and frame
// carry one id (data-mcpnb-slot), so a test can find the frame of an output. The slot is named after the app
// (the frame's title).
function follower(slot, mode, box, exit) {
  const id = `${Date.now().toString(36)}-${++slotsMade}`;
  slot.dataset.mcpnbSlot = id;
  let frame = null;
  let inLayer = false;
  let placed = "";
  let clippers = [];
  let ticks = 0;
  let handle = 0;
  const place = () => {
    const want = placement(slot, mode() === "inline", clippers);
    const key = Object.values(want).join("|");
    if (key !== placed) {
      placed = key;
      Object.assign(frame.style, want);
    }
  };
  const tick = () => {
    handle = requestAnimationFrame(tick);
    if (!frame) return;
    if (!frame.isConnected) {
      if (!slot.isConnected) return; // not in the page yet
      inLayer = Boolean(slot.closest(".jp-OutputArea"));
      if (inLayer) {
        frame.tabIndex = -1; // not in the Tab order at the layer's place: the slot's entries lead to it
        slot.prepend(entries[0]);
        slot.append(entries[1]);
        slot.setAttribute("aria-owns", frame.id); // and assistive technology finds it in the slot
      }
      (inLayer ? appLayer() : slot).append(frame);
    }
    if (!inLayer) return;
    followFocus();
    if (ticks++ % CLIPPERS_EVERY === 0) clippers = slot.isConnected ? clippersOf(slot) : [];
    place();
  };
  // The Tab key reaches the frame where its slot is: an entry at each end of the slot takes the focus on to
  // the frame (placed first: the browser has just scrolled the entry into view); from there the app's own
  // order applies (Tab: its first control, Shift+Tab: its last), and out of it the guards take it on.
  // The frame's page is told from which side (apps/proxy.html): the key that turns back there comes back
  // as leave(forward).
  const enter = (forward) => {
    if (!frame || !inLayer || !frame.isConnected) return;
    clippers = clippersOf(slot);
    place();
    if (frame.contentWindow) {
      frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-entered", params: { forward } }, "*");
    }
    frame.focus();
    if (document.activeElement !== frame) return;
    frame.dataset.mcpnbKeyed = "";
    guard(frame, slot, beside);
  };
  // what the Tab key reaches after the slot (forward) or before it: in the page, or, shown fullscreen, in
  // the box (from its end on to its start, and back)
  const trap = () => (inLayer && frame && mode() === "fullscreen" ? box : null);
  const beside = (forward) => {
    if (!slot.isConnected) return null;
    const inside = trap();
    const order = inside ? focusOrder(inside) : focusOrder(document, isLayer);
    const at = order.indexOf(entries[forward ? 1 : 0]);
    if (at < 0) return null;
    return order[at + (forward ? 1 : -1)] || (inside ? order[forward ? 0 : order.length - 1] : null);
  };
  const entries = [true, false].map((forward) => {
    const entry = document.createElement("div");
    entry.className = "mcpnb-app-entry";
    entry.tabIndex = 0;
    entry.style.cssText = "position:absolute;left:0;width:1px;height:1px;outline:none";
    entry.addEventListener("focus", () => enter(forward));
    return entry;
  });
  entries[0].style.top = "0";
  entries[1].style.bottom = "0";
  slot.style.position = "relative";
  slot.setAttribute("role", "group");
  // A click or Tab into the app focuses the frame, outside the notebook's DOM: the notebook hears it as if
  // the focus were in the output, as it did when the frame was there (its active cell follows; JupyterLab's
  // focus tracker, listening for focus while capturing, makes its tab the current one). Seen on the page's
  // window losing the focus, or by the tick (the page gets no focus event for a frame of another origin
  // taking the focus), which also puts the guards around the frame.
  let focused = false;
  const followFocus = () => {
    const now = document.activeElement === frame;
    if (now && !focused && slot.isConnected) {
      slot.dispatchEvent(new FocusEvent("focus"));
      slot.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
      guard(frame, slot, beside); // a click into the app: Tab out of it goes on from its slot too
    } else if (!now && focused) {
      unguard(slot); // the focus went elsewhere (a click): the guards are out
      delete frame.dataset.mcpnbKeyed;
    }
    focused = now;
  };
  // the page's window loses the focus to a frame taking it (a click; the frame is the active element by
  // then): seen at once, not at the next tick
  const onBlur = () => frame && inLayer && followFocus();
  // Fullscreen is a dialog over the notebook: the Tab key stays in the box (focus.js trapTab, and beside),
  // the focus goes in when it opens (to the box's first stop: the way back inline, unless it is in the app
  // already) and back where it was when it closes (if it is still in the box or the app then; else the
  // app's frame). Escape closes it from
  // anywhere in the page, and a picture-in-picture box from inside it; on the frame itself the frame's
  // document has the keys and says Escape (apps/proxy.html: escape()). Inside the app the keys are the
  // app's: it may ask to go back inline (ui/request-display-mode).
  let shownAs = "inline";
  let returnTo = null;
  let untrap = null;
  const onEscape = (event) => {
    if (event.key === "Escape" && (mode() === "fullscreen" || (mode() === "pip" && box.contains(event.target)))) exit();
  };
  const moved = () => {
    const [was, now] = [shownAs, mode()];
    shownAs = now;
    for (const [name, value] of [["role", "dialog"], ["aria-modal", "true"], ["aria-label", frame ? frame.title : ""]]) {
      if (now === "fullscreen") box.setAttribute(name, value);
      else box.removeAttribute(name);
    }
    if (!inLayer || !frame) return;
    const at = deepActive();
    if ((was === "fullscreen") === (now === "fullscreen")) {
      // inline <-> picture-in-picture: the button pressed is hidden now; the box's first stop instead (the
      // button that goes back)
      const first = box.contains(at) && !tabStop(at) ? focusOrder(box)[0] : null;
      if (first) first.focus();
      return;
    }
    if (now === "fullscreen") {
      returnTo = at === document.body ? null : at;
      const first = at === frame || (box.contains(at) && tabStop(at)) ? null : focusOrder(box)[0];
      if (first) first.focus();
      return;
    }
    const back = returnTo;
    returnTo = null;
    if (at !== document.body && at !== frame && !box.contains(at)) return; // the person went elsewhere
    if (back && back.isConnected && (back === frame || tabStop(back))) back.focus();
    else enter(true);
  };
  return {
    moved,
    // Escape on the frame (its document had the keys)
    escape() {
      if (mode() !== "inline") exit();
    },
    show(next) {
      next.dataset.mcpnbSlot = id;
      next.id = `mcpnb-app-frame-${id}`;
      slot.setAttribute("aria-label", next.title);
      if (frame && frame.isConnected) {
        if (inLayer) next.tabIndex = -1;
        frame.replaceWith(next);
      }
      frame = next;
      placed = "";
      ticks = 0;
      addEventListener("blur", onBlur); // once: the same listener is not added twice
      document.addEventListener("keydown", onEscape);
      untrap = untrap || trapTab(trap, inLayerNode);
      if (!handle) tick();
    },
    // the focus out of the frame, to what the Tab key reaches after the slot (forward) or before it
    leave(forward) {
      if (document.activeElement !== frame) return;
      const next = beside(forward);
      unguard(slot);
      if (next) next.focus();
    },
    stop() {
      if (handle) cancelAnimationFrame(handle);
      handle = 0;
      unguard(slot);
      removeEventListener("blur", onBlur);
      document.removeEventListener("keydown", onEscape);
      if (untrap) untrap();
      untrap = null;
      if (frame && inLayer) Object.assign(frame.style, HIDDEN); // its output is gone: nothing to show it over
      frame = null;
    },
  };
}

// A wheel the app did not use (its proxy says by how much: apps/proxy.html) scrolls what scrolls the slot,
// as it would if the frame were in the notebook: the nearest ancestor that can scroll vertically.
function scrollUnder(slot, dy) {
  if (!Number.isFinite(dy)) return;
  for (let node = slot.parentElement; node && node !== document.body; node = node.parentElement) {
    const style = getComputedStyle(node).overflowY;
    if ((style === "auto" || style === "scroll") && node.scrollHeight > node.clientHeight) return void node.scrollBy(0, dy);
  }
}
