#!/bin/sh
# `ddtkit inspect --write-layout` then `--layout`: the file read back gives the same size,
# bounds, block count and hash; and the notation printed for it (a layout has no constructor
# history: it is written as its blocks) parses to the same hash again.
# usage: layout_roundtrip.sh DDTKIT WORKDIR
ddtkit=$1
work=$2
mkdir -p "$work" || exit 1
type='resized(hvector(3, 2, -24, struct([1, 1], [0, 6], [int, short])), -8, 100)'
"$ddtkit" inspect "$type" --write-layout "$work/t.layout" > "$work/a.txt" || exit 1
test -s "$work/t.layout" || { echo "no layout file written"; exit 1; }
"$ddtkit" inspect --layout "$work/t.layout" > "$work/b.txt" || exit 1
for key in 'size:' 'lb, extent:' 'true lb, extent:' 'blocks:' 'hash:'; do
  a=$(grep "^$key" "$work/a.txt")
  b=$(grep "^$key" "$work/b.txt")
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "differs: '$a' / '$b'"; exit 1; }
done
notation=$(sed -n 's/^notation: *//p' "$work/b.txt")
echo "layout written as: $notation"
"$ddtkit" inspect "$notation" > "$work/c.txt" || exit 1
for key in 'size:' 'lb, extent:' 'hash:'; do
  a=$(grep "^$key" "$work/a.txt")
  c=$(grep "^$key" "$work/c.txt")
  [ "$a" = "$c" ] || { echo "notation of the layout differs: '$a' / '$c'"; exit 1; }
done
echo "ok"
