//! `version` of every face: the client, and the cluster's helm-controller with the Helm SDK inside it
//! (as `flux version` names the controllers), so a user sees which rules helm cozy follows.

use std::process::ExitCode;

use cozyhr::cluster::ClusterOptions;
use cozyhr::controller::{self, Controller};

/// `version`'s flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct VersionArgs {
    /// Print the client's version only, without asking the cluster.
    #[arg(long)]
    pub client: bool,
}

/// Prints `client` (`helm-cozy 0.1.0`), then, with `renders_with_helm`, the Helm that renders, then the
/// cluster's helm-controller and its Helm. No cluster configured: the client only. A cluster configured
/// and not reachable is an error, as for `flux version`.
pub async fn version(
    client: &str,
    args: &VersionArgs,
    cluster: &ClusterOptions,
    renders_with_helm: bool,
) -> anyhow::Result<ExitCode> {
    let mut out = format!("{client} {}\n", cozyhr::VERSION);
    if args.client {
        cozyhr::support::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let helm = if renders_with_helm { cozyhr::render::Helm::locate().await.ok() } else { None };
    if let Some(helm) = &helm {
        out.push_str(&format!("helm: {} ({})\n", helm.version, helm.bin.display()));
    }
    if !cluster.is_configured() {
        out.push_str("helm-controller: no cluster configured\n");
        cozyhr::support::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    // A cluster that cannot be read or reached is one error line, as for any command (`--client` prints
    // the client alone).
    let connected = cluster.connect().await?;
    let server = connected.server_version().await?;
    out.push_str(&format!("kubernetes: {server} ({})\n", connected.server));
    let found = controller::detect(&connected).await;
    out.push_str(&controller_lines(&found, helm.as_ref()));
    cozyhr::support::output::write_stdout(out)?;
    Ok(ExitCode::SUCCESS)
}

/// `helm-controller: …`, `helm-controller's Helm: …`, and a note when the local Helm is another minor.
fn controller_lines(found: &Controller, helm: Option<&cozyhr::render::Helm>) -> String {
    let sdk = found.helm_sdk();
    let mut out = format!("helm-controller: {}\n", found.describe());
    let known = if found.version.is_some() { "" } else { " (the newest known)" };
    out.push_str(&format!("helm-controller's Helm: {sdk}{known}\n"));
    if let Some(helm) = helm
        && !controller::helm_sdk::renders_as_controller(&helm.version, sdk)
    {
        out.push_str(&format!(
            "note: the Helm that renders here ({}) is not helm-controller's ({sdk}, which says {}): chart-default nulls, .Capabilities.HelmVersion and template functions can differ (each render names what applies to its chart); set COZYHR_HELM to a Helm {sdk} built without a version stamp to render exactly as helm-controller does\n",
            helm.version,
            controller::helm_sdk::controller_helm_version(sdk)
        ));
    }
    out
}
