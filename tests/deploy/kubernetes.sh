#!/usr/bin/env bash
# deploy/kubernetes (the kustomize base: a cluster of nodes) and deploy/kubernetes-single
# (one node with its log on a volume), rendered by `kubectl kustomize` (no cluster runs
# here) and their objects' fields checked: probes, the preStop pause and the grace period
# against the drain, non-root with a read-only root file system and no capabilities,
# resources, the Secret's keys, Service, PodDisruptionBudget and the Ingress's gate; then
# the real anteroom started with each one's environment (the ConfigMap, the Deployment's
# variables, the Secret example's keys with real values): every variable is a flag's, and
# both start (the base's on a local redis-server). Skipped (77) without kubectl.
# usage: tests/deploy/kubernetes.sh PATH/TO/anteroom SOURCE_DIR
set -euo pipefail
BIN=$1
SRC=$(cd "$2" && pwd)
command -v kubectl >/dev/null || { echo "SKIP: no kubectl"; exit 77; }
source "$SRC/tests/cluster/lib.sh"
kubectl kustomize "$SRC/deploy/kubernetes" >"$work/base.yaml" 2>"$work/kustomize.log" ||
  fail "kubectl kustomize deploy/kubernetes: $(cat "$work/kustomize.log")"
kubectl kustomize "$SRC/deploy/kubernetes-single" >"$work/single.yaml" 2>>"$work/kustomize.log" ||
  fail "kubectl kustomize deploy/kubernetes-single: $(cat "$work/kustomize.log")"
pass "both render"

R=$(free_port)
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
  --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
python3 "$SRC/tests/deploy/kubernetes_check.py" "$work/base.yaml" "$work/single.yaml" \
  "$SRC/deploy/kubernetes/secret.example.yaml" "$BIN" "$work" "$R" || fail "see above"
