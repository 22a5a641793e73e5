//! Durations as Go writes and reads them: the `--timeout 5m` flags of both binaries, and the
//! `metav1.Duration` strings helm-controller puts in a status.

use std::time::Duration;

/// Parses Go-style durations ("30s", "5m", "5m0s", "1h30m", "500ms"), for clap's `value_parser`.
pub fn parse(s: &str) -> Result<Duration, String> {
    s.parse::<jiff::SignedDuration>()
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .ok_or_else(|| format!("{s:?} is not a duration (examples: 30s, 5m, 1h)"))
}

/// Go's time.Duration.String(), the format of metav1.Duration.
pub fn go_string(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", trim_fraction(nanos as f64 / 1e3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", trim_fraction(nanos as f64 / 1e6));
    }
    let secs = d.as_secs();
    let frac = d.subsec_nanos();
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut seconds = format!("{s}");
    if frac > 0 {
        let f = format!("{frac:09}");
        seconds.push('.');
        seconds.push_str(f.trim_end_matches('0'));
    }
    match (h, m) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

fn trim_fraction(x: f64) -> String {
    let s = format!("{x:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("5m0s").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse("soon").is_err());
    }

    #[test]
    fn writes_go_durations() {
        assert_eq!(go_string(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_string(Duration::from_secs(75)), "1m15s");
        assert_eq!(go_string(Duration::from_millis(250)), "250ms");
        assert_eq!(go_string(Duration::from_secs(3723)), "1h2m3s");
        assert_eq!(go_string(Duration::ZERO), "0s");
    }
}
