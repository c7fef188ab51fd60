#!/usr/bin/env bash
# Install the Autobahn WebSocket test suite (wstest, autobahntestsuite 0.8.2, Python 2.7) into a private
# cache and print the path of a working `wstest` launcher on stdout (progress goes to stderr).
#
#   WSTEST=$(scripts/autobahn/install.sh) && "$WSTEST" --help
#
# Idempotent: a second run with everything in place only checks the stamp and prints the path (~0.1 s).
# Offline-safe once it has run: every download (.deb files, wheels, sdists) is kept in the cache and a
# reinstall (e.g. after deleting site/ or py27/) uses only the cache.
#
# How (see docs/autobahn.md):
#   1. CPython 2.7.18 from Debian 11 (bullseye) packages, fetched by `apt-get download` with a private apt
#      configuration (APT_CONFIG: own sources list, state, cache; no system apt.conf.d) pointing at the
#      mirror the machine's apt uses, unpacked with `dpkg -x` into $AB/py27 (system apt/dpkg untouched).
#   2. pip 20.3.4 (+ setuptools 44.1.1, wheel 0.37.1) fetched as wheels by the host's python3 pip and
#      bootstrapped with `python2.7 pip.whl/pip install --user` into a private user site ($AB/site).
#   3. The pinned set in requirements-py27.txt downloaded by that pip into $AB/wheels, sdists built into
#      wheels (wsaccel needs gcc and the bullseye libpython2.7-dev headers), all installed --no-index.
#
# Environment: RINGWIRE_CACHE (default ~/.cache/ringwire; the install goes to $RINGWIRE_CACHE/autobahn),
# DEBIAN_MIRROR (override the detected mirror), AUTOBAHN_FORCE=1 (reinstall python + site from the cache).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${RINGWIRE_CACHE:-$HOME/.cache/ringwire}
AB=$CACHE_ROOT/autobahn
PYROOT=$AB/py27
SITE=$AB/site
WHEELS=$AB/wheels
DEBS=$AB/debs
APTDIR=$AB/apt
BIN=$AB/bin
LAUNCHER=$BIN/wstest
REQ=$HERE/requirements-py27.txt

PIP_VERSION=20.3.4
BOOTSTRAP=("pip==$PIP_VERSION" "setuptools==44.1.1" "wheel==0.37.1")
SUITE=bullseye
DEB_PACKAGES=(python2.7 python2.7-minimal libpython2.7-minimal libpython2.7-stdlib libpython2.7-dev
              libssl1.1 libffi7)

