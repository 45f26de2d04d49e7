// What the host tells the kernel after the notebook's tab is closed (host.py joins this file, layer.js and
// host.js into one ES module). Closing the tab disposes the panel, its document context and the kernel
// connection the widget's comm lived on; the kernel itself keeps running, and the app, still in the layer,
// answers ui/resource-teardown after that. Its last messages (the answer, what the app logged meanwhile)
// then go as the comm's own messages would (comm_msg, method "custom", on the widget's comm id) over a
// connection of our own to the same kernel (the old connection's clone, which takes no comms), closed once
// the view is done.

// the widget manager's kernel connection, or null (JupyterLab and Notebook 7 expose it; another front end
// may not)
function kernelOf(model) {
  try {
    const kernel = model.widget_manager && model.widget_manager.kernel;
    return kernel && typeof kernel.clone === "function" ? kernel : null;
  } catch {
    return null;
  }
}

// whether the widget's comm is known to be gone with its manager or with `kernel`, the connection it was
// on (the notebook's tab closed); a front end that says neither keeps the comm
function commGone(model, kernel) {
  const manager = model.widget_manager;
  return Boolean((manager && manager.isDisposed === true) || (kernel && kernel.isDisposed === true));
}

let messagesSent = 0;

// A courier for one view: send(content) as the widget's own custom message; close() ends its connection
// (once what was sent has been handled, or at once if nothing is in flight).
function courier(kernel, commId) {
  let line = null;
  let inFlight = Promise.resolve();
  return {
    send(content) {
      if (!kernel || !commId) return false;
      if (!line) line = kernel.clone({ handleComms: false });
      const msg = {
        header: {
          msg_id: `mcpnb-${Date.now().toString(36)}-${++messagesSent}`,
          msg_type: "comm_msg",
          username: line.username || "",
          session: line.clientId,
          date: new Date().toISOString(),
          version: "5.3",
        },
        parent_header: {},
        metadata: {},
        content: { comm_id: commId, data: { method: "custom", content } },
        channel: "shell",
        buffers: [],
      };
      const future = line.sendShellMessage(msg, false, true);
      inFlight = inFlight.then(() => future.done).catch(() => undefined);
      return true;
    },
    close(ms) {
      if (!line) return;
      const done = line;
      line = null;
      const bound = new Promise((resolve) => setTimeout(resolve, ms));
      Promise.race([inFlight, bound]).finally(() => done.dispose());
    },
  };
}
