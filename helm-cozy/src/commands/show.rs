//! `helm cozy show NAME`: the manifests Flux would install for HelmRelease NAME.

use std::process::ExitCode;

use cozyhr::render::Tools;
use cozyhr::resolve::ChartPlace;
use cozyhr::resolve::ReleaseSource;
use cozyhr::resolve::Resolver;

use cozyhr_shell::ClusterFlags;

use crate::cli::ShowArgs;
use crate::commands::{note_offline_lookup, or_what_is_there};

pub async fn run(flags: &ClusterFlags, place: &ChartPlace, args: &ShowArgs) -> anyhow::Result<ExitCode> {
    cozyhr::render::check_show_only(&args.show_only)?;
    let user = args.inputs.values.user();
    let place = &args.chart_version.place(place)?;
    let rendered = match args.inputs.release.source(args.plain, flags.options().namespace)? {
        ReleaseSource::Files(files) => {
            // Without a chart directory: the chart from the repository the files' source names.
            let opened = Resolver::open_place(place, Tools::locate().await?)?;
            let default_namespace = files.namespace.as_deref().unwrap_or("default");
            let resolver = opened.for_release_files(&files, &args.name, default_namespace).await?;
            note_offline_lookup(&[&resolver.chart]);
            resolver.show_from_files(&files, &args.name, &user, &args.inputs.capabilities.view()).await?
        }
        ReleaseSource::Cluster => {
            let opened = Resolver::open_place(place, Tools::locate().await?)?;
            let cluster = flags.connect_for(&args.inputs.target).await?;
            let resolver = or_what_is_there(opened.for_release(&cluster, &args.name).await, &cluster, None).await?;
            // show only reads: a chart directory that is not the HelmRelease's is said, not refused.
            let resolver = Resolver { other_chart: cozyhr::desired::which_chart::OtherChart::Warn, ..resolver };
            let newer = super::say_newer_in_repository(&resolver, &cluster, &args.name);
            let (shown, ()) = tokio::join!(resolver.show(&cluster, &args.name, &user), newer);
            or_what_is_there(shown, &cluster, Some(&resolver.chart)).await?
        }
        ReleaseSource::ChartDefaults => {
            let resolver = Resolver::open(place.directory("show --plain")?, Tools::locate().await?)?;
            render_plain(flags, &resolver, args, &user).await?
        }
    };
    cozyhr::support::output::write_stdout(cozyhr::render::filter_show_only(&rendered, &args.show_only)?)?;
    Ok(ExitCode::SUCCESS)
}

/// `--plain`: the chart alone, with the cluster's capabilities and lookup when one is configured and
/// `--offline` is not given, else with Helm's defaults (said on stderr).
async fn render_plain(
    flags: &ClusterFlags,
    resolver: &Resolver,
    args: &ShowArgs,
    user: &cozyhr::desired::UserValues,
) -> anyhow::Result<String> {
    Ok(if args.offline || !flags.options().is_configured() {
        let why = if args.offline { "--offline" } else { "no cluster is configured" };
        cozyhr::support::output::stderr_line(format_args!(
            "{}: {why}: rendering with Helm's defaults (built-in .Capabilities, lookup finds nothing, an install)",
            cozyhr::support::output::chart_command()
        ));
        let namespace = flags.options().namespace.unwrap_or_else(|| "default".into());
        resolver.render_plain(None, &namespace, &args.name, user).await?
    } else {
        let cluster = flags.connect().await?;
        resolver.render_plain(Some(&cluster), &cluster.namespace, &args.name, user).await?
    })
}