log() { printf '[autobahn/install] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Anything the caller's Python environment sets must not leak into Python 2.7 (nor pip's config files).
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONNOUSERSITE PYTHONUSERBASE VIRTUAL_ENV PIP_REQUIRE_VIRTUALENV \
      PIP_USER PIP_TARGET PIP_PREFIX PIP_INDEX_URL_FILE 2>/dev/null || true
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CONFIG_FILE=/dev/null
# PIP_CERT / PIP_INDEX_URL / proxies from the environment are honoured (they are how registries are reached).

arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
multiarch=$(gcc -print-multiarch 2>/dev/null || true)
[ -n "$multiarch" ] || multiarch=x86_64-linux-gnu
[ "$arch" = amd64 ] || log "warning: only amd64 is tested (this is $arch)"

# A stamp over everything that defines the install: a change to the pins or these scripts reinstalls.
stamp_value() {
    cat "$REQ" "$HERE/wstest_launch.py" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16
}
STAMP=$(stamp_value)

mkdir -p "$AB"
exec 9>"$AB/.lock"
if command -v flock >/dev/null; then flock 9; fi

if [ -z "${AUTOBAHN_FORCE:-}" ] && [ -x "$LAUNCHER" ] && [ "$(cat "$AB/.installed" 2>/dev/null)" = "$STAMP" ]; then
    echo "$LAUNCHER"
    exit 0
fi

py2_env() {
    env PYTHONHOME="$PYROOT/usr" PYTHONUSERBASE="$SITE" \
        LD_LIBRARY_PATH="$PYROOT/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        PYTHONWARNINGS="ignore:Python 2 is no longer supported,ignore:DEPRECATION" "$@"
}
py2() { py2_env "$PYROOT/usr/bin/python2.7" "$@"; }

# ---------------------------------------------------------------------------------------------------
# 1. CPython 2.7 from Debian bullseye packages.
detect_mirror() {
    if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
    local uris
    # deb822 *.sources (URIs: lines) and one-line *.list / sources.list (deb [opts] URI suite ...).
    uris=$( { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
              cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
                | sed -n 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p'
            } | grep -E '/debian/?$' | grep -v -- '-security' || true)
    if [ -n "$uris" ]; then echo "$uris" | head -n1; else echo "http://deb.debian.org/debian"; fi
}

apt_private() {
    # Private apt: its own config (APT_CONFIG replaces /etc/apt/apt.conf and, through Dir::Etc::Parts,
    # apt.conf.d, so no system hooks run), sources, lists, cache; nothing under /etc or /var is written.
    local mirror=$1
    mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/parts" "$APTDIR/sources.d"
    : >"$APTDIR/status"
    local keyring=""
    [ -r /usr/share/keyrings/debian-archive-keyring.gpg ] && keyring="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
    echo "deb ${keyring}${mirror%/} $SUITE main" >"$APTDIR/sources.list"
    {
        echo "Dir::Etc::Main \"/dev/null\";"
        echo "Dir::Etc::Parts \"$APTDIR/parts\";"
        echo "Dir::Etc::SourceList \"$APTDIR/sources.list\";"
        echo "Dir::Etc::SourceParts \"$APTDIR/sources.d\";"
        echo "Dir::State \"$APTDIR/state\";"
        echo "Dir::State::status \"$APTDIR/status\";"
        echo "Dir::Cache \"$APTDIR/cache\";"
        echo "APT::Architecture \"$arch\";"
        echo "Acquire::Languages \"none\";"
        echo "Acquire::Check-Valid-Until \"false\";"
        [ "$(id -u)" = 0 ] && echo "APT::Sandbox::User \"root\";"
        # Keep the machine's proxy settings, if any.
        apt-config dump 2>/dev/null | grep -E '^Acquire::(http|https)::Proxy' || true
    } >"$APTDIR/apt.conf"
}

fetch_debs() {
    mkdir -p "$DEBS"
    local missing=()
    for p in "${DEB_PACKAGES[@]}"; do
        compgen -G "$DEBS/${p}_*.deb" >/dev/null || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || die "apt-get not found: cannot fetch Debian's python2.7"
    local mirrors=("$(detect_mirror)")
    # bullseye may move to the archive after its LTS ends: Debian's own archive host is the fallback.
    [ "${mirrors[0]}" != "http://archive.debian.org/debian" ] && mirrors+=("http://archive.debian.org/debian")
    for m in "${mirrors[@]}"; do
        log "fetching ${missing[*]} from $m ($SUITE) with a private apt configuration"
        apt_private "$m"
        if APT_CONFIG="$APTDIR/apt.conf" apt-get -q update >&2 \
            && (cd "$DEBS" && APT_CONFIG="$APTDIR/apt.conf" apt-get -q download "${missing[@]}" >&2); then
            return 0
        fi
        log "mirror $m failed"
    done
    die "could not download ${missing[*]}"
}

install_python() {
    if [ -z "${AUTOBAHN_FORCE:-}" ] && [ -x "$PYROOT/usr/bin/python2.7" ] && [ -f "$PYROOT/.ok" ]; then return 0; fi
    fetch_debs
    rm -rf "$PYROOT.tmp" && mkdir -p "$PYROOT.tmp"
    for p in "${DEB_PACKAGES[@]}"; do
        local deb
        deb=$(ls "$DEBS/${p}"_*.deb | sort | tail -n1)
        dpkg -x "$deb" "$PYROOT.tmp"
    done
    rm -rf "$PYROOT" && mv "$PYROOT.tmp" "$PYROOT"
    py2 -c 'import ssl, hashlib, ctypes, zlib, bz2, pyexpat, json, sqlite3' \
        || die "the unpacked python2.7 cannot import its core modules (missing host libraries?)"
    touch "$PYROOT/.ok"
    log "python: $(py2 -c 'import sys, ssl; print("%s, %s" % (sys.version.split()[0], ssl.OPENSSL_VERSION))')"
}

# ---------------------------------------------------------------------------------------------------
# 2. pip 20.3.4 into the private user site.
have_file() { compgen -G "$1" >/dev/null; }

bootstrap_pip() {
    mkdir -p "$WHEELS/dl"
    if ! have_file "$WHEELS/dl/pip-$PIP_VERSION-*.whl" || ! have_file "$WHEELS/dl/setuptools-44.1.1-*.whl" \
        || ! have_file "$WHEELS/dl/wheel-0.37.1-*.whl"; then
        command -v python3 >/dev/null || die "python3 (with pip) is needed once to fetch pip $PIP_VERSION for Python 2.7"
        log "fetching ${BOOTSTRAP[*]} (py2.7 wheels) with the host's python3 pip"
        python3 -m pip download -q --no-deps --python-version 2.7 --only-binary=:all: \
            -d "$WHEELS/dl" "${BOOTSTRAP[@]}" >&2
    fi
    if ! py2 -m pip --version 2>/dev/null | grep -q "^pip $PIP_VERSION "; then
        local whl
        whl=$(ls "$WHEELS"/dl/pip-$PIP_VERSION-*.whl | head -n1)
        log "bootstrapping pip $PIP_VERSION into $SITE"
        py2 "$whl/pip" install -q --user --no-warn-script-location --no-index --find-links "$WHEELS/dl" "${BOOTSTRAP[@]}" >&2
    fi
}

# ---------------------------------------------------------------------------------------------------
# 3. The suite.
req_lines() { sed -e 's/#.*//' -e 's/[[:space:]]//g' "$REQ" | grep -v '^$'; }
req_hash() { req_lines | sha256sum | cut -c1-16; }

fetch_wheels() {
    local want
    want=$(req_hash)
    if [ "$(cat "$WHEELS/.complete" 2>/dev/null)" = "$want" ]; then return 0; fi
    log "downloading the pinned set ($(req_lines | wc -l) packages) into $WHEELS/dl"
    py2 -m pip download -q --no-deps --no-build-isolation --prefer-binary -d "$WHEELS/dl" -r "$REQ" >&2
    mkdir -p "$WHEELS/built"
    local sdists=()
    for f in "$WHEELS"/dl/*.tar.gz "$WHEELS"/dl/*.zip "$WHEELS"/dl/*.tar.bz2; do
        [ -e "$f" ] || continue
        local base name
        base=$(basename "$f"); name=${base%-*}
        have_file "$WHEELS/built/${name}-*.whl" || have_file "$WHEELS/built/${name//-/_}-*.whl" || sdists+=("$f")
    done
    if [ ${#sdists[@]} -gt 0 ]; then
        log "building wheels: ${sdists[*]##*/}"
        for f in "${sdists[@]}"; do
            # wsaccel is C: Debian's distutils points at /usr/include/python2.7, so give it our headers.
            CFLAGS="-I$PYROOT/usr/include -I$PYROOT/usr/include/python2.7 ${CFLAGS:-}" \
                py2 -m pip wheel -q --no-deps --no-build-isolation --no-index -w "$WHEELS/built" "$f" >&2 \
                || log "warning: could not build a wheel from ${f##*/} (wsaccel needs gcc; wstest works without it, slower)"
        done
    fi
    echo "$want" >"$WHEELS/.complete"
}

install_suite() {
    local tmpreq
    tmpreq=$(mktemp)
    req_lines >"$tmpreq"
    if ! have_file "$WHEELS/built/wsaccel-*.whl"; then
        grep -v '^wsaccel==' "$tmpreq" >"$tmpreq.x" && mv "$tmpreq.x" "$tmpreq"
    fi
    log "installing the suite into $SITE (offline, from $WHEELS)"
    py2 -m pip install -q --user --no-warn-script-location --no-index --no-deps --only-binary=:all: \
        --find-links "$WHEELS/dl" --find-links "$WHEELS/built" -r "$tmpreq" >&2
    rm -f "$tmpreq"
    py2 -m pip check >&2 || log "note: pip check reports the above (wsaccel missing only slows wstest down)"
}

write_launcher() {
    mkdir -p "$BIN"
    cp "$HERE/wstest_launch.py" "$BIN/wstest_launch.py"
    cat >"$LAUNCHER.tmp" <<EOF
#!/bin/sh
# wstest launcher generated by ringwire scripts/autobahn/install.sh: CPython 2.7 from Debian bullseye in
# $PYROOT, packages in the private user site $SITE (PYTHONUSERBASE, so .pth files are honoured).
# Listening sockets bind \${WSTEST_BIND:-127.0.0.1}.
unset PYTHONPATH PYTHONSTARTUP PYTHONNOUSERSITE
PYTHONHOME='$PYROOT/usr'
PYTHONUSERBASE='$SITE'
LD_LIBRARY_PATH='$PYROOT/usr/lib/$multiarch'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PYTHONHOME PYTHONUSERBASE LD_LIBRARY_PATH
exec '$PYROOT/usr/bin/python2.7' '$BIN/wstest_launch.py' "\$@"
EOF
    chmod +x "$LAUNCHER.tmp" && mv "$LAUNCHER.tmp" "$LAUNCHER"
    cat >"$BIN/python2.7" <<EOF
#!/bin/sh
unset PYTHONPATH PYTHONSTARTUP PYTHONNOUSERSITE
PYTHONHOME='$PYROOT/usr'
PYTHONUSERBASE='$SITE'
LD_LIBRARY_PATH='$PYROOT/usr/lib/$multiarch'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
PYTHONWARNINGS='ignore:Python 2 is no longer supported'
export PYTHONHOME PYTHONUSERBASE LD_LIBRARY_PATH PYTHONWARNINGS
exec '$PYROOT/usr/bin/python2.7' "\$@"
EOF
    chmod +x "$BIN/python2.7"
}

verify() {
    "$LAUNCHER" --help >/dev/null 2>"$AB/verify.err" || { cat "$AB/verify.err" >&2; die "wstest --help failed"; }
    local v
    v=$("$BIN/python2.7" -c 'import autobahntestsuite, autobahn, twisted
try:
    import wsaccel; acc = "wsaccel " + wsaccel.__version__
except ImportError:
    acc = "no wsaccel"
print("autobahntestsuite %s, autobahn %s, Twisted %s, %s" % (autobahntestsuite.__version__, autobahn.__version__, twisted.__version__, acc))')
    log "ok: $v"
}

started=$(date +%s)
install_python
# A fresh user site whenever the stamp changed (cheap: everything is reinstalled from the wheelhouse).
rm -rf "$SITE" "$AB/.installed"
bootstrap_pip
fetch_wheels
install_suite
write_launcher
verify
echo "$STAMP" >"$AB/.installed"
log "done in $(( $(date +%s) - started )) s"
echo "$LAUNCHER"
