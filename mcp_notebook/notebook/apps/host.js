// The host side of an MCP App in a notebook output (ext-apps spec 2026-01-26): a sandboxed iframe and the
// postMessage JSON-RPC bridge. What only the page knows is answered here (ui/initialize with the host
// context: JupyterLab's theme, the container's size, locale; size changes; display mode; asking before a
// link opens); everything else (tools/call, resources/read, ui/message, ui/update-model-context, logs)
// goes to the kernel, which routes it through the notebook's approval policy and audit log. Every message
// either way is copied to the kernel, for the app's trace.

const PROTOCOL = "2026-01-26";
const RESERVED = "ui/notifications/sandbox-"; // proxy <-> host only: never relayed from the view

// The proxy document (the outer frame's srcdoc, one per app). It makes the view's frame from the host's
// sandbox-resource-ready, relays messages between the host (its parent) and the view (its child), and
// stops relaying for good when the view's frame loads a second document (its own navigation), telling the
// host. frame-src is checked against the embedder: the view's frame cannot navigate to an origin its
// policy does not declare (and sandboxed, it may navigate nothing but itself).
// The view's srcdoc document inherits this document's policy (the policy container of about:srcdoc), so the
// proxy carries the app's own policy (from the kernel: _meta.ui.csp, deny by default): the view gets what
// its server declared, and its frame may navigate only to a declared frameDomains origin.
// (the document itself comes from the kernel: apps/proxy.html, in the proxy_html trait)
const MIN_HEIGHT = 24;
const MODES = ["inline", "fullscreen", "pip"];
const MODE_STYLE = {
  inline: "",
  fullscreen:
    "position:fixed;inset:0;z-index:10000;display:flex;flex-direction:column;box-sizing:border-box;padding:4px 8px;" +
    "background:var(--jp-layout-color0, #fff)",
  pip:
    "position:fixed;right:16px;bottom:16px;width:min(480px, 45vw);height:min(340px, 45vh);z-index:10000;display:flex;" +
    "flex-direction:column;box-sizing:border-box;padding:4px;background:var(--jp-layout-color0, #fff);" +
    "border:1px solid var(--jp-border-color1, #ccc);box-shadow:0 4px 16px rgba(0,0,0,.3)",
};
const MAX_DOWNLOAD = 50 * 1024 * 1024; // bytes, per file
const TEARDOWN_MS = 3000; // how long a removed output's app may take to answer ui/resource-teardown

function labTheme() {
  // JupyterLab marks the body with the current theme's lightness
  return document.body.dataset.jpThemeLight === "false" ? "dark" : "light";
}

function styleVariables() {
  const css = getComputedStyle(document.body);
  const pick = (name) => css.getPropertyValue(name).trim() || undefined;
  return {
    "--color-background-primary": pick("--jp-layout-color0"),
    "--color-background-secondary": pick("--jp-layout-color1"),
    "--color-text-primary": pick("--jp-content-font-color1"),
    "--color-text-secondary": pick("--jp-content-font-color2"),
    "--color-border-primary": pick("--jp-border-color1"),
    "--font-sans": pick("--jp-ui-font-family"),
    "--font-mono": pick("--jp-code-font-family"),
  };
}

function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

