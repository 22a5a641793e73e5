#!/usr/bin/env bash
# A real, local control plane for cozyhr's tests and demo: etcd + kube-apiserver (TLS, admin client
# certificate) + the Flux CRDs + the real Flux helm-controller, source-controller and source-watcher
# (ArtifactGenerator), and kustomize-controller where its version is served (the 2.9 set), of Flux 2.9 (default) or Flux 2.8 (--flux 2.8, as Cozystack runs it), made to
# look to a client like a Flux install (labelled CRDs, a Deployment object per controller) + the sources
# they read: a loopback HTTP server for chart artifacts (artifact-http.py) that is also a public Helm
# repository (helm-repo/) and a private one (private/helm-repo/: HTTP Basic auth, user `cozy` and a random
# password made at `up`, kept in $RUN/private-repo.auth) and, over HTTPS with client certificates of an
# authority of its own ($RUN/repo-pki), tls/helm-repo/; an OCI registry, and a Git server over HTTP
# (git-http.py: Git's own http-backend) + a kubelet stand-in
# (kubelet-standin.py): there is no kubelet, scheduler or controller-manager, so Pods never run, but a Pod
# annotated `cozyhr.test/phase: Succeeded|Failed` is given the status a kubelet would write when its
# containers end so (Helm's test hooks). Everything listens on 127.0.0.1 only and is built from Go modules by scripts/tools.sh.
#
# With --tenant, a second cluster beside it: its own etcd and kube-apiserver with a certificate authority
# of its own, its own kubelet stand-in and no Flux, the "tenant" a HelmRelease's spec.kubeConfig installs into. Its kubeconfig
# (credentials embedded, as a kubeconfig kept in a Secret has them) is written as a file and as Secret
# flux-system/tenant-kubeconfig (key `value`) in the first cluster.
#
#   scripts/cluster.sh up [--tenant] [--flux 2.8|2.9]
#                             build what is missing, start everything, wait until ready (idempotent; a
#                             run that is up with the other Flux is stopped and started again with this one)
#   scripts/cluster.sh env    print `export` lines: eval "$(scripts/cluster.sh env)" (with the private
#                             Helm repository's test-ground-only user and password)
#   scripts/cluster.sh down   stop what `up` started and remove its run state
#   scripts/cluster.sh apiserver stop|start   stop or start the first API server on the same data
#   scripts/cluster.sh status say what is running
#
# Run state (pids, logs, certificates, kubeconfig) lives in $COZYHR_RUN (default ~/.cache/cozyhr-e2e/run).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
RUN=${COZYHR_RUN:-$CACHE/run}

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf 'cluster.sh: %s\n' "$*" >&2; exit 1; }

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

alive() { [ -f "$RUN/pids/$1" ] && kill -0 "$(cat "$RUN/pids/$1")" 2>/dev/null; }

# start NAME CMD...: run a service in its own session, logging to $RUN/logs/NAME.log.
start() {
  local name=$1; shift
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/pids/$name"
}

# wait_for WHAT SECONDS CMD...: retry CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what did not become ready in ${secs}s; see the logs in $RUN/logs"
    sleep 0.5
  done
}

