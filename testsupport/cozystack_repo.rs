//! A repository shaped like Cozystack's, for tests of `helm cozy review` (the helm-cozy tests without a
//! cluster, the end-to-end tests with one): PackageSource files in the platform chart's `sources/`, a
//! system chart installed by two PackageSources with different `valuesFiles` (azure, hetzner), a
//! component with a library it is given only by its PackageSource (no link in Git), and an apps chart with
//! the library linked in that needs the platform's values (`_cluster`) and a tenant namespace, as
//! Cozystack's cozy-lib does.

#![allow(dead_code)] // each test binary uses its own part of this

use std::path::Path;

/// Where the PackageSources are, as in Cozystack's repository.
pub const SOURCES: &str = "packages/core/platform/sources";

/// The platform's values the apps chart needs (cozy-lib's `_cluster.root-host`).
pub const PLATFORM_VALUES: &str = "_cluster:\n  root-host: example.org\n";

/// Writes the repository's files under `root` (not committed).
pub fn write(root: &Path) {
    let w = |p: &str, t: &str| {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, t).expect("write");
    };
    w("packages/library/cozy-lib/Chart.yaml", "apiVersion: v2\nname: cozy-lib\nversion: 0.1.0\ntype: library\n");
    // As Cozystack's cozy-lib: a tenant's namespace starts with `tenant-`, and the cluster's values
    // come from the platform.
    w(
        "packages/library/cozy-lib/templates/_tenant.tpl",
        "{{- define \"cozy-lib.tenant\" -}}\n{{- if not (hasPrefix \"tenant-\" .Release.Namespace) -}}\n{{- fail (printf \"'%s' is not a valid tenant identifier\" .Release.Namespace) -}}\n{{- end -}}\n{{- .Release.Namespace -}}\n{{- end -}}\n{{- define \"cozy-lib.host\" -}}\n{{- required \"_cluster.root-host is the platform's\" (index (.Values._cluster | default dict) \"root-host\") -}}\n{{- end -}}\n{{- define \"cozy-lib.owner\" -}}cozystack{{- end -}}\n",
    );
    // The system chart two PackageSources install, each with its values file over values.yaml.
    w("packages/system/autoscaler/Chart.yaml", "apiVersion: v2\nname: autoscaler\nversion: 1.0.0\n");
    w(
        "packages/system/autoscaler/values.yaml",
        "image:\n  repository: registry.k8s.io/autoscaler\n  tag: v1.30.0\ncloud: none\nreplicas: 1\n",
    );
    w("packages/system/autoscaler/values-azure.yaml", "cloud: azure\n");
    w("packages/system/autoscaler/values-hetzner.yaml", "cloud: hetzner\nimage:\n  tag: v1.30.1\n");
    w(
        "packages/system/autoscaler/templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n      - name: autoscaler\n        image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n        args: [--cloud-provider={{ .Values.cloud }}]\n",
    );
    // A component given the library by its PackageSource alone.
    w("packages/system/operator/Chart.yaml", "apiVersion: v2\nname: operator\nversion: 1.0.0\n");
    w(
        "packages/system/operator/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: operator\n  labels: {owner: {{ include \"cozy-lib.owner\" . }}}\ndata: {a: \"1\"}\n",
    );
    // An apps chart: the library linked in, as 34 of Cozystack's are.
    w("packages/apps/bucket/Chart.yaml", "apiVersion: v2\nname: bucket\nversion: 1.0.0\n");
    w("packages/apps/bucket/values.yaml", "size: 10Gi\n");
    std::fs::create_dir_all(root.join("packages/apps/bucket/charts")).expect("mkdir");
    std::os::unix::fs::symlink("../../../library/cozy-lib", root.join("packages/apps/bucket/charts/cozy-lib"))
        .expect("link");
    w(
        "packages/apps/bucket/templates/bucket.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {owner: {{ include \"cozy-lib.owner\" . }}}\ndata:\n  tenant: {{ include \"cozy-lib.tenant\" . }}\n  host: {{ include \"cozy-lib.host\" . }}\n  size: {{ .Values.size }}\n",
    );
    // The platform chart, whose sources/ holds the PackageSources.
    w("packages/core/platform/Chart.yaml", "apiVersion: v2\nname: platform\nversion: 1.0.0\n");
    w(
        "packages/core/platform/templates/sources.yaml",
        "{{- range $p, $_ := .Files.Glob \"sources/*.yaml\" }}\n---\n{{ $.Files.Get $p }}\n{{- end }}\n",
    );
    for cloud in ["azure", "hetzner"] {
        w(&format!("{SOURCES}/autoscaler-{cloud}.yaml"), &autoscaler_source(cloud));
    }
    w(&format!("{SOURCES}/bucket-application.yaml"), BUCKET_SOURCE);
    w(&format!("{GENERATED}/autoscaler-azure.yaml"), AUTOSCALER_AZURE_GENERATED);
    // The bucket application's definition, in a chart of its own as Cozystack keeps them: Cozystack's
    // API releases a bucket `bucket-NAME`.
    w("packages/system/bucket-rd/Chart.yaml", "apiVersion: v2\nname: bucket-rd\nversion: 1.0.0\n");
    w("packages/system/bucket-rd/templates/cozyrd.yaml", "{{ .Files.Get \"cozyrds/bucket.yaml\" }}\n");
    w("packages/system/bucket-rd/cozyrds/bucket.yaml", BUCKET_DEFINITION);
}

