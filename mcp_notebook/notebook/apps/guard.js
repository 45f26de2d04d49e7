// The origin guard of an app that asked for its own domain (_meta.ui.domain): where the kernel's loopback
// proxy for it is, and the guard document that frames it (joined before host.js into the widget's one ES
// module by host.py; used by host.js's makeFrame).
// An app with _meta.ui.domain gets the kernel's loopback proxy origin (apps/origin.py) when JupyterLab is
// itself on loopback; on the other loopback name, so that JupyterLab's cookies are not the view's.
const LOOPBACK = { "127.0.0.1": "localhost", localhost: "127.0.0.1" };
function proxyOrigin(address) {
  const other = LOOPBACK[location.hostname];
  const [port, token] = String(address || "").split("/");
  if (!other || !/^\d+$/.test(port || "") || !token) return null;
  return { origin: `http://${other}:${port}`, path: `/${token}/proxy` };
}
function guardDocument(origin, allow) {
  const src = JSON.stringify(origin.src);
  const at = JSON.stringify(origin.origin);
  const permissions = JSON.stringify(allow || "");
  return `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src ${origin.origin}; connect-src 'none'; form-action 'none'"><style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{border:0;width:100%;height:100%;display:block;background:transparent}</style></head><body><script>
(() => {
  const proxy = document.createElement("iframe");
  proxy.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  if (${permissions}) proxy.setAttribute("allow", ${permissions});
  proxy.src = ${src};
  let entered = 0; // as in apps/proxy.html: this document is the frame the host focuses
  const TAB_BACK = "ui/notifications/sandbox-tab-back";
  const ESCAPE = "ui/notifications/sandbox-escape";
  addEventListener("message", (event) => {
    const m = event.data;
    const told = event.source === parent && m && m.method === "ui/notifications/sandbox-entered";
    if (told) entered = m.params && m.params.forward ? 1 : -1;
    else if (event.source === parent) proxy.contentWindow && proxy.contentWindow.postMessage(m, ${at});
    else if (event.source === proxy.contentWindow && event.origin === ${at}) {
      // the guard's own words, never relayed: a view on its own origin can run code in its proxy
      if (!(m && (m.method === TAB_BACK || m.method === ESCAPE))) parent.postMessage(m, "*");
    }
  });
  addEventListener("blur", () => { entered = 0; });
  addEventListener("keydown", (event) => {
    if (event.key === "Escape") return parent.postMessage({ jsonrpc: "2.0", method: ESCAPE, params: {} }, "*");
    if (event.key !== "Tab" || !entered || event.shiftKey !== entered > 0) return;
    event.preventDefault();
    const params = { forward: !event.shiftKey };
    parent.postMessage({ jsonrpc: "2.0", method: TAB_BACK, params }, "*");
  });
  document.body.append(proxy);
})();
<\/script></body></html>`;
}
