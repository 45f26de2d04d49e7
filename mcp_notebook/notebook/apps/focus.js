// The keyboard around an app's frame (host.py joins this file before layer.js into the widget's one ES
// module; layer.js's follower uses it): the page's order for the Tab key, and what the box of an app shown
// fullscreen covers, where the Tab key must not go.
//
// focusOrder(scope) follows HTML's sequential focus navigation as Chromium does: in each focus navigation
// scope (the document, a shadow root, a slot's assigned elements) the elements with a positive tabindex
// come first (by value, then in tree order), then those with tabindex 0 in tree order; a shadow host (or a
// slot with assigned elements) stands in its scope where its own tabindex puts it (0 without one), itself
// first if it is focusable, then its scope's order. Not covered: closed shadow roots (the page's script
// cannot see into them), a host with delegatesFocus or a negative tabindex (its shadow tree is left out),
// radio groups (the browser stops on one radio of a group, this counts each), contenteditable="false",
// the content of frames (an iframe is one stop: the app's own order applies inside its frame).

const FOCUSABLE = "a[href],area[href],button,input,select,textarea,iframe,summary,[tabindex],[contenteditable]";
const tabStop = (node) =>
  node.tabIndex >= 0 &&
  node.matches(FOCUSABLE) &&
  !node.matches(":disabled") &&
  node.type !== "hidden" &&
  !node.closest("[inert]") &&
  (!node.checkVisibility || node.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true }));

// the elements of `scope` (a document, an element, a shadow root) the Tab key stops on, in its order;
// skip(element) leaves an element and all it holds out
function focusOrder(scope, skip) {
  const entries = []; // { index, nodes } in tree order
  const visit = (parent) => {
    const children = parent.localName === "slot" ? parent.assignedElements() : parent.children;
    for (const node of children) {
      if (skip && skip(node)) continue;
      const stop = tabStop(node);
      const inner = node.shadowRoot || (node.localName === "slot" && node.assignedElements().length ? node : null);
      if (!inner) {
        if (stop) entries.push({ index: node.tabIndex, nodes: [node] });
        visit(node); // what it holds is in the same scope
        continue;
      }
      const index = node.hasAttribute("tabindex") ? node.tabIndex : 0;
      if (index >= 0) entries.push({ index, nodes: stop ? [node, ...focusOrder(inner, skip)] : focusOrder(inner, skip) });
    }
  };
  visit(scope);
  const rank = (entry) => (entry.index > 0 ? entry.index : Infinity);
  return entries.sort((a, b) => rank(a) - rank(b)).flatMap((entry) => entry.nodes); // sort is stable
}

// the element that has the focus, inside open shadow roots too
function deepActive() {
  let at = document.activeElement;
  while (at && at.shadowRoot && at.shadowRoot.activeElement) at = at.shadowRoot.activeElement;
  return at;
}

// What a box fixed to the window (an app shown fullscreen) covers: its nearest ancestor that contains
// fixed positioning (JupyterLab's panels do: the notebook's area), else the child of body it is in (the
// page's menus and dialogs, beside it in body, stay over it).
function coverOf(box) {
  let top = box;
  for (let node = box.parentElement; node && node !== document.body; node = node.parentElement) {
    const s = getComputedStyle(node);
    const contains =
      s.transform !== "none" ||
      s.perspective !== "none" ||
      s.filter !== "none" ||
      (s.backdropFilter && s.backdropFilter !== "none") ||
      /paint|layout|strict|content/.test(s.contain) ||
      (s.containerType && s.containerType !== "normal") ||
      /transform|perspective|filter/.test(s.willChange);
    if (contains) return node;
    top = node;
  }
  return top;
}

// The Tab key inside an app shown fullscreen (`box()`: its box, or null in the other modes) stays in that
// box, as in a dialog: from its last stop on to its first, from its first back to its last, and a focus that
// lands behind it (the notebook it covers) is brought back in. `layer` says what is the frames' layer's.
// Returns the two listeners' remover.
function trapTab(box, layer) {
  const behind = (inside, node) => !inside.contains(node) && coverOf(inside).contains(node) && !layer(node);
  const onKey = (event) => {
    const inside = box();
    if (!inside || event.defaultPrevented || event.key !== "Tab" || event.altKey || event.ctrlKey || event.metaKey) return;
    const at = deepActive();
    if (at !== document.body && !inside.contains(at) && !behind(inside, at)) return; // the page's menus, side panels
    const order = focusOrder(inside);
    if (!order.length) return;
    const step = event.shiftKey ? -1 : 1;
    const here = order.indexOf(at);
    const next = here < 0 ? order[step > 0 ? 0 : order.length - 1] : order[(here + step + order.length) % order.length];
    event.preventDefault();
    next.focus();
  };
  const onFocus = (event) => {
    const inside = box();
    const at = deepActive();
    if (!inside || !at || at === document.body || at.contains(inside) || !behind(inside, at)) return;
    const order = focusOrder(inside); // come in from before it: its first stop; from after it: its last
    const after = inside.compareDocumentPosition(at) & Node.DOCUMENT_POSITION_FOLLOWING;
    const next = order[after ? order.length - 1 : 0];
    if (next) next.focus();
    else event.target.blur();
  };
  addEventListener("keydown", onKey); // last: the notebook's own keydown has run (it pulls a focus gone out of it back)
  document.addEventListener("focusin", onFocus, true);
  return () => {
    removeEventListener("keydown", onKey);
    document.removeEventListener("focusin", onFocus, true);
  };
}
