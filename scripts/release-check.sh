#!/usr/bin/env bash
# Validates goreleaser.yaml with a pinned goreleaser fetched through the Go
# module proxy. It runs outside klog's module so klog's go.mod stays free of
# release tooling.
#
#   scripts/release-check.sh
set -euo pipefail
GORELEASER_VERSION=${GORELEASER_VERSION:-v2.15.1}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
GOFLAGS=-mod=mod go run "github.com/goreleaser/goreleaser/v2@${GORELEASER_VERSION}" check -f "$root/goreleaser.yaml"
