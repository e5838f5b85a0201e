#!/usr/bin/env bash
# Re-fetches the vendored Apache ECharts bundle that reports ship with
# (render/report/assets/echarts.min.js) from the npm registry and checks it
# against the pinned checksum, so the copy in git can be audited and
# reproduced. Reports never load JavaScript from a CDN: they must work
# offline from file://.
#
# The version follows go-echarts: v2.6.7 generates options for ECharts 5.4.3
# (its README badge and docs/en-us/dive-into.md). Change VERSION and SHA256
# together, and update render/report/assets/README.md.
#
# usage: scripts/vendor-echarts.sh          fetch, verify, install into assets/
#        scripts/vendor-echarts.sh --check  fetch, verify, compare with the committed copy
set -euo pipefail

VERSION=5.4.3
SHA256=1156429a16a38cb8604dcc6518c19406d4226142d908f8edd2e3531443c54d19

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/render/report/assets"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "vendor-echarts: npm not found: install Node.js (apt-get install -y npm)" >&2; exit 1; }
(cd "$tmp" && npm pack --silent "echarts@$VERSION" >/dev/null)
tar -xzf "$tmp/echarts-$VERSION.tgz" -C "$tmp" package/dist/echarts.min.js package/LICENSE package/NOTICE

got=$(sha256sum "$tmp/package/dist/echarts.min.js" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
	echo "vendor-echarts: checksum mismatch for echarts@$VERSION dist/echarts.min.js: got $got, want $SHA256" >&2
	echo "  if you meant to change the version, update VERSION and SHA256 here and in $dest/README.md" >&2
	exit 1
fi

if [ "${1:-}" = "--check" ]; then
	cmp -s "$tmp/package/dist/echarts.min.js" "$dest/echarts.min.js" || {
		echo "vendor-echarts: $dest/echarts.min.js differs from echarts@$VERSION: run scripts/vendor-echarts.sh" >&2
		exit 1
	}
	echo "vendor-echarts: $dest/echarts.min.js is echarts@$VERSION ($SHA256)"
	exit 0
fi

cp "$tmp/package/dist/echarts.min.js" "$dest/echarts.min.js"
cp "$tmp/package/LICENSE" "$dest/LICENSE-echarts"
cp "$tmp/package/NOTICE" "$dest/NOTICE-echarts"
echo "vendor-echarts: installed echarts@$VERSION into $dest ($SHA256)"
