//! Go's `time` rules as the Go programs cozyhr matches apply them: `time.Time`'s JSON form (RFC 3339 parsed
//! by `parseRFC3339`, written as RFC3339Nano in the offset it was read with), metav1.Time's (UTC, whole
//! seconds), and `time.Parse` with the layouts go-yaml tries on a plain scalar that may be a timestamp.
//!
//! Hand-written rather than jiff's: jiff reads RFC 3339 more leniently than Go (a lowercase `t`, a space for
//! the `T`, offsets up to 25 hours), refuses what Go truncates (more than nine fraction digits), and writes
//! years outside 0000-9999 in six digits where Go writes four.

use std::fmt::Write as _;

/// A `time.Time` as `Time.UnmarshalJSON` builds it: the wall clock as written plus its zone offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoTime {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    min: u32,
    sec: u32,
    nsec: u32,
    /// Seconds east of UTC.
    offset: i64,
}

/// Unix seconds of 0001-01-01T00:00:00Z, Go's zero `time.Time`.
const GO_ZERO_UNIX: i64 = -62_135_596_800;

impl GoTime {
    /// Go's strict fast path `parseRFC3339`. Go falls back to the lenient `time.Parse(time.RFC3339, …)` for
    /// oddities (one-digit hours, `,` before the fraction) that Go's own `MarshalJSON` never writes; those
    /// are rejected here.
    pub fn parse_rfc3339(s: &str) -> Option<GoTime> {
        let b = s.as_bytes();
        if b.len() < 19 {
            return None;
        }
        let num = |r: std::ops::Range<usize>, min: i64, max: i64| -> Option<i64> {
            let mut x: i64 = 0;
            for &c in &b[r] {
                if !c.is_ascii_digit() {
                    return None;
                }
                x = x * 10 + i64::from(c - b'0');
            }
            (min..=max).contains(&x).then_some(x)
        };
        let year = num(0..4, 0, 9999)?;
        let month = num(5..7, 1, 12)?;
        let day = num(8..10, 1, i64::from(days_in(month as u32, year)))?;
        let hour = num(11..13, 0, 23)?;
        let min = num(14..16, 0, 59)?;
        let sec = num(17..19, 0, 59)?;
        if !(b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':') {
            return None;
        }
        let mut rest = &b[19..];
        let mut nsec: u32 = 0;
        if rest.len() >= 2 && rest[0] == b'.' && rest[1].is_ascii_digit() {
            let mut n = 2;
            while n < rest.len() && rest[n].is_ascii_digit() {
                n += 1;
            }
            // parseNanoseconds: at most nine digits count, the rest is truncated.
            let digits = &rest[1..n.min(10)];
            for &c in digits {
                nsec = nsec * 10 + u32::from(c - b'0');
            }
            for _ in digits.len()..9 {
                nsec *= 10;
            }
            rest = &rest[n..];
        }
        let offset = if rest == b"Z" {
            0
        } else {
            if rest.len() != 6 || !(rest[0] == b'+' || rest[0] == b'-') || rest[3] != b':' {
                return None;
            }
            let hr = std::str::from_utf8(&rest[1..3]).ok().filter(|d| d.bytes().all(|c| c.is_ascii_digit()))?;
            let mm = std::str::from_utf8(&rest[4..6]).ok().filter(|d| d.bytes().all(|c| c.is_ascii_digit()))?;
            let (hr, mm): (i64, i64) = (hr.parse().ok()?, mm.parse().ok()?);
            if hr > 23 || mm > 59 {
                return None;
            }
            let off = (hr * 60 + mm) * 60;
            if rest[0] == b'-' { -off } else { off }
        };
        Some(GoTime {
            year,
            month: month as u32,
            day: day as u32,
            hour: hour as u32,
            min: min as u32,
            sec: sec as u32,
            nsec,
            offset,
        })
    }