/// The bucket's ApplicationDefinition: its releases are named `bucket-` and the application's name.
pub const BUCKET_DEFINITION: &str = "\
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: bucket
spec:
  application: {kind: Bucket, singular: bucket, plural: buckets}
  release:
    prefix: bucket-
    chartRef: {kind: ExternalArtifact, name: cozystack-bucket-application-default-bucket, namespace: cozy-system}
";

/// Where the ArtifactGenerator and HelmRelease files are: the azure autoscaler as a Flux repository
/// without Cozystack's operator would write it.
pub const GENERATED: &str = "deploy";

/// The azure variant of the autoscaler as an ArtifactGenerator (its values files laid over values.yaml
/// with `strategy: Merge`) and a HelmRelease of its artifact: what the operator makes of
/// `cozystack.autoscaler-azure`, written by hand.
pub const AUTOSCALER_AZURE_GENERATED: &str = "\
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: autoscaler-azure
  namespace: cozy-system
spec:
  sources:
  - {alias: repo, kind: GitRepository, name: cozystack}
  artifacts:
  - name: autoscaler-azure
    copy:
    - {from: '@repo/packages/system/autoscaler/**', to: '@artifact/autoscaler/'}
    - {from: '@repo/packages/system/autoscaler/values.yaml', to: '@artifact/autoscaler/values.yaml'}
    - {from: '@repo/packages/system/autoscaler/values-azure.yaml', to: '@artifact/autoscaler/values.yaml', strategy: Merge}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: autoscaler-azure
  namespace: cozy-autoscaler-azure
spec:
  interval: 5m
  chartRef: {kind: ExternalArtifact, name: autoscaler-azure, namespace: cozy-system}
  valuesFrom:
  - {kind: Secret, name: cozystack-values, optional: true}
";

pub fn autoscaler_source(cloud: &str) -> String {
    format!(
        "apiVersion: cozystack.io/v1alpha1\nkind: PackageSource\nmetadata:\n  name: cozystack.autoscaler-{cloud}\nspec:\n  sourceRef: {{kind: OCIRepository, name: cozystack-packages, namespace: cozy-system, path: /}}\n  variants:\n  - name: default\n    components:\n    - name: autoscaler-{cloud}\n      path: system/autoscaler\n      valuesFiles: [values.yaml, values-{cloud}.yaml]\n      install: {{namespace: cozy-autoscaler-{cloud}, releaseName: autoscaler-{cloud}}}\n"
    )
}

pub const BUCKET_SOURCE: &str = "\
apiVersion: cozystack.io/v1alpha1
kind: PackageSource
metadata:
  name: cozystack.bucket-application
spec:
  sourceRef: {kind: OCIRepository, name: cozystack-packages, namespace: cozy-system, path: /}
  variants:
  - name: default
    libraries:
    - {name: cozy-lib, path: library/cozy-lib}
    components:
    - {name: bucket, path: apps/bucket, libraries: [cozy-lib]}
    - name: operator
      path: system/operator
      libraries: [cozy-lib]
      install: {namespace: cozy-system, releaseName: bucket-operator}
";