# make_pki [DIR [CA_NAME]]: a certificate authority, the API server's serving certificate, an admin client
# certificate and the service-account key pair, in DIR (default $RUN/pki).
make_pki() {
  local p=${1:-$RUN/pki} ca_name=${2:-cozyhr-e2e-ca}
  [ -f "$p/admin.crt" ] && return
  mkdir -p "$p"
  (
    cd "$p"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 3650 -subj "/CN=$ca_name"
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:10.0.0.1\n' >srv.ext
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >cli.ext
    openssl req "${ec[@]}" -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile srv.ext -out apiserver.crt
    openssl req "${ec[@]}" -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=cozyhr-admin"
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile cli.ext -out admin.crt
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key
    openssl pkey -in sa.key -pubout -out sa.pub
    chmod 0600 ./*.key
  ) >>"$RUN/logs/pki.log" 2>&1 || die "creating certificates failed; see $RUN/logs/pki.log"
}

write_kubeconfig() {
  local p=$RUN/pki
  cat >"$RUN/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: cozyhr-e2e
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $p/ca.crt
users:
- name: cozyhr-admin
  user:
    client-certificate: $p/admin.crt
    client-key: $p/admin.key
contexts:
- name: cozyhr-e2e
  context:
    cluster: cozyhr-e2e
    user: cozyhr-admin
current-context: cozyhr-e2e
KC
  chmod 0600 "$RUN/kubeconfig"
}

healthy() {
  alive etcd && alive kube-apiserver && alive helm-controller && alive artifacts && alive source-controller &&
    alive source-watcher && { [ -z "${KUSTOMIZE_CONTROLLER:-}" ] || alive kustomize-controller; } && alive registry && alive git && alive kubelet-standin && [ -f "$RUN/private-repo.auth" ] &&
    curl -sfk "https://127.0.0.1:$API_PORT/readyz" >/dev/null
}

write_env() {
  local user password
  IFS=: read -r user password <"$RUN/private-repo.auth"
  # It holds the private Helm repository's password: readable by its owner only, as the auth file is.
  install -m 0600 /dev/null "$RUN/env"
  {
    cat "$RUN/tools.env"
    printf 'export KUBECONFIG=%q\n' "$RUN/kubeconfig"
    printf 'export COZYHR_RUN=%q\n' "$RUN"
    printf 'export COZYHR_ARTIFACT_DIR=%q\n' "$RUN/artifacts"
    printf 'export COZYHR_ARTIFACT_URL=%q\n' "http://127.0.0.1:$ARTIFACT_PORT"
    printf 'export COZYHR_HELM_REPO_DIR=%q\n' "$RUN/artifacts/helm-repo"
    printf 'export COZYHR_HELM_REPO_URL=%q\n' "http://127.0.0.1:$ARTIFACT_PORT/helm-repo"
    printf 'export COZYHR_PRIVATE_HELM_REPO_DIR=%q\n' "$RUN/artifacts/private/helm-repo"
    printf 'export COZYHR_PRIVATE_HELM_REPO_URL=%q\n' "http://127.0.0.1:$ARTIFACT_PORT/private/helm-repo"
    printf 'export COZYHR_PRIVATE_HELM_REPO_USER=%q\n' "$user"
    printf 'export COZYHR_PRIVATE_HELM_REPO_PASSWORD=%q\n' "$password"
    printf 'export COZYHR_TLS_HELM_REPO_DIR=%q\n' "$RUN/artifacts/tls/helm-repo"
    printf 'export COZYHR_TLS_HELM_REPO_URL=%q\n' "https://127.0.0.1:$ARTIFACT_TLS_PORT/tls/helm-repo"
    printf 'export COZYHR_TLS_HELM_REPO_PKI=%q\n' "$RUN/repo-pki"
    printf 'export COZYHR_REGISTRY=%q\n' "127.0.0.1:$REGISTRY_PORT"
    printf 'export COZYHR_GIT_DIR=%q\n' "$RUN/git"
    printf 'export COZYHR_GIT_URL=%q\n' "http://127.0.0.1:$GIT_PORT"
    printf 'export COZYHR_APISERVER_URL=%q\n' "https://127.0.0.1:$API_PORT"
    if [ -f "$RUN/tenant.kubeconfig" ]; then
      # shellcheck disable=SC1091
      source "$RUN/tenant.ports"
      printf 'export COZYHR_TENANT_KUBECONFIG=%q\n' "$RUN/tenant.kubeconfig"
      printf 'export COZYHR_TENANT_URL=%q\n' "https://127.0.0.1:$TENANT_API_PORT"
    fi
  } >"$RUN/env"
}

# start_control_plane SUFFIX PKI ETCD_PORT ETCD_PEER_PORT API_PORT: etcd and kube-apiserver (services
# etcdSUFFIX and kube-apiserverSUFFIX), their data in $RUN/etcdSUFFIX; waits until the API server is ready.
start_control_plane() {
  local sfx=$1 p=$2 etcd_port=$3 peer_port=$4 api_port=$5
  log "starting etcd$sfx on 127.0.0.1:$etcd_port"
  start "etcd$sfx" "$ETCD" --name="cozyhr-e2e$sfx" --data-dir="$RUN/etcd$sfx" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="cozyhr-e2e$sfx=http://127.0.0.1:$peer_port" --unsafe-no-fsync=true --log-level=warn
  wait_for "etcd$sfx" 60 curl -sf "http://127.0.0.1:$etcd_port/health"

  start_apiserver "$sfx" "$p" "$etcd_port" "$api_port"
}

# start_apiserver SUFFIX PKI ETCD_PORT API_PORT: kube-apiserverSUFFIX on its etcd; waits until it is ready.
start_apiserver() {
  local sfx=$1 p=$2 etcd_port=$3 api_port=$4
  log "starting kube-apiserver$sfx on https://127.0.0.1:$api_port"
  start "kube-apiserver$sfx" "$KUBE_APISERVER" --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" --cert-dir="$p" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --disable-admission-plugins=ServiceAccount --allow-privileged=true --endpoint-reconciler-type=none --profiling=false
  wait_for "kube-apiserver$sfx" 120 curl -sfk "https://127.0.0.1:$api_port/readyz"
}

# start_standin SUFFIX PKI API_PORT: the kubelet stand-in (service kubelet-standinSUFFIX) for that API
# server, with its admin client certificate; waits until it has listed the Pods once.
start_standin() {
  local sfx=$1 p=$2 api_port=$3
  local ready=$RUN/kubelet-standin$sfx.ready
  rm -f "$ready"
  log "starting the kubelet stand-in${sfx:+ of the ${sfx#-}} (Pods annotated cozyhr.test/phase end so)"
  start "kubelet-standin$sfx" python3 "$here/kubelet-standin.py" --server "https://127.0.0.1:$api_port" \
    --ca "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" --ready "$ready"
  wait_for "the kubelet stand-in$sfx" 30 test -f "$ready"
}

# The tenant cluster (--tenant): a second etcd and kube-apiserver with a CA of their own, no Flux. Its
# kubeconfig embeds its credentials, as one kept in a Secret must; the Secret goes into the first cluster.
up_tenant() {
  [ -f "$RUN/tenant.ports" ] && {
    # shellcheck disable=SC1091
    source "$RUN/tenant.ports"
    if alive etcd-tenant && alive kube-apiserver-tenant && curl -sfk "https://127.0.0.1:$TENANT_API_PORT/readyz" >/dev/null; then
      alive kubelet-standin-tenant || start_standin -tenant "$RUN/pki-tenant" "$TENANT_API_PORT"
      return
    fi
  }
  TENANT_ETCD_PORT=$(free_port) TENANT_ETCD_PEER_PORT=$(free_port) TENANT_API_PORT=$(free_port)
  declare -p TENANT_ETCD_PORT TENANT_ETCD_PEER_PORT TENANT_API_PORT | sed 's/^declare -- //' >"$RUN/tenant.ports"
  make_pki "$RUN/pki-tenant" cozyhr-e2e-tenant-ca
  start_control_plane -tenant "$RUN/pki-tenant" "$TENANT_ETCD_PORT" "$TENANT_ETCD_PEER_PORT" "$TENANT_API_PORT"
  start_standin -tenant "$RUN/pki-tenant" "$TENANT_API_PORT"
  local p=$RUN/pki-tenant b64='base64 -w0'
  cat >"$RUN/tenant.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: tenant
  cluster:
    server: https://127.0.0.1:$TENANT_API_PORT
    certificate-authority-data: $($b64 <"$p/ca.crt")
users:
- name: tenant-admin
  user:
    client-certificate-data: $($b64 <"$p/admin.crt")
    client-key-data: $($b64 <"$p/admin.key")
contexts:
- name: tenant
  context:
    cluster: tenant
    user: tenant-admin
current-context: tenant
KC
  chmod 0600 "$RUN/tenant.kubeconfig"
  wait_for "the tenant's default namespace" 60 "$KUBECTL" --kubeconfig "$RUN/tenant.kubeconfig" get namespace default
  "$KUBECTL" -n flux-system create secret generic tenant-kubeconfig --from-file=value="$RUN/tenant.kubeconfig" \
    --dry-run=client -o yaml | "$KUBECTL" --kubeconfig "$RUN/kubeconfig" apply -f - >/dev/null
  log "tenant cluster up: https://127.0.0.1:$TENANT_API_PORT (kubeconfig: $RUN/tenant.kubeconfig, Secret flux-system/tenant-kubeconfig)"
}

# run_flux: the Flux set the run in $RUN was started with (2.9 for a run from before there were two).
run_flux() { if [ -f "$RUN/flux" ]; then cat "$RUN/flux"; else echo 2.9; fi; }

up() {
  mkdir -p "$RUN"
  local tools
  tools=$("$here/tools.sh" build --flux "$FLUX_SET")
  if [ -f "$RUN/ports" ]; then
    # shellcheck disable=SC1091
    source "$RUN/ports"
    local was
    was=$(run_flux)
    if [ "$was" != "$FLUX_SET" ]; then
      log "the run in $RUN is up with Flux $was, not $FLUX_SET: stopping it and starting it again with Flux $FLUX_SET"
      down_quiet
    else
      printf '%s\n' "$tools" >"$RUN/tools.env"
      # shellcheck disable=SC1091
      source "$RUN/tools.env"
      if healthy; then
        [ "$TENANT" = 1 ] && up_tenant
        log "already up with Flux $FLUX_SET (kubeconfig: $RUN/kubeconfig)"; write_env; return
      fi
      log "a previous run is partly down: restarting it"
      down_quiet
    fi
  fi
  mkdir -p "$RUN"/{pids,logs,artifacts}
  printf '%s\n' "$tools" >"$RUN/tools.env"
  echo "$FLUX_SET" >"$RUN/flux"
  # shellcheck disable=SC1091
  source "$RUN/tools.env"
  ETCD_PORT=$(free_port) ETCD_PEER_PORT=$(free_port) API_PORT=$(free_port)
  ARTIFACT_PORT=$(free_port) METRICS_PORT=$(free_port) HEALTH_PORT=$(free_port)
  SC_STORAGE_PORT=$(free_port) SC_METRICS_PORT=$(free_port) SC_HEALTH_PORT=$(free_port) REGISTRY_PORT=$(free_port)
  SW_STORAGE_PORT=$(free_port) SW_METRICS_PORT=$(free_port) SW_HEALTH_PORT=$(free_port)
  GIT_PORT=$(free_port) ARTIFACT_TLS_PORT=$(free_port) KC_METRICS_PORT=$(free_port) KC_HEALTH_PORT=$(free_port)
  declare -p ETCD_PORT ETCD_PEER_PORT API_PORT ARTIFACT_PORT METRICS_PORT HEALTH_PORT \
    SC_STORAGE_PORT SC_METRICS_PORT SC_HEALTH_PORT SW_STORAGE_PORT SW_METRICS_PORT SW_HEALTH_PORT \
    REGISTRY_PORT GIT_PORT ARTIFACT_TLS_PORT KC_METRICS_PORT KC_HEALTH_PORT | sed 's/^declare -- //' >"$RUN/ports"

  make_pki
  # The HTTPS Helm repository's own authority: its serving certificate and the client certificate a
  # HelmRepository's certSecretRef presents.
  make_pki "$RUN/repo-pki" cozyhr-repo-ca
  write_kubeconfig

  start_control_plane "" "$RUN/pki" "$ETCD_PORT" "$ETCD_PEER_PORT" "$API_PORT"

  export KUBECONFIG=$RUN/kubeconfig
  log "installing the CRDs of Flux $COZYHR_FLUX_VERSION"
  wait_for "the default namespace" 60 "$KUBECTL" get namespace default
  flux_crds | "$KUBECTL" apply --server-side -f - >"$RUN/logs/crds.log" 2>&1 || die "installing the CRDs failed; see $RUN/logs/crds.log"
  "$KUBECTL" wait --for=condition=Established --timeout=60s crd --all >>"$RUN/logs/crds.log" 2>&1 ||
    die "the CRDs did not become Established; see $RUN/logs/crds.log"
  "$KUBECTL" create namespace flux-system --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null
  flux_deployments | "$KUBECTL" apply --server-side -f - >"$RUN/logs/deployments.log" 2>&1 ||
    die "creating the controllers' Deployment objects failed; see $RUN/logs/deployments.log"

  log "starting the chart artifact server on http://127.0.0.1:$ARTIFACT_PORT (private/: HTTP Basic auth) and https://127.0.0.1:$ARTIFACT_TLS_PORT (client certificates)"
  # The private Helm repository's credentials: user cozy and a random password, for this run only.
  (umask 077 && printf 'cozy:%s\n' "$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')" >"$RUN/private-repo.auth")
  chmod 0600 "$RUN/private-repo.auth"
  start artifacts python3 "$here/artifact-http.py" "$ARTIFACT_PORT" "$RUN/artifacts" --auth "$RUN/private-repo.auth" \
    --tls-port "$ARTIFACT_TLS_PORT" --tls-dir "$RUN/repo-pki"
  wait_for "the artifact server" 30 curl -sf "http://127.0.0.1:$ARTIFACT_PORT/"
  wait_for "the artifact server's HTTPS" 30 curl -sf --cacert "$RUN/repo-pki/ca.crt" \
    --cert "$RUN/repo-pki/admin.crt" --key "$RUN/repo-pki/admin.key" "https://127.0.0.1:$ARTIFACT_TLS_PORT/"
  mkdir -p "$RUN/artifacts/helm-repo" "$RUN/artifacts/private/helm-repo" "$RUN/artifacts/tls/helm-repo"
  [ -f "$RUN/artifacts/tls/helm-repo/index.yaml" ] || "$HELM4" repo index "$RUN/artifacts/tls/helm-repo" \
    --url "https://127.0.0.1:$ARTIFACT_TLS_PORT/tls/helm-repo"
  [ -f "$RUN/artifacts/helm-repo/index.yaml" ] || "$HELM4" repo index "$RUN/artifacts/helm-repo" \
    --url "http://127.0.0.1:$ARTIFACT_PORT/helm-repo"
  [ -f "$RUN/artifacts/private/helm-repo/index.yaml" ] || "$HELM4" repo index "$RUN/artifacts/private/helm-repo" \
    --url "http://127.0.0.1:$ARTIFACT_PORT/private/helm-repo"

  log "starting the OCI registry on 127.0.0.1:$REGISTRY_PORT"
  mkdir -p "$RUN/registry"
  printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$RUN/registry" "$REGISTRY_PORT" >"$RUN/registry.yaml"
  start registry "$REGISTRY" serve "$RUN/registry.yaml"
  wait_for "the OCI registry" 30 curl -sf "http://127.0.0.1:$REGISTRY_PORT/v2/"

  log "starting the Git server on http://127.0.0.1:$GIT_PORT"
  mkdir -p "$RUN/git"
  start git python3 "$here/git-http.py" "$GIT_PORT" "$RUN/git"
  wait_for "the Git server" 30 curl -s -o /dev/null "http://127.0.0.1:$GIT_PORT/"

  start_standin "" "$RUN/pki" "$API_PORT"

  log "starting source-controller"
  mkdir -p "$RUN/source-storage"
  start source-controller env KUBECONFIG="$RUN/kubeconfig" RUNTIME_NAMESPACE=flux-system "$SOURCE_CONTROLLER" \
    --watch-all-namespaces=true --enable-leader-election=false \
    --storage-path="$RUN/source-storage" --storage-addr="127.0.0.1:$SC_STORAGE_PORT" \
    --storage-adv-addr="127.0.0.1:$SC_STORAGE_PORT" \
    --metrics-addr="127.0.0.1:$SC_METRICS_PORT" --health-addr="127.0.0.1:$SC_HEALTH_PORT" --events-addr= \
    --concurrent=4 --requeue-dependency=5s --log-level=debug --log-encoding=console
  wait_for source-controller 60 curl -sf "http://127.0.0.1:$SC_HEALTH_PORT/readyz"

  log "starting source-watcher"
  # Its flags (cmd/main.go): a storage and artifact server of its own (its ExternalArtifacts' URLs name
  # --storage-adv-addr), its own metrics and health ports; no leader election, no events receiver.
  mkdir -p "$RUN/watcher-storage"
  start source-watcher env KUBECONFIG="$RUN/kubeconfig" RUNTIME_NAMESPACE=flux-system "$SOURCE_WATCHER" \
    --watch-all-namespaces=true --enable-leader-election=false \
    --storage-path="$RUN/watcher-storage" --storage-addr="127.0.0.1:$SW_STORAGE_PORT" \
    --storage-adv-addr="127.0.0.1:$SW_STORAGE_PORT" \
    --metrics-addr="127.0.0.1:$SW_METRICS_PORT" --health-addr="127.0.0.1:$SW_HEALTH_PORT" --events-addr= \
    --concurrent=4 --requeue-dependency=5s --log-level=debug --log-encoding=console
  wait_for source-watcher 60 curl -sf "http://127.0.0.1:$SW_HEALTH_PORT/readyz"

  log "starting helm-controller $HELM_CONTROLLER_VERSION"
  # helm-controller has no --kubeconfig flag (only pflag is parsed): it reads KUBECONFIG. v1.5.0 and
  # v1.6.4 take the same flags; ExternalArtifact is off by default in both (`flux install` turns it on
  # when source-watcher is installed).
  start helm-controller env KUBECONFIG="$RUN/kubeconfig" "$HELM_CONTROLLER" \
    --watch-all-namespaces=true --enable-leader-election=false \
    --metrics-addr="127.0.0.1:$METRICS_PORT" --health-addr="127.0.0.1:$HEALTH_PORT" --events-addr= \
    --feature-gates=ExternalArtifact=true --concurrent=4 --requeue-dependency=5s --http-retry=1 \
    --log-level=debug --log-encoding=console
  wait_for helm-controller 60 curl -sf "http://127.0.0.1:$HEALTH_PORT/readyz"

  if [ -n "${KUSTOMIZE_CONTROLLER:-}" ]; then
    log "starting kustomize-controller $KUSTOMIZE_CONTROLLER_VERSION"
    # As `flux install` runs it with source-watcher: ExternalArtifact on (an ArtifactGenerator's output as
    # a Kustomization's source). No leader election, no events receiver.
    start kustomize-controller env KUBECONFIG="$RUN/kubeconfig" RUNTIME_NAMESPACE=flux-system "$KUSTOMIZE_CONTROLLER" \
      --watch-all-namespaces=true --enable-leader-election=false \
      --metrics-addr="127.0.0.1:$KC_METRICS_PORT" --health-addr="127.0.0.1:$KC_HEALTH_PORT" --events-addr= \
      --feature-gates=ExternalArtifact=true --concurrent=4 --requeue-dependency=5s \
      --log-level=debug --log-encoding=console
    wait_for kustomize-controller 60 curl -sf "http://127.0.0.1:$KC_HEALTH_PORT/readyz"
  fi

  [ "$TENANT" = 1 ] && up_tenant
  write_env
  log "up with Flux $COZYHR_FLUX_VERSION (helm-controller $HELM_CONTROLLER_VERSION, source-controller $SOURCE_CONTROLLER_VERSION, source-watcher $SOURCE_WATCHER_VERSION${KUSTOMIZE_CONTROLLER:+, kustomize-controller $KUSTOMIZE_CONTROLLER_VERSION})"
  log "logs: $RUN/logs/{etcd,kube-apiserver,helm-controller,source-controller,source-watcher,kustomize-controller,registry,artifacts,git,kubelet-standin}.log"
  log "use it: eval \"\$($here/cluster.sh env)\"; stop it: $here/cluster.sh down"
}

# The labels Flux's install manifests put on everything of a controller (flux2's manifests/bases/*/labels.yaml
# and the install's labels.yaml, with the version `flux install` writes).
flux_labels() { # COMPONENT INDENT
  printf '%sapp.kubernetes.io/component: %s\n' "$2" "$1"
  printf '%sapp.kubernetes.io/instance: flux-system\n' "$2"
  printf '%sapp.kubernetes.io/part-of: flux\n' "$2"
  printf '%sapp.kubernetes.io/version: %s\n' "$2" "$COZYHR_FLUX_VERSION"
}

# flux_crds: the CRDs of $FLUX_CRDS as a Flux install applies them, labelled with their controller.
flux_crds() {
  local f comp labels
  for f in "$FLUX_CRDS"/*.yaml; do
    case ${f##*/} in
      helm.toolkit.fluxcd.io_*) comp=helm-controller ;;
      source.toolkit.fluxcd.io_*) comp=source-controller ;;
      source.extensions.fluxcd.io_*) comp=source-watcher ;;
      kustomize.toolkit.fluxcd.io_*) comp=kustomize-controller ;;
      *) die "$f: a CRD of no known controller" ;;
    esac
    mapfile -t labels < <(flux_labels "$comp" "" | sed 's/: /=/')
    echo "---"
    # One file at a time: with several, `label --local -o yaml` prints them without separators.
    "$KUBECTL" label --local --overwrite -o yaml -f "$f" "${labels[@]}"
  done
}

