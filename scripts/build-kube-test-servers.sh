#!/bin/sh
# Builds kube-apiserver and etcd from their Go modules, for the opt-in test
# of the Kubernetes provider against a real API server:
#
#   scripts/build-kube-test-servers.sh [CACHE_DIR]
#   BALLAST_KUBE_APISERVER=CACHE_DIR/kube-apiserver BALLAST_ETCD=CACHE_DIR/etcd \
#     go test -run TestAgainstARealAPIServer ./orchestrator/control/provider/kube/
#
# Both modules keep their sibling modules as local replace directives
# (Kubernetes its staging repositories, etcd its api, client and pkg
# modules), so `go install MODULE@VERSION` refuses them. Each is built from
# a scratch module that requires it and points every such sibling at its
# published version instead. Binaries already in CACHE_DIR are kept.
# Expect several minutes per binary on two cores.
set -eu

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/ballast/kube-test-servers}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# build MODULE VERSION SIBLING_VERSION PACKAGE OUTPUT
build() {
	module=$1 version=$2 sibling=$3 pkg=$4 out=$5
	if [ -x "$cache/$out" ]; then
		echo "$cache/$out: already built"
		return
	fi
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	gomod=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
	[ -n "$gomod" ] || { echo "no go.mod for $module@$version" >&2; exit 1; }
	goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")
	(
		cd "$work"
		printf 'module ballast.local/kubetestservers\n\ngo %s\n\nrequire %s %s\n' "$goversion" "$module" "$version" > go.mod
		# Every replace to a local directory becomes the published module
		# at the sibling version.
		sed -n 's/^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\([^[:space:](]\{1,\}\)\([[:space:]]\{1,\}v[^[:space:]]*\)\{0,1\}[[:space:]]*=>[[:space:]]*\.\{1,2\}\/.*/\2/p' "$gomod" |
			while read -r old; do
				go mod edit -replace "$old=$old@$sibling"
			done
		go mod tidy >/dev/null 2>&1 || true
		go get "$pkg@$version" >/dev/null 2>&1 || go get "$pkg"
		CGO_ENABLED=0 go build -trimpath -o "$cache/$out" "$pkg"
	)
	rm -rf "$work"
	trap - EXIT
	echo "$cache/$out: built from $module@$version"
}

# Kubernetes' staging modules are published as v0.MINOR.PATCH of v1.MINOR.PATCH.
staging=v0.${KUBE_VERSION#v1.}
build k8s.io/kubernetes "$KUBE_VERSION" "$staging" k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
build go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "$ETCD_VERSION" go.etcd.io/etcd/server/v3 etcd

echo "BALLAST_KUBE_APISERVER=$cache/kube-apiserver"
echo "BALLAST_ETCD=$cache/etcd"
