#!/usr/bin/env bash
# The Debian package as a jump host gets it: built by CPack (what `make deb` runs), its control
# fields (Depends: the runtime libraries the binary links; Recommends: the optional tools), then
# unpacked into a scratch root (dpkg -x) and used from another folder with the checkout out of
# sight: `plan` and `report` on an installed example, the manual pages (one per subcommand) and
# the bash completion as bash-completion loads it; `cmake --install --prefix` (make install)
# installs the same files. Removes everything it made.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for tool in cpack dpkg-deb; do
  command -v "$tool" >/dev/null || fail "missing $tool (make deps installs cmake and dpkg-dev)"
done

# The package, into a folder of its own (make deb writes build/gpufabric_*.deb the same way).
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack"; }
debs=("$tmp"/pkg/gpufabric_*.deb)
[ -f "${debs[0]}" ] || fail "no gpufabric_*.deb in $tmp/pkg"
deb=${debs[0]}
echo "package: $(basename "$deb")"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = gpufabric ] || fail "Package: $(field Package)"
version=$("$build/gpufabric" --version | sed -n 's/^gpufabric \([^ ]*\) .*/\1/p')
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), the binary says $version"
depends=$(field Depends)
for lib in libc6 libstdc++6 libyaml-cpp libfmt libcpp-httplib; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
if ldd "$build/gpufabric" | grep -q libmpi; then
  [[ $depends == *libopenmpi* ]] || fail "the binary links Open MPI, Depends lacks it: $depends"
fi
recommends=$(field Recommends)
for tool in frr iperf3 chromium prometheus; do
  [[ $recommends == *"$tool"* ]] || fail "Recommends lacks $tool: $recommends"
  [[ $depends != *"$tool"* ]] || fail "$tool is a Depends, not a Recommends: $depends"
done

# Unpacked into a scratch root.
root=$tmp/root
dpkg-deb -x "$deb" "$root"
gf=$root/usr/bin/gpufabric
[ -x "$gf" ] || fail "no usr/bin/gpufabric"
for f in usr/share/bash-completion/completions/gpufabric usr/share/man/man1/gpufabric.1.gz \
         usr/share/gpufabric/examples/seed-70b-1024.yaml usr/share/gpufabric/examples/roce-lab-16.yaml \
         usr/share/gpufabric/catalog/nics.yaml usr/share/gpufabric/calibration/nccl-public.csv \
         usr/share/doc/gpufabric/README.md; do
  [ -f "$root/$f" ] || fail "no $f in the package"
done
# Nothing of the build: no tests, benchmarks, static libraries or headers.
extra=$(dpkg-deb -c "$deb" | grep -E 'gpufabric_tests|gpufabric_bench|\.a$|\.h$|/include/' || true)
[ -z "$extra" ] || fail "build files in the package: $extra"

# make install PREFIX=... (cmake --install) puts the same files under PREFIX.
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
diff <(cd "$tmp/prefix" && find . -type f | sort) <(cd "$root/usr" && find . -type f | sort) ||
  fail "make install and the package install different files"

# A manual page per subcommand, each made from that command's --help.
subcommands=$("$gf" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
for cmd in $subcommands; do
  page=$root/usr/share/man/man1/gpufabric-$cmd.1.gz
  [ -f "$page" ] || fail "no manual page gpufabric-$cmd(1)"
  title=$(echo "gpufabric-$cmd" | tr 'a-z' 'A-Z')
  # grep reads a process substitution, not a pipe: grep -q stops at its match, and a writer still
  # writing into a closed pipe would fail the test under pipefail (SIGPIPE) once a page outgrows
  # one pipe buffer.
  grep -q "^\.TH \"\?$title\"\? \"\?1" <(zcat "$page") || fail "gpufabric-$cmd.1: no .TH $title 1"
  grep -q 'help2man' <(zcat "$page") || fail "gpufabric-$cmd.1 was not made by help2man"
done
grep -q 'load\\-balancing' <(zcat "$root/usr/share/man/man1/gpufabric-simulate.1.gz") ||
  fail "gpufabric-simulate(1) does not describe --load-balancing"
pages=$(find "$root/usr/share/man/man1" -name '*.1.gz' | wc -l)
[ "$pages" -eq $(($(wc -w <<<"$subcommands") + 1)) ] || fail "$pages manual pages for $(wc -w <<<"$subcommands") subcommands"
if command -v man >/dev/null; then
  grep -q 'cabling' <(MANPATH=$root/usr/share/man man gpufabric-plan 2>/dev/null) ||
    fail "man gpufabric-plan does not show the page"
fi

# Run from another folder, with the checkout (and its build) hidden where possible: the binary
# must need nothing of them (the catalog and the charting libraries are compiled in).
mkdir -p "$tmp/elsewhere"
cat >"$tmp/run.sh" <<EOF
set -euo pipefail
cd "$tmp/elsewhere"
"$gf" --version
"$gf" plan "$root/usr/share/gpufabric/examples/seed-70b-1024.yaml" -o plan >plan.txt
"$gf" report "$root/usr/share/gpufabric/examples/roce-lab-16.yaml" -o report >report.txt
EOF
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  # A private mount namespace in which the checkout is an empty folder.
  unshare -m bash -c "mount -t tmpfs none '$src' && [ -z \"\$(ls -A '$src')\" ] && bash '$tmp/run.sh'" \
    >"$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "the installed binary, checkout hidden"; }
  echo "ran with $src hidden"
else
  bash "$tmp/run.sh" >"$tmp/run.out" 2>&1 || { cat "$tmp/run.out"; fail "the installed binary"; }
fi
grep -q "^gpufabric $version (revision " "$tmp/run.out" || fail "--version: $(head -1 "$tmp/run.out")"
grep -q "InfiniBand" "$tmp/elsewhere/plan.txt" || fail "plan: $(cat "$tmp/elsewhere/plan.txt")"
recorded=$(sed -n 's/^ *"gpufabric_version": "\(.*\)",\{0,1\}$/\1/p' "$tmp/elsewhere/plan/plan.json")
[ "gpufabric $recorded" = "$(head -1 "$tmp/run.out")" ] || fail "plan.json records '$recorded'"
html=$tmp/elsewhere/report/report.html
[ "$(stat -c %s "$html")" -gt 500000 ] && grep -q "vegaEmbed" "$html" ||
  fail "report.html lacks the inlined charting libraries"
grep -qF "Made by gpufabric $recorded" "$html" || fail "report.html lacks the version"

# The completion as bash-completion finds it (by the command's name, under XDG_DATA_DIRS).
loader=/usr/share/bash-completion/bash_completion
[ -f "$loader" ] || fail "missing $loader (make deps installs bash-completion)"
got=$(XDG_DATA_DIRS=$root/usr/share bash -c "
  source '$loader'
  __load_completion gpufabric || exit 1
  complete -p gpufabric
  COMP_WORDS=(gpufabric simulate x.yaml --op al) COMP_CWORD=4 COMPREPLY=()
  _gpufabric
  echo \"\${COMPREPLY[*]}\"" 2>&1) || fail "bash-completion does not load the package's completion: $got"
[[ $got == *"complete -F _gpufabric gpufabric"* && $got == *all_reduce* ]] || fail "completion: $got"

echo "the package installs a working gpufabric: $pages manual pages, bash completion, examples"
