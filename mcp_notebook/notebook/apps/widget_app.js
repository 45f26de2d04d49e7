// An anywidget served as an MCP App (apps/widget_app.py): the view side of the MCP Apps bridge (ext-apps spec
// 2026-01-26, plain postMessage JSON-RPC to the host) and an anywidget-compatible model for the widget's own
// ES module, which runs unmodified. Everything comes from the page itself (the JSON block #mcpnb-widget):
// nothing is fetched.
//
// The model: state starts from the widget's synced traits; the tool's arguments (ui/notifications/tool-input),
// then its result's structuredContent keys, that name one of them update it (change:NAME, then change).
// model.save_changes() sends the traits changed since the last save: to the tool named saveTool (tools/call,
// its arguments those traits; its result applied by the same rule), or, without one, to the host as
// ui/update-model-context (the whole state). model.send(content) calls the tool named sendTool with
// {content} and hands its structuredContent back to the widget as a msg:custom; without one it goes to the
// host's log (notifications/message).
(() => {
  const PROTOCOL = "2026-01-26";
  const config = JSON.parse(document.getElementById("mcpnb-widget").textContent);
  const root = document.getElementById("mcpnb-widget-root");

  // ---- the bridge: this page is the client, the host (our parent) the server ----------------------------
  let nextId = 1;
  const pending = new Map();
  const handlers = Object.create(null); // a method named "constructor" or "toString" is no handler
  const post = (message) => parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  const notify = (method, params) => post({ method, params });
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ id, method, params });
    });
  addEventListener("message", (event) => {
    if (event.source !== parent) return;
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (!("method" in message)) {
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(Object.assign(new Error(message.error.message || "error"), message.error));
      else waiter.resolve(message.result);
      return;
    }
    const handler = handlers[message.method];
    if (handler) handler(message.params || {}, message);
    else if ("id" in message) {
      post({ id: message.id, error: { code: -32601, message: `the widget app does not handle ${message.method}` } });
    }
  });
  const log = (level, data) => notify("notifications/message", { level, logger: config.name, data });

  // ---- binary traits travel as base64; the widget sees a DataView, as anywidget gives it ------------------
  const toView = (text) => {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    return new DataView(bytes.buffer);
  };
  const toJson = (value) => {
    let bytes = null;
    if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
    else if (ArrayBuffer.isView(value)) bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (!bytes) return value;
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return btoa(text);
  };
  const binary = new Set(config.binary || []);
  const state = Object.create(null); // no inherited keys: a result's "constructor" or "__proto__" is no trait
  for (const [name, value] of Object.entries(config.state || {})) {
    state[name] = binary.has(name) && typeof value === "string" ? toView(value) : value;
  }

  // ---- the model a widget's render({model, el}) gets ------------------------------------------------------
  const listeners = new Map(); // event name -> [{callback, context}]
  const dirty = new Set();
  const emit = (name, ...args) => {
    for (const { callback, context } of [...(listeners.get(name) || [])]) {
      try {
        callback.call(context, ...args);
      } catch (error) {
        console.error(error);
        log("error", `${name} listener: ${error}`);
      }
    }
  };
  const same = (a, b) => a === b || (!(a instanceof DataView) && JSON.stringify(a) === JSON.stringify(b));
  const update = (changes, fromWidget) => {
    const changed = [];
    for (const [name, value] of Object.entries(changes)) {
      if (same(state[name], value)) continue;
      state[name] = value;
      if (fromWidget) dirty.add(name);
      changed.push(name);
    }
    for (const name of changed) emit(`change:${name}`, model, state[name]);
    if (changed.length) emit("change", model);
  };
  const publicState = () => {
    const out = {};
    for (const [name, value] of Object.entries(state)) out[name] = toJson(value);
    return out;
  };
  const traitsOf = (values) => {
    const changes = {};
    for (const [name, value] of Object.entries(values)) {
      if (!(name in state)) continue; // only the widget's synced traits
      changes[name] = binary.has(name) && typeof value === "string" ? toView(value) : value;
    }
    return changes;
  };
  const isRecord = (value) => Boolean(value) && typeof value === "object" && !Array.isArray(value);
  let resultApplied = false;
  const applyResult = (result) => {
    const structured = result && !result.isError ? result.structuredContent : null;
    if (!isRecord(structured)) return;
    resultApplied = true;
    update(traitsOf(structured), false);
  };
  // The tool's arguments set the traits they name, as the result's keys do; the result, which comes after,
  // wins: an input that arrives once a result was applied changes nothing.
  const applyInput = (params) => {
    if (resultApplied || !params || !isRecord(params.arguments)) return;
    update(traitsOf(params.arguments), false);
  };
  const failed = (what) => (error) => log("error", `${what}: ${error && error.message ? error.message : error}`);

  const model = {
    get: (name) => state[name],
    set: (name, value) => {
      if (name && typeof name === "object") update(name, true);
      else update({ [name]: value }, true);
    },
    save_changes: () => {
      const changed = {};
      for (const name of dirty) changed[name] = toJson(state[name]);
      dirty.clear();
      if (config.saveTool) {
        return request("tools/call", { name: config.saveTool, arguments: changed })
          .then(applyResult)
          .catch(failed(`save_changes (${config.saveTool})`));
      }
      const whole = publicState();
      return request("ui/update-model-context", {
        content: [{ type: "text", text: `${config.name} state: ${JSON.stringify(whole)}` }],
        structuredContent: whole,
      }).catch(failed("save_changes (ui/update-model-context)"));
    },
    send: (content) => {
      if (!config.sendTool) return log("info", { widget: config.name, sent: content });
      return request("tools/call", { name: config.sendTool, arguments: { content } })
        .then((result) => {
          if (result && !result.isError) emit("msg:custom", result.structuredContent || {}, []);
        })
        .catch(failed(`send (${config.sendTool})`));
    },
    on: (name, callback, context) => {
      for (const one of String(name).split(/\s+/).filter(Boolean)) {
        if (!listeners.has(one)) listeners.set(one, []);
        listeners.get(one).push({ callback, context });
      }
    },
    off: (name, callback) => {
      const names = name ? String(name).split(/\s+/).filter(Boolean) : [...listeners.keys()];
      for (const one of names) {
        const kept = callback ? (listeners.get(one) || []).filter((l) => l.callback !== callback) : [];
        if (kept.length) listeners.set(one, kept);
        else listeners.delete(one);
      }
    },
    widget_manager: {
      get_model: () => Promise.reject(new Error("other widgets' models are not available in an MCP App")),
    },
  };
  const experimental = {
    invoke: () => Promise.reject(new Error("experimental.invoke is not available in an MCP App")),
  };

  // ---- the host's context: theme and style variables (also under JupyterLab's names, which widgets use) ----
  const JP_NAMES = {
    "--color-background-primary": ["--jp-layout-color0", "--jp-layout-color1"],
    "--color-background-secondary": ["--jp-layout-color2"],
    "--color-text-primary": ["--jp-ui-font-color0", "--jp-ui-font-color1", "--jp-content-font-color1"],
    "--color-text-secondary": ["--jp-ui-font-color2", "--jp-content-font-color2"],
    "--color-border-primary": ["--jp-border-color1", "--jp-border-color2"],
    "--font-sans": ["--jp-ui-font-family", "--jp-content-font-family"],
    "--font-mono": ["--jp-code-font-family"],
  };
  const applyContext = (context) => {
    if (!context || typeof context !== "object") return;
    const html = document.documentElement;
    if (context.theme === "light" || context.theme === "dark") {
      html.dataset.theme = context.theme;
      html.style.colorScheme = context.theme;
      document.body.dataset.jpThemeLight = String(context.theme === "light");
    }
    const variables = context.styles && context.styles.variables;
    if (variables && typeof variables === "object") {
      for (const [name, value] of Object.entries(variables)) {
        if (typeof value !== "string" || !name.startsWith("--")) continue;
        html.style.setProperty(name, value);
        for (const jp of JP_NAMES[name] || []) html.style.setProperty(jp, value);
      }
    }
  };

  // ---- the widget's module: imported from a blob: URL (unmodified); where the host's policy refuses blob:
  // scripts, run as an inline module, its top-level render/initialize functions taken as the widget
  const inlineModule = () =>
    new Promise((resolve, reject) => {
      const key = `__mcpnbWidget${Math.random().toString(36).slice(2)}`;
      // the module's own error (a syntax error, a throw at its top level) ends the wait at once, as itself
      const failed = (event) => finish(() => reject(event.error || new Error(event.message)));
      const timer = setTimeout(() => finish(() => reject(new Error("the widget's module did not run inline"))), 10000);
      const finish = (then) => {
        clearTimeout(timer);
        removeEventListener("error", failed);
        delete window[key];
        then();
      };
      addEventListener("error", failed);
      window[key] = (found) => finish(() => resolve(found));
      const script = document.createElement("script");
      script.type = "module";
      script.textContent =
        `${config.esm}\n;window[${JSON.stringify(key)}]({ render: typeof render === "function" ? render : undefined,` +
        ` initialize: typeof initialize === "function" ? initialize : undefined });\n`;
      document.head.append(script);
    });
  const loadModule = async () => {
    const url = URL.createObjectURL(new Blob([config.esm], { type: "text/javascript" }));
    try {
      return await import(url);
    } catch (error) {
      // only a refused blob: URL (the host's policy) runs the module again inline; the module's own error
      // (a syntax error, a throw at its top level) is the widget's failure, and its code ran once
      const text = String((error && error.message) || error);
      const refused = error instanceof TypeError && (text.includes(url) || /importing a module script failed/i.test(text));
      if (!refused) throw error;
      log("info", `blob: module refused (${error}); running the widget's module inline`);
      return inlineModule();
    } finally {
      URL.revokeObjectURL(url);
    }
  };
  const resolveWidget = async (module) => {
    let widget = module && "default" in module ? module.default : module;
    if (typeof widget === "function") widget = await widget();
    if (!widget || (typeof widget.render !== "function" && typeof widget.initialize !== "function")) {
      widget = { render: module && module.render, initialize: module && module.initialize }; // legacy named exports
    }
    return widget;
  };

  const cleanups = [];
  const keep = (cleanup) => {
    if (typeof cleanup === "function") cleanups.push(cleanup);
  };
  const start = async () => {
    if (config.css) {
      const style = document.createElement("style");
      style.textContent = config.css;
      document.head.append(style);
    }
    const widget = await resolveWidget(await loadModule());
    if (typeof widget.initialize === "function") keep(await widget.initialize({ model, experimental }));
    if (typeof widget.render === "function") keep(await widget.render({ model, el: root, experimental }));
    root.dataset.rendered = "true";
  };
  const rendered = start().catch((error) => {
    root.textContent = `The widget failed to render: ${error && error.message ? error.message : error}`;
    root.style.color = "#b00020";
    log("error", `render: ${error}`);
  });

  // ---- what the host sends ---------------------------------------------------------------------------------
  handlers["ui/notifications/tool-result"] = (params) => applyResult(params);
  handlers["ui/notifications/tool-input"] = (params) => applyInput(params);
  handlers["ui/notifications/tool-input-partial"] = () => {};
  handlers["ui/notifications/tool-cancelled"] = () => {};
  handlers["ui/notifications/host-context-changed"] = (params) => applyContext(params);
  handlers.ping = (_params, message) => post({ id: message.id, result: {} });
  handlers["ui/resource-teardown"] = async (_params, message) => {
    await rendered;
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error(error);
      }
    }
    post({ id: message.id, result: {} });
  };

  // ---- size: the page's height, as it changes -----------------------------------------------------------------
  let lastSize = "";
  const sizeWatch = new ResizeObserver(() => {
    const box = document.body.getBoundingClientRect();
    const size = { width: Math.ceil(box.width), height: Math.ceil(box.height) };
    if (JSON.stringify(size) === lastSize) return;
    lastSize = JSON.stringify(size);
    notify("ui/notifications/size-changed", size);
  });

  request("ui/initialize", {
    protocolVersion: PROTOCOL,
    appInfo: { name: config.name, version: config.version || "1" },
    appCapabilities: {},
  })
    .then((answer) => {
      applyContext(answer && answer.hostContext);
      notify("ui/notifications/initialized", {});
      sizeWatch.observe(document.body);
    })
    .catch(failed("ui/initialize"));
})();
