"""The small stdio server that notebook and kernel tests start as a subprocess (``%mcp connect demo --
python SCRIPT`` or ``mcp.connect("demo", [python, SCRIPT])``): "stdio-demo" with one tool, ``hello``.

```python
script = stdio_demo(tmp_path)  # tmp_path / "stdio_demo.py", written afresh
```
The script imports ``mcp_notebook``: the child needs it importable (installed, or ``PYTHONPATH``).
"""

from __future__ import annotations

from pathlib import Path

STDIO_SERVER = '''\
from mcp_notebook import Server
server = Server("stdio-demo")


@server.tool
def hello(name: str) -> str:
    """Say hello."""
    return f"hello {name}"


server.run_stdio()
'''


def stdio_demo(directory: Path) -> Path:
    """Write the server's script into ``directory``; its path."""
    script = directory / "stdio_demo.py"
    script.write_text(STDIO_SERVER)
    return script