    fn unix(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.min) * 60
            + i64::from(self.sec)
            - self.offset
    }

    /// `Time.IsZero`: the instant 0001-01-01T00:00:00Z, whatever the zone it is written in.
    pub fn is_zero(&self) -> bool {
        self.unix() == GO_ZERO_UNIX && self.nsec == 0
    }

    /// `Time.MarshalJSON`'s text (without quotes): RFC3339Nano in the parsed offset.
    pub fn rfc3339_nano(&self) -> String {
        let mut out = String::with_capacity(35);
        push_year(&mut out, self.year);
        let _ = write!(out, "-{:02}-{:02}T{:02}:{:02}:{:02}", self.month, self.day, self.hour, self.min, self.sec);
        if self.nsec != 0 {
            let frac = format!("{:09}", self.nsec);
            out.push('.');
            out.push_str(frac.trim_end_matches('0'));
        }
        if self.offset == 0 {
            out.push('Z');
        } else {
            let (sign, off) = if self.offset < 0 { ('-', -self.offset) } else { ('+', self.offset) };
            let _ = write!(out, "{sign}{:02}:{:02}", off / 3600, off / 60 % 60);
        }
        out
    }

    /// `metav1.Time.MarshalJSON`'s text: `t.UTC().Format(time.RFC3339)`, whole seconds.
    pub fn metav1(&self) -> String {
        let unix = self.unix();
        let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
        let secs = unix.rem_euclid(86_400);
        let mut out = String::with_capacity(20);
        push_year(&mut out, y);
        let _ = write!(out, "-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60);
        out
    }
}

/// Go's `appendInt(b, year, 4)`: a sign for negative years, at least four digits.
fn push_year(out: &mut String, year: i64) {
    if year < 0 {
        out.push('-');
    }
    let _ = write!(out, "{:04}", year.unsigned_abs());
}

/// Go's `daysIn`: the days of `month` (1-12) in the proleptic Gregorian `year`.
fn days_in(month: u32, year: i64) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Whether Go's `time.Parse` accepts `s` with one of the layouts go-yaml v2 and v3 try on a plain scalar
/// that may be a timestamp: "2006-1-2T15:4:5.999999999Z07:00" (also with `t`), "2006-1-2 15:4:5.999999999"
/// and "2006-1-2", with Go's range checks.
pub fn matches_yaml_timestamp_layouts(s: &str) -> bool {
    parse_yaml_timestamp_layouts(s).is_some()
}

