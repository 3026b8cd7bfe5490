#!/bin/sh
# check_exports.sh LIB SONAME: LIB's dynamic symbol table defines ddt_* symbols only (the C API
# and the predefined types' data), among them ddt_pack and ddt_predef_DOUBLE, and its SONAME is
# SONAME.
set -eu
lib=$1 soname=$2
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
others=$(echo "$syms" | grep -v '^ddt_' || true)
if [ -n "$others" ]; then
  echo "$lib exports symbols outside ddt_*:"; echo "$others" | head -20; exit 1
fi
for s in ddt_pack ddt_type_commit ddt_error_string ddt_predef_DOUBLE; do
  echo "$syms" | grep -qx "$s" || { echo "$lib does not export $s"; exit 1; }
done
readelf -d "$lib" | grep -q "Library soname: \[$soname\]" || { echo "$lib: SONAME is not $soname"; readelf -d "$lib" | grep SONAME; exit 1; }
echo "$lib: $(echo "$syms" | wc -l) symbols, all ddt_*; SONAME $soname"
