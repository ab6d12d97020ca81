#!/bin/sh
# `make install` into a temporary DESTDIR, then builds tests/install/hello.c
# against the installed tree with pkg-config and with CMake's
# find_package(Ember), runs both, and checks `make uninstall` removes it all.
# Prints "N passed, N failed". Run from the repository root after `make`.
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
no() { fail=$((fail + 1)); echo "FAILED: $1"; [ -f "$log" ] && tail -n 20 "$log"; }
check() { # description, command...
    d=$1; shift
    if "$@" >"$log" 2>&1; then ok "$d"; else no "$d"; fi
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
dest=$tmp/stage
prefix=/usr/local
root=$dest$prefix
unset MAKEFLAGS MFLAGS MAKELEVEL

check "make install DESTDIR=$dest" make --no-print-directory install DESTDIR="$dest" PREFIX=$prefix
check "headers installed (ember.h, dtypes.def, ops/*.def)" \
    test -f "$root/include/ember/ember.h" -a -f "$root/include/ember/dtypes.def" -a -f "$root/include/ember/ops/unary.def"
check "libember.a installed" test -f "$root/lib/libember.a"
check "LICENSE installed (share/licenses/ember)" cmp LICENSE "$root/share/licenses/ember/LICENSE"
check "libember.so -> libember.so.0 -> libember.so.0.1.0" \
    sh -c "[ \"\$(readlink '$root/lib/libember.so')\" = libember.so.0 ] && [ \"\$(readlink '$root/lib/libember.so.0')\" = libember.so.0.1.0 ] && [ -f '$root/lib/libember.so.0.1.0' ]"
check "soname is libember.so.0" sh -c "objdump -p '$root/lib/libember.so.0.1.0' | grep -q 'SONAME *libember.so.0\$'"

# pkg-config: the .pc names /usr/local; PKG_CONFIG_SYSROOT_DIR maps it into the staging tree.
export PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
check "pkg-config finds ember 0.1.0" pkg-config --exact-version=0.1.0 ember
check "the .pc carries the licence (BSD-3-Clause)" sh -c '[ "$(pkg-config --variable=license ember)" = BSD-3-Clause ]'
check "Libs.private names openblas, zlib, jansson, OpenMP" \
    sh -c 'l=$(pkg-config --static --libs ember); for f in -lopenblas -lz -ljansson -fopenmp; do echo "$l" | grep -q -- "$f" || exit 1; done'
check "cc hello.c \$(pkg-config --cflags --libs ember)" \
    sh -c "cc -o '$tmp/hello_pc' tests/install/hello.c \$(pkg-config --cflags --libs ember)"
check "run the pkg-config build (shared library)" env LD_LIBRARY_PATH="$root/lib" "$tmp/hello_pc"
check "docs/c_api.md's worked example: cc examples/train_classifier.c \$(pkg-config --cflags --libs ember) -lm" \
    sh -c "cc -o '$tmp/train_classifier' examples/train_classifier.c \$(pkg-config --cflags --libs ember) -lm"
check "run it" env LD_LIBRARY_PATH="$root/lib" "$tmp/train_classifier"
check "static link: libember.a + \$(pkg-config --static --libs ember)" \
    sh -c "cc -o '$tmp/hello_static' tests/install/hello.c \$(pkg-config --cflags ember) '$root/lib/libember.a' \$(pkg-config --static --libs ember | sed 's/ -lember / /')"
check "the static build does not need libember.so" sh -c "! readelf -d '$tmp/hello_static' | grep -q libember"
check "run the static build" "$tmp/hello_static"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# CMake: find_package(Ember 0.1) through CMAKE_PREFIX_PATH, target Ember::ember.
check "cmake configure (find_package(Ember 0.1))" \
    cmake -S tests/install -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_BUILD_TYPE=Release
check "cmake --build" cmake --build "$tmp/cmake"
check "run the CMake build" env LD_LIBRARY_PATH="$root/lib" "$tmp/cmake/hello"
check "the CMake package sets Ember_LICENSE" grep -q 'Ember_LICENSE "BSD-3-Clause"' "$root/lib/cmake/Ember/EmberConfig.cmake"
sed 's/find_package(Ember 0.1/find_package(Ember 1.0/' tests/install/CMakeLists.txt > "$tmp/CMakeLists.txt"
cp tests/install/hello.c "$tmp/"
check "find_package(Ember 1.0) is refused (version file)" \
    sh -c "! cmake -S '$tmp' -B '$tmp/cmake1' -DCMAKE_PREFIX_PATH='$root'"

check "make uninstall DESTDIR=$dest" make --no-print-directory uninstall DESTDIR="$dest" PREFIX=$prefix
check "uninstall left no files" sh -c "[ -z \"\$(find '$dest' -type f -o -type l)\" ]"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
