#!/usr/bin/env bash
# Create .venv and install mcp-notebook with its test tools; then the npm peers used by the interop tests.
# Idempotent and non-interactive (works with CI=true and no stdin). Usage: bash scripts/setup.sh [--no-peers]
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi

# Reinstall only when pyproject.toml changed since the last successful install.
stamp=.venv/.mcp-notebook-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing mcp-notebook and its test dependencies into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  echo "$want" > "$stamp"
fi

if [ "${1:-}" != "--no-peers" ] && [ -f scripts/install-peers.sh ]; then
  bash scripts/install-peers.sh
fi
