//! One apply at a time per release, across terminals and machines: `apply` and `delete` (and each round
//! of `apply --watch`) hold a coordination.k8s.io Lease on the release while they change it.
//!
//! The Lease is named `cozyhr-<release>` and lives in the release's storage namespace, in the release's
//! own cluster (beside Helm's storage, which is what it protects). Its holder identity says who holds it:
//! `user@host pid N`. The holder renews it every [`RENEW_EVERY`]; a holder that is gone (killed, its
//! machine lost) stops renewing, and the Lease is free [`LEASE_DURATION`] after its last renewal. A second
//! apply says who holds it and waits for it (a watch on the Lease, and the expiry time), bounded by
//! `--timeout`; it takes the Lease over when released or expired. Taking and renewing are writes with the
//! Lease's resourceVersion, so two waiters cannot both win.

use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};

use crate::cluster::Cluster;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// How long a Lease stays held after its last renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How often the holder renews it.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// The Lease's name for release `release` (a Lease name is a DNS subdomain: 253 characters).
pub fn lease_name(release: &str) -> String {
    format!("cozyhr-{release}")
}

/// Who this process is, as the Lease says it: `user@host pid N`.
pub fn identity() -> String {
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into());
    format!("{user}@{host} pid {}", std::process::id())
}

/// A held Lease, renewed in the background until [`Held::release`] (or until the process ends, when it
/// expires on its own).
pub struct Held {
    api: Api<Lease>,
    name: String,
    identity: String,
    renewing: tokio::task::JoinHandle<()>,
}

impl Held {
    /// Gives the Lease up: stops renewing and deletes it (a failure only leaves it to expire).
    pub async fn release(self) {
        self.renewing.abort();
        if let Ok(Some(lease)) = self.api.get_opt(&self.name).await
            && holder(&lease).as_deref() == Some(self.identity.as_str())
        {
            let _ = self.api.delete(&self.name, &DeleteParams::default()).await;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.renewing.abort();
    }
}

fn holder(lease: &Lease) -> Option<String> {
    lease.spec.as_ref()?.holder_identity.clone().filter(|h| !h.is_empty())
}

/// When the Lease stops being held (its last renewal plus its duration); None when it is not held.
fn expires(lease: &Lease) -> Option<jiff::Timestamp> {
    let spec = lease.spec.as_ref()?;
    holder(lease)?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let seconds = i64::from(spec.lease_duration_seconds.unwrap_or(LEASE_DURATION.as_secs() as i32));
    renewed.checked_add(jiff::SignedDuration::from_secs(seconds)).ok()
}

fn now() -> MicroTime {
    MicroTime(jiff::Timestamp::now())
}

fn spec_for(identity: &str) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(identity.to_string()),
        lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
        acquire_time: Some(now()),
        renew_time: Some(now()),
        ..Default::default()
    }
}

/// Takes the Lease on release `release` in `namespace` of `cluster`, waiting for another holder (at most
/// `limit`, else as long as it takes), saying who holds it and once it is taken. Returns it held.
pub async fn acquire(cluster: &Cluster, namespace: &str, release: &str, limit: Option<Duration>) -> Result<Held> {
    let api: Api<Lease> = Api::namespaced(cluster.client.clone(), namespace);
    let name = lease_name(release);
    let identity = identity();
    let started = std::time::Instant::now();
    let mut waited_for: Option<String> = None;
    let mut changes = watcher(api.clone(), watcher::Config::default().fields(&format!("metadata.name={name}")))
        .default_backoff()
        .map(|_| ())
        .boxed();
    loop {
        let current = api.get_opt(&name).await.map_err(|e| cluster.error(e))?;
        let free_at = current.as_ref().and_then(expires);
        let taken = match (&current, free_at) {
            (None, _) => {
                let lease = Lease {
                    metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() },
                    spec: Some(spec_for(&identity)),
                };
                create_or_lost(&api, &lease).await.map_err(|e| cluster.error(e))?
            }
            // Released, or expired: taken over, with the resourceVersion read (a race is lost, not won twice).
            (Some(lease), at) if at.is_none_or(|at| at <= jiff::Timestamp::now()) => {
                let mut lease = lease.clone();
                lease.spec = Some(spec_for(&identity));
                replace_or_lost(&api, &name, &lease).await.map_err(|e| cluster.error(e))?
            }
            (Some(_), _) => false,
        };
        if taken {
            if let Some(other) = &waited_for {
                progress::success(format!("the release lock is ours: {other} let it go"));
            }
            let renewing = tokio::spawn(renew(api.clone(), name.clone(), identity.clone()));
            return Ok(Held { api, name, identity, renewing });
        }
        let other = current.as_ref().and_then(holder).unwrap_or_default();
        if waited_for.as_deref() != Some(other.as_str()) {
            progress::waiting(format!(
                "waiting for {other}, which holds the lock on release {namespace}/{release} (Lease {name}; it expires {}s after its holder stops renewing it)",
                LEASE_DURATION.as_secs()
            ));
            waited_for = Some(other.clone());
        }
        let until_free = free_at
            .map(|at| at.duration_since(jiff::Timestamp::now()).unsigned_abs())
            .unwrap_or(RENEW_EVERY)
            .min(LEASE_DURATION)
            + Duration::from_millis(100);
        let left = match limit {
            Some(limit) => match limit.checked_sub(started.elapsed()) {
                Some(left) => left,
                None => {
                    return Err(Error::Timeout {
                        what: format!("the lock on release {namespace}/{release}"),
                        after: limit,
                        last_seen: format!("held by {other}; nothing was changed, run the command again later"),
                    });
                }
            },
            None => until_free,
        };
        let _ = tokio::time::timeout(left.min(until_free), changes.next()).await;
    }
}

/// Creates the Lease; false when another process created it first.
async fn create_or_lost(api: &Api<Lease>, lease: &Lease) -> std::result::Result<bool, kube::Error> {
    match api.create(&PostParams::default(), lease).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Replaces the Lease as read; false when it changed since.
async fn replace_or_lost(api: &Api<Lease>, name: &str, lease: &Lease) -> std::result::Result<bool, kube::Error> {
    match api.replace(name, &PostParams::default(), lease).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Renews the Lease every [`RENEW_EVERY`] while it is ours.
async fn renew(api: Api<Lease>, name: String, identity: String) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let Ok(Some(mut lease)) = api.get_opt(&name).await else { continue };
        if holder(&lease).as_deref() != Some(identity.as_str()) {
            tracing::debug!("the release lock was taken over; no longer renewing it");
            return;
        }
        if let Some(spec) = lease.spec.as_mut() {
            spec.renew_time = Some(now());
        }
        if let Err(e) = api.replace(&name, &PostParams::default(), &lease).await {
            tracing::debug!(error = %e, "renewing the release lock failed; retrying");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_free_once_its_holder_stops_renewing() {
        let at = |s: &str| MicroTime(s.parse().unwrap());
        let lease = |holder: Option<&str>| Lease {
            metadata: Default::default(),
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_string),
                lease_duration_seconds: Some(15),
                renew_time: Some(at("2026-12-01T10:00:00Z")),
                ..Default::default()
            }),
        };
        assert_eq!(expires(&lease(Some("me@host pid 1"))), Some("2026-12-01T10:00:15Z".parse().unwrap()));
        assert_eq!(expires(&lease(None)), None, "released");
        assert_eq!(expires(&lease(Some(""))), None, "released");
        assert!(identity().contains(" pid "));
        assert_eq!(lease_name("apps-web"), "cozyhr-apps-web");
    }
}