# flux_deployments: a Deployment object per controller in flux-system, named and labelled as Flux's
# install has them, with the image of the version that runs, so that a client sees what a user's
# cluster shows (`kubectl get deploy -n flux-system helm-controller -o jsonpath='{..image}'`). There is no
# kubelet here: replicas 0, and the controller itself runs as a process of the test ground's host.
flux_deployments() {
  local name v
  for name in helm-controller source-controller source-watcher ${KUSTOMIZE_CONTROLLER:+kustomize-controller}; do
    case $name in
      helm-controller) v=$HELM_CONTROLLER_VERSION ;;
      kustomize-controller) v=$KUSTOMIZE_CONTROLLER_VERSION ;;
      source-controller) v=$SOURCE_CONTROLLER_VERSION ;;
      source-watcher) v=$SOURCE_WATCHER_VERSION ;;
    esac
    cat <<DEPLOY
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $name
  namespace: flux-system
  labels:
    control-plane: controller
$(flux_labels "$name" "    ")
  annotations:
    cozyhr-e2e/host-process: "$name $v runs as a process of the test ground's host (scripts/cluster.sh; pid in $RUN/pids/$name), not from this Deployment: there is no kubelet here"
spec:
  replicas: 0
  selector:
    matchLabels:
      app: $name
  template:
    metadata:
      labels:
        app: $name
