"""``%mcp connect --auth`` in a real ipykernel (jupyter_client over ZMQ): the cell returns at once with the
card, the sign-in completes through the kernel's loopback listener while the kernel is idle, the first call
succeeds, and nothing a notebook would save (outputs, widget state, streams) contains the access token,
the refresh token, the authorization code or the PKCE verifier."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from tests.auth._servers import running
from tests.kernel.test_kernel import kernel_factory, outputs, texts

__all__ = ["kernel_factory"]  # the fixture, used below

WAIT = 30


def test_kernel_sign_in_and_nothing_saved_leaks(kernel_factory: Any, tmp_path: Path) -> None:
    secrets_file = tmp_path / "secrets.json"
    with running() as servers:
        k = kernel_factory(JUPYTER_DATA_DIR=str(tmp_path / "jupyter"))
        seen: list[dict[str, Any]] = []
        seen += k.run("%load_ext mcp_notebook\nmcp.policy.set('prot.*', 'allow')")
        connect = k.run(f"card = %mcp connect prot {servers.mcp_url} --auth\ncard")
        seen += connect
        [shown] = outputs(connect, "execute_result")
        assert "application/vnd.jupyter.widget-view+json" in shown["data"]
        assert "Sign in to prot" in shown["data"]["text/plain"]
        # the person's browser: the card's link (read from the kernel), followed to the loopback listener
        link = k.run(
            "import asyncio\n"
            f"for _ in range({WAIT * 20}):\n"
            "    if card.oauth.pending is not None:\n"
            "        break\n"
            "    await asyncio.sleep(0.05)\n"
            "print('LINK', card.oauth.pending.url)"
        )
        url = texts(link).split("LINK ", 1)[1].split()[0]
        with urllib.request.urlopen(url, timeout=WAIT) as resp:
            assert b"close this tab" in resp.read()
        seen += k.run(f"card.wait({WAIT})\nprint(card.state, card.subject)")
        assert "connected alice@example.org" in texts(seen)
        call = k.run("r = %mcp call prot.add a=2 b=3\nr.wait(30)")
        seen += call
        assert "5" in texts(call)
        seen += k.run("%mcp trace prot")
        seen += k.run("%mcp history")
        seen += k.run("%mcp servers")
        # the test reads the secrets through a file, so no cell output carries them
        k.run(
            "import json\n"
            f"store = card.oauth.store.get('token:{servers.mcp_url}')\n"
            f"json.dump(store, open({str(secrets_file)!r}, 'w'))"
        )
    stored = json.loads(secrets_file.read_text())
    code_request = next(r for r in servers.auth.requests if r["grant_type"] == "authorization_code")
    secrets_ = [
        stored["access_token"],
        stored["refresh_token"],
        code_request["code"],
        code_request["code_verifier"],
    ]
    saved = json.dumps([m["content"] for m in seen], default=str)
    assert "authorized as" in saved
    for secret in secrets_:
        assert secret and secret not in saved
