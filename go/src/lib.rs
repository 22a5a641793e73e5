//! Go's encoding rules, byte for byte, in one place: helm-controller's digests, the values file Helm reads
//! and the documents kustomize re-writes are produced by Go programs, so where cozyhr writes or reads the
//! same things it must follow the same rules. Each submodule copies one Go package (or the part of it that
//! matters here) and tests it against vectors printed by Go:
//! - [`float`]: `strconv.FormatFloat(f, 'g', -1, 64|32)`, go-yaml's float encoding and `encoding/json`'s
//!   float64 format, on `strconv`'s shortest digits.
//! - [`strconv`]: `strconv.ParseInt` / `ParseUint` with base 0 (the integer syntax go-yaml resolves with).
//! - [`time`]: `time.Time`'s RFC 3339 JSON form (`parseRFC3339`, `Format(RFC3339Nano)`), metav1.Time's UTC
//!   form, and `time.Parse` with go-yaml's timestamp layouts.
//! - [`json`]: `encoding/json` — `json.Encoder`'s output (HTML escaping, struct field order, sorted map keys)
//!   and `json.Unmarshal`'s decoding into struct fields (case-insensitive keys, type errors).
//! - [`digest`]: opencontainers/go-digest's `sha256:<hex>`, and the bare hex of a SHA-256.
//! - [`yaml_v2`]: go-yaml v2's scalar rules (YAML 1.1), which Helm and Flux read and hash values with;
//!   `!!binary` through `encoding/base64`'s `StdEncoding`.
//! - [`yaml_v2_emit`]: go-yaml v2's emitter (`yaml.Marshal`), which Flux hashes values with.
//! - [`path`]: `path.Match`, the globs of Helm's `--show-only`.
//! - [`semver`]: Masterminds/semver's versions, as Helm and helm-controller read and write chart versions.
//! - [`semver_constraint`]: Masterminds/semver's constraints (`NewConstraint`, `Check`), with which
//!   source-controller picks a chart version from a repository.
//! - [`yaml`]: the YAML event parser and writer the rules above are applied over.
//! - [`yaml_v3`]: the certain part of go-yaml v3's scalar rules (YAML 1.2), which kustomize decodes with;
//!   [`yaml_block`]: the block-style YAML templates print, read fast, the rest left to the general parser;
//!   [`yaml_write`]: the block-style YAML the post-render writes, written fast where its form is certain.

pub mod digest;
pub mod float;
pub mod json;
pub mod path;
pub mod semver;
pub mod semver_constraint;
pub mod strconv;
pub mod time;
pub mod yaml;
pub mod yaml_block;
pub mod yaml_tree;
pub mod yaml_v2;
pub mod yaml_v2_emit;
pub mod yaml_v3;
pub mod yaml_write;
