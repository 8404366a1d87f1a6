#!/usr/bin/env bash
# Validates goreleaser.yaml with a pinned goreleaser fetched through the Go
# module proxy. The tool is built in a temporary directory, outside klog's
# module, so klog's go.mod stays free of release tooling; the check itself
# runs from the repository root because goreleaser reads the git state.
#
#   scripts/release-check.sh
set -euo pipefail
GORELEASER_VERSION=${GORELEASER_VERSION:-v2.15.1} # newest that builds with Go 1.26.8 from the proxy
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && GOFLAGS=-mod=mod GOBIN="$work/bin" go install "github.com/goreleaser/goreleaser/v2@${GORELEASER_VERSION}")
cd "$root"
"$work/bin/goreleaser" check -f goreleaser.yaml
