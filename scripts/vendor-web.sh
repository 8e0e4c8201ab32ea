#!/usr/bin/env bash
# Rebuild the third-party files the web pages ship (reasoner/server/static/vendor/) from npm.
# Run by hand when upgrading; nothing here runs at install or run time. Needs node and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
YASGUI=@zazuko/yasgui@4.6.2
ATLAS=us-atlas@3.0.1
TOPOJSON=topojson-client@3.1.0
VENDOR=reasoner/server/static/vendor
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts \
  "$YASGUI" "$ATLAS" "$TOPOJSON" >/dev/null)
cp "$WORK/node_modules/@zazuko/yasgui/build/yasgui.min.js" \
  "$WORK/node_modules/@zazuko/yasgui/build/yasgui.min.css" "$VENDOR/"
sed -i '/^\/\/# sourceMappingURL=/d' "$VENDOR/yasgui.min.js"  # the map is not shipped
# The states of us-atlas (TopoJSON, from the US Census Bureau's cartographic boundaries at
# 1:10,000,000) as GeoJSON, coordinates rounded to 0.001 degrees (about 100 m).
NODE_PATH="$WORK/node_modules" node -e '
const {feature} = require("topojson-client");
const topo = require("us-atlas/states-10m.json");
const round = (c) => Array.isArray(c[0]) ? c.map(round) : [+c[0].toFixed(3), +c[1].toFixed(3)];
const states = feature(topo, topo.objects.states);
for (const f of states.features) {
  f.geometry.coordinates = round(f.geometry.coordinates);
  delete f.id;
}
process.stdout.write(JSON.stringify(states));
' > "$VENDOR/us-states.geojson"
ls -l "$VENDOR"
