#!/usr/bin/env bash
# The package ships like one (issue 23): build the wheel and the sdist, check them with twine, refuse any
# packaging deprecation warning, install the wheel into a clean venv (outside the checkout) and smoke-test
# it: import, %load_ext in an IPython shell, the MCP Apps host's ES module, `mcp-notebook --help`.
# Idempotent, non-interactive. Usage: bash scripts/check-package.sh   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcp-notebook-package.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "package: build wheel and sdist"
.venv/bin/python -m build --outdir "$WORK/dist" . > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
if grep -Ei "deprecat" "$WORK/build.log"; then
  echo "package: the build printed a deprecation warning (above)"; exit 1
fi
.venv/bin/python -m twine check --strict "$WORK"/dist/*

wheel=$(ls "$WORK"/dist/*.whl)
echo "package: install $(basename "$wheel") into a clean venv"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check "$wheel" > "$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log"; exit 1; }

echo "package: smoke test"
cd "$WORK"   # away from the checkout: only the installed wheel can be imported
"$WORK/venv/bin/python" - "$ROOT" <<'PY'
import importlib.resources
import sys
from pathlib import Path

import mcp_notebook

root = Path(sys.argv[1]).resolve()
where = Path(mcp_notebook.__file__).resolve()
assert root not in where.parents, f"imported from the checkout, not the wheel: {where}"
print("import:", mcp_notebook.__version__, "from", where.parent)

from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "mcp_notebook")
assert type(shell.user_ns["mcp"]).__name__ == "NotebookMCP", shell.user_ns.get("mcp")
print("%load_ext mcp_notebook: the mcp object is there")

modules = [p.name for p in importlib.resources.files("mcp_notebook.notebook.apps").iterdir() if p.name.endswith(".js")]
assert modules, "the MCP Apps host's ES module is missing from the wheel"
print("apps ES module:", ", ".join(sorted(modules)))
PY
"$WORK/venv/bin/mcp-notebook" --help > "$WORK/help.txt"
grep -q "replay" "$WORK/help.txt" && grep -q "serve" "$WORK/help.txt"
echo "package: mcp-notebook --help lists its commands; all good"
