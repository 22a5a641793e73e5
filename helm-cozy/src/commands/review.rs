//! `helm cozy review git:REF [PATH]`: a change across a repository, release by release.

use std::process::ExitCode;

use cozyhr::sets::review::{Releases, Request};

use cozyhr_shell::ClusterFlags;

use crate::cli::ReviewArgs;

pub async fn run(flags: &ClusterFlags, dir: &std::path::Path, args: &ReviewArgs) -> anyhow::Result<ExitCode> {
    let tools = cozyhr::render::Tools::locate().await?;
    let cluster = (!args.offline).then(|| {
        let selection = cozyhr::sets::release_set::Selection {
            all_namespaces: args.all_namespaces,
            selector: args.selector.clone(),
            names: Vec::new(),
        };
        (cozyhr::cluster::Connection::new(flags.options()), selection)
    });
    // As if started in -C: PATH and the release files are relative to it.
    let files: Vec<std::path::PathBuf> = args
        .release_file
        .iter()
        .map(|f| if f.is_absolute() || cozyhr::source::release_file::is_stdin(f) { f.clone() } else { dir.join(f) })
        .collect();
    let releases = Releases { cluster, files: &files };
    let scope = args.path.clone().unwrap_or_else(|| std::path::PathBuf::from("."));
    let mut user = args.values.user();
    // -f is relative to -C too.
    user.files = user.files.iter().map(|f| if f.is_absolute() { f.clone() } else { dir.join(f) }).collect();
    user.check_files()?;
    // A chart with its own defaults is released in -n's namespace (helm template's).
    let defaults_namespace = flags.options().namespace.unwrap_or_else(|| "default".into());
    let request = Request {
        dir,
        scope: &scope,
        refs: &args.refs,
        releases,
        offline_view: args.capabilities.view(),
        user: &user,
        defaults_namespace: &defaults_namespace,
        options: args.print.plan_options(),
        concurrency: cozyhr::sets::release_set::concurrency(args.concurrency.map(usize::from)),
    };
    let report = cozyhr::sets::review::run(&tools, &request).await?;
    cozyhr::sets::review::print::print(&report, args.print.format(), args.layout.render_options())?;
    if report.errors() > 0 {
        anyhow::bail!(
            "{} of {} releases could not be rendered (see their rows above)",
            report.errors(),
            report.entries.len()
        );
    }
    Ok(args.print.exit_code(report.any_change()))
}
