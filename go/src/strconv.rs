//! Go's integer syntax: `strconv.ParseInt(s, 0, 64)` and `strconv.ParseUint(s, 0, 64)`, which go-yaml v2
//! and v3 use to decide that a plain scalar is an integer. Base prefixes `0x`, `0o`, `0b` (either case), a
//! leading `0` for octal, else decimal. go-yaml strips underscores before it asks, so these take text
//! without them.

/// The base a `ParseUint(s, 0, …)` prefix selects and the digits after it. A prefix letter needs a digit
/// after it; without one the `0` alone selects octal (and the letter then fails as a digit).
fn base_and_digits(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b.first() != Some(&b'0') {
        return (10, s);
    }
    match b.get(1).map(u8::to_ascii_lowercase) {
        Some(b'b') if b.len() >= 3 => (2, &s[2..]),
        Some(b'o') if b.len() >= 3 => (8, &s[2..]),
        Some(b'x') if b.len() >= 3 => (16, &s[2..]),
        _ => (8, &s[1..]),
    }
}

/// Whether `s` is `ParseUint(s, 0, 64)` syntax, whatever its range (no sign).
fn is_uint_syntax(s: &str) -> bool {
    let (radix, digits) = base_and_digits(s);
    // Only "0" leaves no digits: the octal prefix alone is zero.
    !s.is_empty() && digits.chars().all(|c| c.is_digit(radix))
}

/// Whether `s` is `ParseInt(s, 0, 64)` syntax, whatever its range: an optional sign, then
/// [`parse_uint`]'s syntax.
pub fn is_int_syntax(s: &str) -> bool {
    is_uint_syntax(s.strip_prefix(['+', '-']).unwrap_or(s))
}

/// Go `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(digits)?;
    if neg { if u <= 1u64 << 63 { Some((u as i64).wrapping_neg()) } else { None } } else { i64::try_from(u).ok() }
}

/// Go `strconv.ParseUint(s, 0, 64)`: no sign, `None` on a syntax or range error.
pub fn parse_uint(s: &str) -> Option<u64> {
    if !is_uint_syntax(s) {
        return None;
    }
    let (radix, digits) = base_and_digits(s);
    if digits.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_syntax_matches_go() {
        for s in ["0x1F", "0o17", "0b101", "017", "-0x1", "123"] {
            assert!(is_int_syntax(s), "{s}");
        }
        for s in ["0x", "1.2.3", "1a", "0b2", "+"] {
            assert!(!is_int_syntax(s), "{s}");
        }
    }

    /// Printed by Go 1.26: `strconv.ParseInt(s, 0, 64)` and `strconv.ParseUint(s, 0, 64)` of each text
    /// (`None` where Go returns an error).
    #[test]
    fn parse_int_and_uint_match_go() {
        const CASES: &[(&str, Option<i64>, Option<u64>)] = &[
            ("0", Some(0), Some(0)),
            ("-0", Some(0), None),
            ("+12", Some(12), None),
            ("017", Some(15), Some(15)),
            ("08", None, None),
            ("0x1F", Some(31), Some(31)),
            ("0X1f", Some(31), Some(31)),
            ("-0x1F", Some(-31), None),
            ("0o17", Some(15), Some(15)),
            ("0O17", Some(15), Some(15)),
            ("0b101", Some(5), Some(5)),
            ("0B101", Some(5), Some(5)),
            ("0x", None, None),
            ("0b", None, None),
            ("0b2", None, None),
            ("9223372036854775807", Some(i64::MAX), Some(9223372036854775807)),
            ("9223372036854775808", None, Some(9223372036854775808)),
            ("-9223372036854775808", Some(i64::MIN), None),
            ("-9223372036854775809", None, None),
            ("18446744073709551615", None, Some(u64::MAX)),
            ("18446744073709551616", None, None),
            ("0xFFFFFFFFFFFFFFFF", None, Some(u64::MAX)),
            ("", None, None),
            ("+", None, None),
            ("1e3", None, None),
            (" 1", None, None),
        ];
        for (s, int, uint) in CASES {
            assert_eq!(parse_int(s), *int, "ParseInt({s:?})");
            assert_eq!(parse_uint(s), *uint, "ParseUint({s:?})");
        }
    }
}
