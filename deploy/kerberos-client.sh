#!/usr/bin/env bash
# Give the confluent-kafka of a virtualenv with topo in it a librdkafka that logs in with
# Kerberos (SASL GSSAPI).
#
#   deploy/kerberos-client.sh VENV
#
# The confluent-kafka wheel's librdkafka is built without Cyrus SASL, so topo's admin plane
# (plan, apply, status, offsets, failover) cannot reach a Kerberized cluster with it. This builds
# librdkafka from its sources as the npm registry serves them (Confluent's
# @confluentinc/kafka-javascript bundles librdkafka's release sources under deps/librdkafka),
# with GSSAPI, into VENV/librdkafka, then builds confluent-kafka of the same version from its
# PyPI source distribution against it (rpath: nothing outside VENV is changed). About a minute
# on 2 cores; run again, it does nothing.
#
# Needs: a C compiler, make, pkg-config, npm, and the development files of Cyrus SASL, OpenSSL,
# zlib, zstd and libcurl, plus Cyrus SASL's GSSAPI plugin and kinit at run time; for
# `topo lab up --kerberos`, MIT's KDC too. As root with apt-get (CI), the Debian packages below
# are installed when missing; elsewhere the script names them (the KDC's only in a note).
set -euo pipefail

VENV=${1:?usage: deploy/kerberos-client.sh VENV}
VENV=$(cd "$VENV" && pwd)
# librdkafka and confluent-kafka share version numbers; this package carries that release.
VERSION=2.15.1
NPM_PACKAGE=@confluentinc/kafka-javascript@1.10.1
PREFIX=$VENV/librdkafka
DEBIAN_PACKAGES=(gcc make pkg-config libsasl2-dev libsasl2-modules-gssapi-mit libssl-dev zlib1g-dev
  libzstd-dev libcurl4-openssl-dev krb5-user)
# Only for `topo lab up --kerberos` (a KDC of the lab's own): installed as root, else named.
LAB_PACKAGES=(krb5-kdc krb5-admin-server)

say() { printf 'kerberos-client: %s\n' "$*" >&2; }

# topo's own check (topology/kafka/client.py), on the virtualenv's confluent-kafka.
has_gssapi() {
  "$VENV/bin/python" -c \
    'import sys; from topology.kafka.client import has_gssapi; sys.exit(not has_gssapi())' \
    2>/dev/null
}

# The Debian packages of those given that are not installed (none where there is no dpkg).
absent() {
  local package
  for package in "$@"; do
    if command -v dpkg >/dev/null && ! dpkg -s "$package" >/dev/null 2>&1; then
      echo "$package"
    fi
  done
}

can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

install() {
  say "installing Debian's $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null &&
      apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}

mapfile -t lab < <(absent "${LAB_PACKAGES[@]}")
if ((${#lab[@]})); then
  if can_install; then
    install "${lab[@]}"
  else
    say "note: \`topo lab up --kerberos\` also needs ${lab[*]}"
  fi
fi

if has_gssapi; then
  exit 0
fi

mapfile -t missing < <(absent "${DEBIAN_PACKAGES[@]}")
if ((${#missing[@]})); then
  if can_install; then
    install "${missing[@]}"
  else
    say "missing packages: ${missing[*]} (install them, e.g. sudo apt-get install ${missing[*]})"
    exit 1
  fi
fi

command -v npm >/dev/null || { say "npm is needed to fetch librdkafka's sources"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "fetching librdkafka $VERSION's sources ($NPM_PACKAGE)"
(cd "$work" && npm pack --silent "$NPM_PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/deps/librdkafka
source_dir=$work/package/deps/librdkafka
if ! head -1 "$source_dir/CHANGELOG.md" | grep -q "v$VERSION\$"; then
  say "$NPM_PACKAGE does not carry librdkafka $VERSION: $(head -1 "$source_dir/CHANGELOG.md")"
  exit 1
fi

say "building librdkafka $VERSION with GSSAPI into $PREFIX"
(
  cd "$source_dir"
  ./configure --prefix="$PREFIX" --enable-gssapi --enable-ssl --enable-zstd --enable-curl \
    --disable-debug-symbols >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log" >&2; exit 1; }
  grep -q SASL_CYRUS "$work/configure.log" ||
    { say "librdkafka's configure found no Cyrus SASL (libsasl2-dev)"; exit 1; }
  make -j"$(nproc 2>/dev/null || echo 2)" libs >"$work/make.log" 2>&1 ||
    { tail -20 "$work/make.log" >&2; exit 1; }
  make -C src install >"$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; exit 1; }
)

say "building confluent-kafka $VERSION against it"
C_INCLUDE_PATH=$PREFIX/include LIBRARY_PATH=$PREFIX/lib LDFLAGS="-Wl,-rpath,$PREFIX/lib" \
  "$VENV/bin/pip" install --quiet --force-reinstall --no-deps --no-cache-dir \
  --no-binary confluent-kafka "confluent-kafka==$VERSION"

if ! has_gssapi; then
  say "confluent-kafka was rebuilt but still refuses GSSAPI"
  exit 1
fi
say "confluent-kafka $VERSION with GSSAPI is installed in $VENV"