fn parse_yaml_timestamp_layouts(s: &str) -> Option<()> {
    let b = s.as_bytes();
    // Go's getnum for 1-or-2-digit fields: one digit, and a second one if present.
    let num12 = |i: &mut usize| -> Option<u32> {
        let d1 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
        *i += 1;
        let mut n = u32::from(d1 - b'0');
        if let Some(d2) = b.get(*i).filter(|c| c.is_ascii_digit()) {
            n = n * 10 + u32::from(d2 - b'0');
            *i += 1;
        }
        Some(n)
    };
    // A literal byte of the layout.
    let lit = |i: &mut usize, c: u8| (b.get(*i) == Some(&c)).then(|| *i += 1);
    // "2006": four digits.
    let year: u32 = s.get(0..4).filter(|y| y.bytes().all(|c| c.is_ascii_digit()))?.parse().ok()?;
    let mut i = 4;
    lit(&mut i, b'-')?;
    let month = num12(&mut i)?;
    lit(&mut i, b'-')?;
    let day = num12(&mut i)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, i64::from(year)) {
        return None;
    }
    if i == b.len() {
        return Some(());
    }
    let with_zone = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return None,
    };
    i += 1;
    let hour = num12(&mut i)?;
    lit(&mut i, b':')?;
    let min = num12(&mut i)?;
    lit(&mut i, b':')?;
    let sec = num12(&mut i)?;
    if hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if with_zone {
        match b.get(i) {
            Some(b'Z') => i += 1,
            Some(b'+' | b'-') => {
                let z = b.get(i..i + 6)?;
                if z[3] != b':' || !z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit) {
                    return None;
                }
                let (hh, mm) = (
                    u32::from(z[1] - b'0') * 10 + u32::from(z[2] - b'0'),
                    u32::from(z[4] - b'0') * 10 + u32::from(z[5] - b'0'),
                );
                // Go's range test uses `>`: offsets of 24 hours or 60 minutes pass.
                if hh > 24 || mm > 60 {
                    return None;
                }
                i += 6;
            }
            _ => return None,
        }
    }
    (i == b.len()).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_and_format_like_go() {
        let t = |s: &str| GoTime::parse_rfc3339(s);
        let nano = |s: &str| t(s).unwrap().rfc3339_nano();
        let meta = |s: &str| t(s).unwrap().metav1();
        assert_eq!(nano("2024-01-02T03:04:05+00:00"), "2024-01-02T03:04:05Z");
        assert_eq!(nano("2024-01-02T03:04:05.1234567891234-05:30"), "2024-01-02T03:04:05.123456789-05:30");
        assert_eq!(nano("2024-01-02T03:04:05.100000000Z"), "2024-01-02T03:04:05.1Z");
        assert_eq!(meta("2024-02-29T23:59:59.999+02:00"), "2024-02-29T21:59:59Z");
        assert_eq!(meta("2023-12-31T23:30:00-01:00"), "2024-01-01T00:30:00Z");
        assert!(t("0001-01-01T00:00:00Z").unwrap().is_zero());
        assert!(t("0001-01-01T01:00:00+01:00").unwrap().is_zero());
        assert!(!t("0001-01-01T00:00:00.000000001Z").unwrap().is_zero());
        for bad in [
            "",
            "2023-02-29T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01t00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00+24:00",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }

    /// Printed by Go 1.26: `json.Marshal` of the `time.Time` that `json.Unmarshal` reads from the text, and
    /// `t.UTC().Format(time.RFC3339)` (metav1's form), across year, leap day and month boundaries.
    #[test]
    fn calendar_arithmetic_matches_go() {
        const CASES: &[(&str, &str, &str)] = &[
            ("0000-01-01T00:30:00+01:00", "0000-01-01T00:30:00+01:00", "-0001-12-31T23:30:00Z"),
            ("9999-12-31T23:30:00-01:00", "9999-12-31T23:30:00-01:00", "10000-01-01T00:30:00Z"),
            ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),
            ("1600-02-29T12:00:00.5+12:00", "1600-02-29T12:00:00.5+12:00", "1600-02-29T00:00:00Z"),
            ("2100-03-01T00:00:00+00:01", "2100-03-01T00:00:00+00:01", "2100-02-28T23:59:00Z"),
        ];
        for (text, nano, metav1) in CASES {
            let t = GoTime::parse_rfc3339(text).unwrap();
            assert_eq!((t.rfc3339_nano().as_str(), t.metav1().as_str()), (*nano, *metav1), "{text}");
        }
    }

    /// Printed by Go 1.26: whether `time.Parse` accepts the text with one of go-yaml's timestamp layouts.
    #[test]
    fn yaml_timestamp_layouts_match_go() {
        const CASES: &[(&str, bool)] = &[
            ("2001-12-14", true),
            ("2001-1-2", true),
            ("2001-12-14t21:59:43.10-05:00", true),
            ("2001-12-14T21:59:43.10-05:00", true),
            ("2001-12-14 21:59:43.10", true),
            ("2001-12-14 1:2:3", true),
            ("2001-12-14T1:2:3Z", true),
            ("2001-12-14T21:59:43,5Z", true),
            ("2001-12-14T21:59:43.Z", false),
            ("2001-12-14T21:59:43+24:00", true),
            ("2001-12-14T21:59:43+25:00", false),
            ("2001-12-14T21:59:43+05:60", true),
            ("2001-12-14T21:59:43+0500", false),
            ("2001-12-14 21:59:43Z", false),
            ("2001-02-29", false),
            ("2000-02-29", true),
            ("1900-02-29", false),
            ("2001-13-01", false),
            ("2001-12-32", false),
            ("2001-12-14T24:00:00Z", false),
            ("2001-12-14T23:60:00Z", false),
            ("2001-12-14 ", false),
            ("2001-12-14T21:59", false),
            ("2001-012-14", false),
            ("0000-01-01", true),
            ("2001-12-14T21:59:43.123456789123Z", true),
        ];
        for (text, go) in CASES {
            assert_eq!(matches_yaml_timestamp_layouts(text), *go, "{text}");
        }
    }
}
