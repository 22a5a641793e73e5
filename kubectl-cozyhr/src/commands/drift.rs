//! `drift NAME`: the drift helm-controller's drift detection sees now (found and printed by the library),
//! on stdout; what makes helm-controller not look at all on stderr.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::compare::diff::{DEFAULT_CONTEXT, RenderOptions};
use cozyhr::compare::drift::{Options, detect};
use cozyhr::flux::{HelmRelease, Objects};
use cozyhr::support::output::{Paint, progress, write_stdout};

use crate::cli::{DriftArgs, DriftFormat};

pub async fn run(cluster: &Cluster, args: &DriftArgs) -> anyhow::Result<ExitCode> {
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).get(&args.name).await?;
    let report = detect(cluster, &hr, Options { show_secrets: args.print.show_secrets }).await?;
    for note in &report.notes {
        progress::warning(note);
    }
    let text = match args.print.output {
        DriftFormat::Diff => {
            report.render_text(RenderOptions { context: Some(DEFAULT_CONTEXT), color: Paint::stdout().0 })
        }
        DriftFormat::Json => report.render_json(Some(DEFAULT_CONTEXT)),
    };
    write_stdout(text)?;
    let failures = report.failures();
    if !failures.is_empty() {
        let n = failures.len();
        anyhow::bail!("{n} object{} could not be compared: {}", if n == 1 { "" } else { "s" }, failures.join("; "));
    }
    // Drift is a diff's changes: exit 2 with --detailed-exitcode.
    Ok(args.print.exit_code(report.has_drift()))
}