function render({ model, el }) {
  const theme = () => model.get("theme_override") || labTheme(); // the preview's fake context, or the lab's
  const root = document.createElement("div");
  root.className = "mcpnb-app";
  const label = document.createElement("div");
  label.className = "mcpnb-app-label";
  label.style.cssText = "font-size:var(--jp-ui-font-size0, 11px);color:var(--jp-ui-font-color2, #666);padding:2px 0";
  const showLabel = () => {
    label.textContent = model.get("label");
    label.title = `${model.get("title")}: a page from this server, sandboxed (no access to JupyterLab)`;
  };
  const status = document.createElement("div");
  status.className = "mcpnb-app-status";
  const asks = document.createElement("div");
  asks.className = "mcpnb-app-asks";
  const head = document.createElement("div");
  head.className = "mcpnb-app-head";
  head.style.cssText = "display:flex;align-items:center;gap:6px";
  const modeButtons = {};
  const modeBar = document.createElement("span");
  modeBar.className = "mcpnb-app-modes";
  modeBar.style.cssText = "margin-left:auto;display:flex;gap:4px";
  for (const [name, text] of [["inline", "back inline (Esc)"], ["pip", "picture-in-picture"], ["fullscreen", "fullscreen"]]) {
    const button = document.createElement("button");
    button.className = `mcpnb-app-mode mcpnb-app-mode-${name}`;
    button.textContent = text;
    button.title = `show the app ${text}`;
    button.style.cssText = "font-size:var(--jp-ui-font-size0, 11px)";
    modeBar.append(button);
    modeButtons[name] = button;
  }
  head.append(label, modeBar);
  // what stays in the output while the app is shown elsewhere (fullscreen, picture-in-picture)
  const away = document.createElement("div");
  away.className = "mcpnb-app-away";
  away.style.display = "none";
  // the frame's place in the output: the frame itself is laid over it (layer.js)
  const slot = document.createElement("div");
  slot.className = "mcpnb-app-slot";
  slot.style.cssText = "width:100%;display:block";
  root.append(head, status, asks, slot);
  el.append(away, root);

  let initialized = false;
  let delivered = { input: false, partial: null, result: false, cancelled: false };
  let nextId = 1;
  const pending = new Map();

  // Two frames per document. The outer one is ours: a proxy document (apps/proxy.html) under the app's policy,
  // so the view inside it cannot navigate to an undeclared origin (frame-src is the embedder's check, and a
  // sandboxed frame may navigate only itself). The proxy relays the bridge both ways and
  // closes it for good the moment the view's frame loads a second time (only about:blank can load there):
  // nothing is relayed after that.
  let frame = null;
  const place = follower(slot, () => mode, root, () => setMode("inline", "person")); // the frame over the slot (layer.js)
  let proxyReady = false;
  let closed = false;
  let pendingHtml = null;
  const makeFrame = (html) => {
    const next = document.createElement("iframe");
    next.className = "mcpnb-app-frame";
    next.setAttribute("sandbox", model.get("sandbox"));
    if (model.get("allow")) next.setAttribute("allow", model.get("allow"));
    next.setAttribute("title", model.get("title") || "MCP App");
    next.style.cssText = "width:100%;height:100%;display:block;background:transparent;border:0;box-sizing:border-box";
    if (model.get("prefers_border")) next.style.border = "1px solid var(--jp-border-color1, #ccc)";
    slot.style.height = inlineHeight || `${model.get("height")}px`;
    slot.style.display = "block";
    const origin = originProxy();
    if (origin) {
      // an app that asked for a domain: a guard document of ours (JupyterLab's origin, our code only) whose
      // frame-src admits the kernel's proxy origin alone, framing the proxy served there
      next.setAttribute("sandbox", "allow-scripts allow-same-origin");
      next.srcdoc = guardDocument(origin, model.get("allow"));
    } else {
      next.srcdoc = model.get("proxy_html");
    }
    proxyReady = false;
    closed = false;
    pendingHtml = html;
    place.show(next);
    frame = next;
  };
  const originProxy = () => {
    const found = proxyOrigin(model.get("origin"));
    if (!found) return null;
    found.src = `${found.origin}${found.path}?policy=${encodeURIComponent(model.get("policy"))}`;
    return found;
  };
  const sendResource = () => {
    if (!frame || !frame.contentWindow || pendingHtml === null) return;
    const sandbox = originProxy() ? `${model.get("sandbox")} allow-same-origin` : model.get("sandbox");
    const params = { html: pendingHtml, sandbox };
    if (model.get("allow")) params.allow = model.get("allow");
    pendingHtml = null;
    frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params }, "*");
  };
  const closeBridge = (why) => {
    if (closed) return;
    closed = true;
    status.textContent = why;
    status.style.display = "";
    model.send({ kind: "closed", reason: why });
  };

  // to the kernel: over the widget's comm, or once the notebook's tab is closed (the comm gone with its
  // connection) by the courier (courier.js); with neither, the app still gets its answers from the page
  let kernel = kernelOf(model);
  let lastWords = null;
  const tell = (content) => {
    if (!commGone(model, kernel)) {
      kernel = kernelOf(model) || kernel;
      try {
        return void model.send(content);
      } catch {
        // the comm closed meanwhile: the courier takes it
      }
    }
    try {
      lastWords = lastWords || courier(kernel, model.get("comm_id"));
      lastWords.send(content);
    } catch {
      // no kernel to reach
    }
  };
  const copy = (direction, message, handled) => tell({ kind: direction, message, handled });
  const toApp = (message) => {
    if (closed || !frame) return;
    if (frame.contentWindow) frame.contentWindow.postMessage(message, "*"); // its origin is opaque
    copy("out", message, true);
  };
  const notify = (method, params) => toApp({ jsonrpc: "2.0", method, params });
  const reply = (id, result) => toApp({ jsonrpc: "2.0", id, result });
  const fail = (id, code, message) => toApp({ jsonrpc: "2.0", id, error: { code, message } });
  const request = (method, params, ms) =>
    new Promise((resolve, reject) => {
      const id = `host-${nextId++}`;
      pending.set(id, { resolve, reject });
      toApp({ jsonrpc: "2.0", id, method, params });
      setTimeout(() => pending.delete(id) && reject(new Error(`${method}: no answer in ${ms} ms`)), ms);
    });

  // ---- display modes: inline (in the output), fullscreen (a full-window overlay), pip (a small window
  // fixed in a corner). The frame is never moved in the DOM (a moved iframe reloads): only its box's
  // position changes, so the app keeps its state across modes.
  let mode = "inline";
  let appModes = null; // what the app said it supports (ui/initialize appCapabilities.availableDisplayModes)
  let inlineHeight = null;
  const offered = () => MODES.filter((m) => !appModes || appModes.includes(m) || m === "inline");
  const dimensions = () => {
    if (mode === "inline") {
      return { width: Math.round(root.getBoundingClientRect().width) || undefined, maxHeight: model.get("max_height") };
    }
    const box = slot.getBoundingClientRect();
    return { width: Math.round(box.width) || undefined, height: Math.round(box.height) || undefined };
  };
  const context = () => {
    const context = {
      theme: theme(),
      styles: { variables: styleVariables() },
      displayMode: mode,
      availableDisplayModes: offered(),
      containerDimensions: dimensions(),
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: "web",
      userAgent: "mcp-notebook (JupyterLab)",
      deviceCapabilities: { hover: matchMedia("(hover: hover)").matches, touch: navigator.maxTouchPoints > 0 },
    };
    const toolInfo = model.get("tool_info");
    if (toolInfo && toolInfo.tool) context.toolInfo = toolInfo;
    return context;
  };

  const deliver = () => {
    if (!initialized) return;
    const partial = model.get("tool_input_partial");
    if (partial && !delivered.input && JSON.stringify(partial) !== delivered.partial) {
      delivered.partial = JSON.stringify(partial);
      notify("ui/notifications/tool-input-partial", { arguments: partial });
    }
    const input = model.get("tool_input");
    if (input && !delivered.input) {
      delivered.input = true;
      notify("ui/notifications/tool-input", { arguments: input });
    }
    const result = model.get("tool_result");
    if (result && !delivered.result) {
      delivered.result = true;
      notify("ui/notifications/tool-result", result);
    }
    const cancelled = model.get("tool_cancelled");
    if (cancelled && !delivered.cancelled && !delivered.result) {
      delivered.cancelled = true;
      notify("ui/notifications/tool-cancelled", { reason: cancelled });
    }
  };

  const resize = (params) => {
    const height = Number(params && params.height);
    if (Number.isFinite(height)) {
      const bounded = Math.max(MIN_HEIGHT, Math.min(Math.ceil(height), model.get("max_height")));
      inlineHeight = `${bounded}px`;
      if (mode === "inline") slot.style.height = inlineHeight; // elsewhere the box decides
    }
  };

  const askToOpen = (message) => {
    const url = safeUrl(message.params && message.params.url);
    if (!url) return reply(message.id, { isError: true });
    const card = document.createElement("div");
    card.className = "mcpnb-app-ask";
    const text = document.createElement("span");
    text.textContent = `The app asks to open ${url} `;
    const open = document.createElement("button");
    open.textContent = "Open";
    const no = document.createElement("button");
    no.textContent = "Don't open";
    const done = (opened) => {
      card.remove();
      copy("decision", { method: "ui/open-link", url, opened }, true);
      reply(message.id, opened ? {} : { isError: true });
    };
    open.onclick = () => {
      window.open(url, "_blank", "noopener,noreferrer");
      done(true);
    };
    no.onclick = () => done(false);
    card.append(text, open, no);
    asks.append(card);
  };

  const setMode = (next, by) => {
    if (!offered().includes(next) || next === mode) return;
    mode = next;
    root.dataset.mode = next;
    root.style.cssText = MODE_STYLE[next];
    if (next === "inline") {
      slot.style.flex = "";
      slot.style.height = inlineHeight || `${model.get("height")}px`;
    } else {
      slot.style.flex = "1 1 auto";
      slot.style.height = "0";
    }
    away.style.display = next === "inline" ? "none" : "";
    away.textContent = next === "inline" ? "" : `The app is shown ${next === "pip" ? "picture-in-picture" : "fullscreen"}. `;
    if (next !== "inline") {
      const back = document.createElement("button");
      back.textContent = "back inline";
      back.onclick = () => setMode("inline", "person");
      away.append(back);
    }
    showModes();
    place.moved(); // the focus into a fullscreen box, or back where it was (layer.js)
    if (model.get("display_mode") !== next) {
      model.set("display_mode", next);
      model.save_changes();
    }
    copy("decision", { method: "display-mode", mode: next, by }, true);
    if (initialized) notify("ui/notifications/host-context-changed", { displayMode: next, containerDimensions: dimensions() });
  };
  const showModes = () => {
    for (const [name, button] of Object.entries(modeButtons)) {
      button.style.display = offered().includes(name) && name !== mode ? "" : "none";
    }
  };
  for (const [name, button] of Object.entries(modeButtons)) button.onclick = () => setMode(name, "person");

  // ui/download-file: a card says what the app wants to save (names, types, sizes); nothing is written
  // until the person clicks Save, and then the browser's own download (its save dialog, if so set) does it.
  const fileName = (uri, index) => {
    let name = "";
    try {
      name = decodeURIComponent(new URL(uri).pathname.split("/").pop() || "");
    } catch {
      name = "";
    }
    name = name.replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, "_").replace(/^\.+/, "").slice(0, 120);
    return name || `download-${index + 1}`;
  };
  const askToDownload = (message) => {
    const contents = (message.params && Array.isArray(message.params.contents) && message.params.contents) || [];
    const files = [];
    for (const [index, item] of contents.entries()) {
      const resource = item && item.type === "resource" && item.resource;
      if (!resource || typeof resource.uri !== "string") continue; // links are not fetched by this host
      let bytes = null;
      if (typeof resource.text === "string") bytes = new TextEncoder().encode(resource.text);
      else if (typeof resource.blob === "string") {
        try {
          bytes = Uint8Array.from(atob(resource.blob), (c) => c.charCodeAt(0));
        } catch {
          bytes = null;
        }
      }
      if (!bytes || bytes.length > MAX_DOWNLOAD) continue;
      files.push({ name: fileName(resource.uri, index), type: String(resource.mimeType || "application/octet-stream"), bytes });
    }
    if (!files.length) return reply(message.id, { isError: true });
    const card = document.createElement("div");
    card.className = "mcpnb-app-ask mcpnb-app-download";
    const text = document.createElement("span");
    const listed = files.map((f) => `${f.name} (${f.type}, ${f.bytes.length} bytes)`).join(", ");
    text.textContent = `The app asks to save ${files.length === 1 ? "a file" : `${files.length} files`}: ${listed} `;
    const save = document.createElement("button");
    save.textContent = "Save";
    const no = document.createElement("button");
    no.textContent = "Don't save";
    const done = (saved) => {
      card.remove();
      copy("decision", { method: "ui/download-file", files: files.map((f) => f.name), saved }, true);
      reply(message.id, saved ? {} : { isError: true });
    };
    save.onclick = () => {
      for (const file of files) {
        const url = URL.createObjectURL(new Blob([file.bytes], { type: file.type }));
        const link = document.createElement("a");
        link.href = url;
        link.download = file.name;
        link.rel = "noopener";
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      }
      done(true);
    };
    no.onclick = () => done(false);
    card.append(text, save, no);
    asks.append(card);
  };

  const local = {
    "ui/initialize": (m) => {
      const asked = m.params && m.params.protocolVersion;
      const declared = m.params && m.params.appCapabilities && m.params.appCapabilities.availableDisplayModes;
      appModes = Array.isArray(declared) ? declared.filter((d) => MODES.includes(d)) : null;
      showModes();
      reply(m.id, {
        protocolVersion: asked === PROTOCOL ? asked : PROTOCOL,
        hostInfo: model.get("host_info"),
        hostCapabilities: model.get("host_capabilities"),
        hostContext: context(),
      });
    },
    "ui/notifications/initialized": () => {
      initialized = true;
      deliver();
    },
    "ui/notifications/size-changed": (m) => resize(m.params),
    "ui/request-display-mode": (m) => {
      setMode(m.params && m.params.mode, "app");
      reply(m.id, { mode });
    },
    "ui/open-link": askToOpen,
    "ui/download-file": askToDownload,
    ping: (m) => reply(m.id, {}),
  };

  const onMessage = (event) => {
    if (closed || !frame || event.source !== frame.contentWindow) return; // this output's own app, on its page
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (message.method === "ui/notifications/sandbox-proxy-ready") {
      if (proxyReady && pendingHtml === null && model.get("html")) {
        // the proxy loaded again: its frame was detached and attached again (JupyterLab detaches a cell's
        // outputs while they are hidden), which starts a frame's page over. So does the app: it is sent
        // again and told the call's input and result again (it keeps only what it stored)
        initialized = false;
        delivered = { input: false, partial: null, result: false, cancelled: false };
        pendingHtml = model.get("html");
      }
      proxyReady = true;
      return sendResource();
    }
    if (message.method === "ui/notifications/sandbox-scroll") {
      if (mode === "inline") scrollUnder(slot, Number(message.params && message.params.dy));
      return;
    }
    if (message.method === "ui/notifications/sandbox-tab-back") return place.leave(Boolean(message.params?.forward));
    if (message.method === "ui/notifications/sandbox-escape") return place.escape();
    if (message.method === "ui/notifications/sandbox-view-left") {
      return closeBridge("The app left its page; the bridge to it is closed.");
    }
    if (!("method" in message)) {
      const waiter = pending.get(message.id);
      copy("in", message, Boolean(waiter)); // an answer to the kernel's own request goes on to it
      if (waiter) {
        pending.delete(message.id);
        if (message.error) waiter.reject(message.error);
        else waiter.resolve(message.result);
      }
      return;
    }
    const handler = local[message.method];
    copy("in", message, Boolean(handler));
    if (handler) handler(message);
  };
  window.addEventListener("message", onMessage);

  // ui/resource-teardown, answered or not within `ms`; the kernel hears how it went (view.torn_down)
  let toldTeardown = false;
  const tearDown = (ms, by) => {
    toldTeardown = true;
    return request("ui/resource-teardown", {}, ms)
      .then(() => tell({ kind: "torn_down", ok: true, by }))
      .catch((error) => tell({ kind: "torn_down", ok: false, by, error: String(error.message || error) }));
  };
  // the kernel's answers and requests for the app, and its view.teardown()
  const onCustom = (msg) => {
    if (msg.kind === "to_app") toApp(msg.message);
    else if (msg.kind === "teardown") {
      tearDown(msg.timeout_ms || TEARDOWN_MS, "kernel").finally(() => {
        place.stop();
        if (frame) frame.remove();
        frame = null;
        slot.style.display = "none"; // no empty box where the app was
      });
    }
  };
  // The page itself is going (the browser's tab or window closed, a reload, leaving Notebook 7's page): the
  // app is told, best effort. Nothing can be awaited: the page and its frames go right after, so the app
  // may not get to run, and its answer reaches no one. Should the browser keep the page (back-forward
  // cache) and show it again, the app starts over.
  const onPageHide = () => {
    if (initialized && !closed && frame && frame.contentWindow) void tearDown(TEARDOWN_MS, "page closed");
  };
  const onPageShow = (event) => {
    if (event.persisted && toldTeardown && frame) load();
  };
  window.addEventListener("pagehide", onPageHide);
  window.addEventListener("pageshow", onPageShow);
  model.on("msg:custom", onCustom);

  const showStatus = () => {
    status.textContent = model.get("status");
    status.style.display = model.get("status") ? "" : "none";
  };
  const load = () => {
    const html = model.get("html");
    if (!html) return;
    initialized = false;
    toldTeardown = false;
    delivered = { input: false, partial: null, result: false, cancelled: false };
    makeFrame(html);
  };
  const onChange = () => deliver();
  model.on("change:html", load);
  model.on("change:status", showStatus);
  for (const name of ["tool_input", "tool_input_partial", "tool_result", "tool_cancelled"]) {
    model.on(`change:${name}`, onChange);
  }

  // JupyterLab's theme and the output's width, followed as they change
  let lastTheme = theme();
  const themeWatch = new MutationObserver(() => {
    const now = theme();
    if (now !== lastTheme && initialized) {
      lastTheme = now;
      notify("ui/notifications/host-context-changed", { theme: now, styles: { variables: styleVariables() } });
    }
  });
  const themeFromKernel = () => {
    lastTheme = theme();
    if (initialized) notify("ui/notifications/host-context-changed", { theme: lastTheme, styles: { variables: styleVariables() } });
  };
  model.on("change:theme_override", themeFromKernel);
  const widthFromKernel = () => {
    const width = model.get("width_override");
    root.style.width = width > 0 ? `${width}px` : "";
  };
  model.on("change:width_override", widthFromKernel);
  widthFromKernel();
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
  let lastWidth = dimensions().width;
  const sizeWatch = new ResizeObserver(() => {
    const now = dimensions();
    if (initialized && now.width && now.width !== lastWidth) {
      lastWidth = now.width;
      notify("ui/notifications/host-context-changed", { containerDimensions: now });
    }
  });
  sizeWatch.observe(root);

  model.on("change:label", showLabel);
  const modeFromKernel = () => setMode(model.get("display_mode"), "code");
  model.on("change:display_mode", modeFromKernel);
  showLabel();
  showModes();
  showStatus();
  load();

  return () => {
    // the output is gone (cleared, cell re-run or deleted, the notebook's tab closed) but the frame, in the
    // layer, is not: tell the app, wait for its answer (bounded), then remove the frame and stop listening
    place.stop(); // hidden: nothing to show it over
    const gone = frame;
    frame = null; // nothing is laid out or loaded for this output any more
    const finish = () => {
      if (gone) gone.remove();
      window.removeEventListener("message", onMessage);
      if (lastWords) lastWords.close(TEARDOWN_MS);
    };
    if (initialized && !closed && !toldTeardown && gone && gone.isConnected && gone.contentWindow) {
      frame = gone; // the bridge still speaks to it until it answered
      tearDown(TEARDOWN_MS, "output removed").finally(() => {
        frame = null;
        finish();
      });
    } else {
      finish();
    }
    window.removeEventListener("pagehide", onPageHide);
    window.removeEventListener("pageshow", onPageShow);
    model.off("msg:custom", onCustom);
    model.off("change:html", load);
    model.off("change:status", showStatus);
    model.off("change:label", showLabel);
    model.off("change:display_mode", modeFromKernel);
    model.off("change:theme_override", themeFromKernel);
    model.off("change:width_override", widthFromKernel);
    for (const name of ["tool_input", "tool_input_partial", "tool_result", "tool_cancelled"]) {
      model.off(`change:${name}`, onChange);
    }
    themeWatch.disconnect();
    sizeWatch.disconnect();
  };
}

export default { render };