$(flux_labels "$name" "        ")
    spec:
      serviceAccountName: $name
      containers:
      - name: manager
        image: ghcr.io/fluxcd/$name:$v
DEPLOY
  done
}

down_quiet() {
  local name pid
  for name in kubelet-standin-tenant kubelet-standin kustomize-controller helm-controller source-watcher source-controller registry git artifacts \
    kube-apiserver-tenant etcd-tenant kube-apiserver etcd; do
    [ -f "$RUN/pids/$name" ] || continue
    pid=$(cat "$RUN/pids/$name")
    # Each service runs in its own session (setsid): stop the whole group, then make sure.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$RUN"
}

# FLUX_SET, not FLUX: tools.env exports FLUX (the flux CLI).
TENANT=0 FLUX_SET=2.9
case ${1:-} in
  up)
    shift
    while [ $# -gt 0 ]; do
      case $1 in
        --tenant) TENANT=1; shift ;;
        --flux) [ $# -ge 2 ] || die "--flux needs a value: 2.8 or 2.9"; FLUX_SET=$2; shift 2 ;;
        --flux=*) FLUX_SET=${1#--flux=}; shift ;;
        *) die "unknown option $1: scripts/cluster.sh up [--tenant] [--flux 2.8|2.9]" ;;
      esac
    done
    case $FLUX_SET in 2.8|2.9) ;; *) die "unknown Flux $FLUX_SET: scripts/cluster.sh up [--tenant] [--flux 2.8|2.9]" ;; esac
    up ;;
  down) down_quiet; log "down" ;;
  apiserver)
    # Stop or start the first cluster's API server on the same etcd (its data kept), for tests of a
    # command that loses the API server half-way.
    [ -f "$RUN/ports" ] || die "the local cluster is not up: run scripts/cluster.sh up"
    # shellcheck disable=SC1091
    source "$RUN/ports"
    "$here/tools.sh" env --flux "$(run_flux)" >"$RUN/tools.env"
    # shellcheck disable=SC1091
    source "$RUN/tools.env"
    case ${2:-} in
      stop)
        pid=$(cat "$RUN/pids/kube-apiserver")
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        log "kube-apiserver stopped" ;;
      start) start_apiserver "" "$RUN/pki" "$ETCD_PORT" "$API_PORT"; log "kube-apiserver started" ;;
      *) die "usage: scripts/cluster.sh apiserver stop|start" ;;
    esac ;;
  env)
    [ -f "$RUN/env" ] || die "the local cluster is not up: run scripts/cluster.sh up"
    cat "$RUN/env" ;;
  status)
    [ -f "$RUN/ports" ] || { echo "down"; exit 1; }
    # shellcheck disable=SC1091
    source "$RUN/ports"
    echo "flux: $(run_flux)"
    for s in etcd kube-apiserver helm-controller source-controller source-watcher kustomize-controller registry git artifacts kubelet-standin \
      etcd-tenant kube-apiserver-tenant kubelet-standin-tenant; do
      [ -f "$RUN/pids/$s" ] || case $s in *-tenant | kustomize-controller) continue ;; esac
      if alive "$s"; then echo "$s: running (pid $(cat "$RUN/pids/$s"))"; else echo "$s: stopped"; fi
    done ;;
  *) echo "usage: scripts/cluster.sh up [--tenant] [--flux 2.8|2.9]|down|env|status|apiserver stop|start" >&2; exit 1 ;;
esac
