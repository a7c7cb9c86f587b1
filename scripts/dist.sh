#!/usr/bin/env bash
# Builds the release a self-hoster downloads: dist-release/chat-<version>-linux-x64.tar.gz.
#
#   chat-<version>-linux-x64/
#     bin/chat              the launcher (scripts/release/chat)
#     runtime/bin/node      the official Node.js binary (scripts/node-runtime.sh)
#     app/                  the built server (dist/), static/, schema.sql, package.json and the
#                           production dependencies, their native parts prebuilt for linux-x64
#     README.md LICENSE-node deploy/
#
# Run by `make dist` after `make build`; the release test (test/release.test.ts) unpacks it.
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=${1:?usage: scripts/dist.sh NODE_VERSION}
runtime=$(scripts/node-runtime.sh "$node_version")
version=$(node -p 'require("./package.json").version')
name=chat-$version-linux-x64
out=dist-release
stage=$out/$name
rm -rf "$stage" "$out/$name.tar.gz"
mkdir -p "$stage/bin" "$stage/runtime/bin" "$stage/app"

cp scripts/release/chat "$stage/bin/chat"
cp "$runtime/bin/node" "$stage/runtime/bin/node"
cp "$runtime/LICENSE" "$stage/LICENSE-node"
cp -r dist static schema.sql package.json package-lock.json "$stage/app/"
# The server answers GET /api/openapi.json from this file.
mkdir -p "$stage/app/docs" && cp docs/openapi.json "$stage/app/docs/"
cp -r deploy README.md "$stage/"

# Production dependencies only, from the lock file; no install scripts run (none is needed: every
# native module ships its binary in its package). --prefer-offline takes them from the cache the
# checkout's own install filled.
(cd "$stage/app" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
rm "$stage/app/package-lock.json"
# The binaries of other systems, and the C sources they were built from: this release is linux-x64
# with glibc.
modules=$stage/app/node_modules
find "$modules/better-sqlite3/prebuilds" -type f ! -name 'linux-x64.node' -delete
rm -rf "$modules/better-sqlite3/deps" "$modules/better-sqlite3/src"
find "$modules/argon2/prebuilds" -mindepth 1 -maxdepth 1 -type d ! -name 'linux-x64' -exec rm -rf {} +
find "$modules/argon2/prebuilds/linux-x64" -type f ! -name '*.glibc.node' -delete
rm -rf "$modules/argon2/argon2"
# Emoji data: the server reads the English set and three shortcode lists (src/core/emoji.ts), the
# picker the English compact set; the other 28 languages are 48 MiB.
find "$modules/emojibase-data" -mindepth 1 -maxdepth 1 -type d ! -name en -exec rm -rf {} +
find "$modules/emojibase-data/en" -type f ! -name compact.json ! -path '*/shortcodes/github.json' ! -path '*/shortcodes/iamcal.json' ! -path '*/shortcodes/emojibase.json' -delete
find "$modules" -name '*.md' -type f -delete
find "$modules" \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) -type f -delete

tar -czf "$out/$name.tar.gz" -C "$out" "$name"
size=$(stat -c %s "$out/$name.tar.gz")
echo "release: $out/$name.tar.gz, $((size / 1024 / 1024)) MiB ($(du -sm "$stage" | cut -f1) MiB unpacked)"
