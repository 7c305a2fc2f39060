#!/usr/bin/env bash
# What a packager and an embedder get: `meson install` into a staging
# directory, then examples/embed built out of tree against the staged library
# through pkg-config and run; the systemd unit checked by systemd-analyze; the
# man page naming every flag of --help.
# Usage (meson runs it): install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --destdir "$stage" --no-rebuild --quiet
option() {
  meson introspect "$build" --buildoptions | python3 -c \
    'import json,sys; v=next(o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]); print(",".join(v) if isinstance(v,list) else v)' "$1"
}
prefix=$(option prefix)
# A sanitizer build installs an instrumented library: the embedder builds the same way.
sanitize=$(option b_sanitize)
extra=()
[ "$sanitize" = none ] || extra=(-fsanitize="$sanitize")
root="$stage$prefix"
for f in bin/uvsched bin/agent_sim include/uvsched/app/daemon.h include/uvsched/reactor/http_client.h \
         lib/systemd/system/uvsched.service share/man/man8/uvsched.8; do
  [ -e "$root/$f" ] || { echo "not installed: $prefix/$f"; exit 1; }
done
pc=$(find "$root" -name uvsched.pc | head -1)
[ -n "$pc" ] || { echo "no uvsched.pc installed"; exit 1; }
ls "$(dirname "$(dirname "$pc")")"/libuvsched.a >/dev/null

# The embedding example, out of tree, through pkg-config only (the staged
# uvsched.pc's prefix pointed at the staging directory, as if installed there).
mkdir -p "$stage/pc"
sed "s|^prefix=.*|prefix=$root|" "$pc" > "$stage/pc/uvsched.pc"
flags=$(PKG_CONFIG_PATH="$stage/pc" pkg-config --cflags --libs uvsched)
c++ -std=c++20 -O1 "${extra[@]}" "$src/examples/embed/main.cc" $flags -o "$stage/embed"
out=$("$stage/embed" "$stage/data")
echo "$out"
grep -q "GET /healthz: 200" <<<"$out"
grep -q "GET /mine: 200 the host's own route" <<<"$out"

# The unit as installed, under systemd's rules (its ExecStart points at the staged binary).
unit="$root/lib/systemd/system/uvsched.service"
grep -q "^ExecStart=$prefix/bin/uvsched$" "$unit"
if command -v systemd-analyze >/dev/null; then
  sed "s|^ExecStart=$prefix|ExecStart=$root|" "$unit" > "$stage/uvsched.service"
  systemd-analyze verify --man=no "$stage/uvsched.service"
fi

# The man page names every flag.
for flag in $("$root/bin/uvsched" --help | grep -o -- '--[a-z-]*' | sort -u); do
  grep -q -- "$(sed 's/-/\\\\-/g' <<<"$flag")" "$root/share/man/man8/uvsched.8" || { echo "uvsched.8 lacks $flag"; exit 1; }
done
echo "install: ok"
