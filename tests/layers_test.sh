#!/usr/bin/env bash
# Fails when a source includes a header of a higher layer. The layer order is written once, in
# docs/ARCHITECTURE.md ("Layers, lowest first: ..."). Unit tests (*_test.cc) are exempt: they link
# every layer and may use a higher one to set up their case. Usage: layers_test.sh SOURCE_DIR
set -euo pipefail
root=$(realpath "${1:-.}")
order=$(sed -n 's/^Layers, lowest first: //p' "$root/docs/ARCHITECTURE.md")
[ -n "$order" ] || { echo "no 'Layers, lowest first:' line in docs/ARCHITECTURE.md"; exit 1; }
declare -A rank
i=0
for layer in $order; do rank[$layer]=$i; i=$((i + 1)); done
bad=0
for dir in "$root"/src/*/; do
  layer=$(basename "$dir")
  if [ -z "${rank[$layer]+x}" ]; then
    echo "src/$layer/ is not a layer of docs/ARCHITECTURE.md"; bad=1; continue
  fi
  while IFS=: read -r file line text; do
    [[ $file == *_test.cc ]] && continue
    inc=$(sed -E 's/^#include "([^/"]+)\/.*/\1/' <<<"$text")
    [ -n "${rank[$inc]+x}" ] || continue
    if [ "${rank[$inc]}" -gt "${rank[$layer]}" ]; then
      echo "${file#"$root"/}:$line: layer $layer includes $inc, a higher layer: $text"
      bad=1
    fi
  done < <(grep -Hn '^#include "[a-z_]*/' "$dir"*.h "$dir"*.cc 2>/dev/null)
done
[ "$bad" = 0 ] && echo "every include goes down the layers: $order"
exit "$bad"
