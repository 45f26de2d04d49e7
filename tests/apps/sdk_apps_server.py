"""A third-party MCP Apps server for the host tests: the official Python SDK's ``mcp.server.apps.Apps``
extension, serving a view built on the official ``@modelcontextprotocol/ext-apps`` ``App`` class (the npm
package, installed by ``scripts/install-peers.sh`` into ``.peers/apps``), over stdio.

The view shows what the host told it (tool input, result, theme, locale, container width), and has buttons
that call the app-only tool ``increment`` through the bridge, grow the page (size-changed), send a
``ui/message``, update the model context, ask to open a link, ask for fullscreen (ui/request-display-mode)
and ask to save a file (ui/download-file); it registers a tool of its own (``reset``) for the host to
call, and asks for sampling.

Run: ``python tests/apps/sdk_apps_server.py PATH_TO/app-with-deps.js``
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver import MCPServer

URI = "ui://counter/app.html"

VIEW = """<!doctype html>
<html><head><meta charset="utf-8"><title>counter</title>
<style>body{font-family:sans-serif;margin:8px} .dark{background:#222;color:#eee}</style></head>
<body>
<div id="status">connecting</div>
<div id="input"></div><div id="result"></div><div id="theme"></div><div id="context"></div>
<div id="called"></div><div id="said"></div><div id="link"></div><div id="teardown"></div>
<button id="increment">increment</button> <button id="grow">grow</button>
<button id="say">say</button> <button id="open">open link</button>
<button id="fullscreen">fullscreen</button> <button id="download">download</button>
<div id="mode"></div><div id="ctxmode"></div><div id="downloaded"></div><div id="reset"></div>
<button id="sample">sample</button><div id="sampled"></div>
<div id="tall"></div>
<script type="module">
__BUNDLE__
</script>
<script type="module">
const { App } = globalThis.ExtApps;
const $ = (id) => document.getElementById(id);
const app = new App({ name: "counter-view", version: "1.0.0" }, { tools: { listChanged: true } },
  { autoResize: true });
app.registerTool("reset", { description: "Reset the counter shown" }, async () => {
  $("reset").textContent = "reset by the notebook";
  return { content: [{ type: "text", text: "view reset" }] };
});
const showTheme = (ctx) => {
  if (ctx && ctx.theme) {
    $("theme").textContent = "theme: " + ctx.theme;
    document.body.classList.toggle("dark", ctx.theme === "dark");
  }
};
app.ontoolinput = (p) => { $("input").textContent = "input: " + JSON.stringify(p.arguments); };
app.ontoolresult = (r) => {
  $("result").textContent = "result: " + r.content.map((b) => b.text).join(" ")
    + " / structured " + JSON.stringify(r.structuredContent);
};
app.onhostcontextchanged = (ctx) => {
  showTheme(ctx);
  if (ctx.displayMode) {
    const box = ctx.containerDimensions || {};
    const size = box.width + "x" + (box.height || box.maxHeight);
    $("ctxmode").textContent = "ctx: " + ctx.displayMode + " " + size;
  }
};
$("fullscreen").onclick = async () => {
  const r = await app.requestDisplayMode({ mode: "fullscreen" });
  $("mode").textContent = "mode: " + r.mode;
};
$("sample").onclick = async () => {
  const r = await app.createSamplingMessage({ maxTokens: 20,
    messages: [{ role: "user", content: { type: "text", text: "name a colour" } }] });
  $("sampled").textContent = "sampled: " + r.content.text;
};
$("download").onclick = async () => {
  const r = await app.downloadFile({ contents: [{ type: "resource",
    resource: { uri: "file:///exports/counter.txt", mimeType: "text/plain", text: "count 3" } }] });
  $("downloaded").textContent = "downloaded: " + JSON.stringify(r);
};
app.onteardown = async () => { $("teardown").textContent = "torn down"; return {}; };
$("increment").onclick = async () => {
  $("called").textContent = "calling";
  try {
    const r = await app.callServerTool({ name: "increment", arguments: { by: 2 } });
    const text = r.content.map((b) => b.text).join(" ");
    $("called").textContent = "called: " + text + (r.isError ? " (isError)" : "");
  } catch (e) { $("called").textContent = "call failed: " + (e.message || e); }
};
$("grow").onclick = () => { $("tall").style.height = "600px"; };
$("say").onclick = async () => {
  await app.updateModelContext({ content: [{ type: "text", text: "count shown: 3" }] });
  const r = await app.sendMessage({ role: "user", content: [{ type: "text", text: "please double it" }] });
  $("said").textContent = "said: " + JSON.stringify(r);
};
$("open").onclick = async () => {
  const r = await app.openLink({ url: "https://modelcontextprotocol.io/" });
  $("link").textContent = "link: " + JSON.stringify(r);
};
await app.connect();
const ctx = app.getHostContext();
showTheme(ctx);
$("context").textContent = "locale: " + ctx.locale + " width: " + (ctx.containerDimensions || {}).width
  + " mode: " + ctx.displayMode + " tool: " + (ctx.toolInfo ? ctx.toolInfo.tool.name : "none")
  + " modes: " + (ctx.availableDisplayModes || []).join(",");
$("status").textContent = "connected to " + app.getHostVersion().name;
</script>
</body></html>
"""


def view_html(bundle_path: Path) -> str:
    bundle = bundle_path.read_text(encoding="utf-8")
    # the bundle is an ES module ending in `export{a as B,...}`: expose those names to the next script,
    # since the view's CSP allows inline scripts only (no blob:/data: imports)
    exports = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", bundle)
    if exports is None:
        raise SystemExit(f"{bundle_path}: no trailing export list")
    pairs = [p.strip().split(" as ") for p in exports.group(1).split(",") if p.strip()]
    names = ",".join(f"{p[-1]}:{p[0]}" for p in pairs)
    bundle = bundle[: exports.start()] + f"globalThis.ExtApps={{{names}}};"
    return VIEW.replace("__BUNDLE__", bundle.replace("</script", "<\\/script"))


def build(bundle_path: Path) -> MCPServer:
    apps = Apps()
    count = {"value": 3}

    @apps.tool(resource_uri=URI, description="Show the counter in an app.")
    def show_counter(label: str = "clicks") -> dict[str, object]:
        return {"label": label, "count": count["value"]}

    @apps.tool(resource_uri=URI, visibility=["app"], description="Add to the counter (from the app only).")
    def increment(by: int = 1) -> str:
        count["value"] += by
        return f"count is {count['value']}"

    apps.add_html_resource(
        URI, view_html(bundle_path), csp=ResourceCsp(connect_domains=[]), prefers_border=True
    )
    return MCPServer("counter-apps", extensions=[apps])


if __name__ == "__main__":
    build(Path(sys.argv[1])).run()
