#!/usr/bin/env bash
# The documentation site (MkDocs, warnings as errors): README as the home page, docs/, CHANGELOG.md and the
# workshop notebooks, the executed copies when the test suite kept them ($MCP_NOTEBOOK_EXECUTED_DIR,
# set by scripts/test), else the committed ones. Output: build/site. Usage: bash scripts/build-docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=build/docs-src
rm -rf "$src" build/site
mkdir -p "$src/docs" "$src/notebooks"
cp README.md "$src/index.md"
cp docs/*.md "$src/docs/"
cp -r docs/gallery "$src/docs/"  # the screenshots docs/gallery.md shows
cp -r docs/img "$src/docs/"  # the flame graphs docs/benchmarks.md links (bench/flame.py)
cp CHANGELOG.md "$src/changelog.md"
executed=${MCP_NOTEBOOK_EXECUTED_DIR:-build/executed}
for notebook in notebooks/*.ipynb; do
  name=$(basename "$notebook")
  if [ -f "$executed/$name" ]; then cp "$executed/$name" "$src/notebooks/$name"; else cp "$notebook" "$src/notebooks/$name"; fi
done
.venv/bin/mkdocs build --strict --quiet
echo "docs: build/site ($(find build/site -name '*.html' | wc -l) pages)"
