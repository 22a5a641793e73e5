//! Go's float formatting, byte for byte: helm-controller's digests and the values file Helm reads are
//! written by Go, so where cozyhr writes the same numbers it must pick the same digits.
//!
//! One digit search (`shortest_digits`, `strconv`'s shortest round-trip digits with Go's tie rule) and the
//! three layouts Go writes them in: `strconv.FormatFloat(f, 'g', -1, 64|32)` (`format_float_g`), go-yaml's
//! encoder (the same, with YAML names for infinities and NaN: [`format_float_yaml`]) and `encoding/json`'s
//! float64 encoder ([`format_float_json`]).

use std::fmt::Write as _;

/// The shortest decimal digits that round-trip to `abs` (> 0, finite) and the power of ten of the first
/// digit, as Go's `strconv` picks them: of the shortest candidates the nearest, and on an exact tie the
/// even one. Rust's shortest formatting agrees except on exact ties, where it may pick the odd neighbour.
/// `bits32`: the digits of the value as a float32 (Go's `bitSize` 32).
fn shortest_digits(abs: f64, bits32: bool) -> (String, i32) {
    let s = if bits32 { format!("{:e}", abs as f32) } else { format!("{abs:e}") };
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let n = digits.len();
    let last_odd = digits.as_bytes()[n - 1] % 2 == 1;
    if !last_odd {
        return (digits, exp);
    }
    // The exact binary value (a float32 widens to float64 exactly).
    let exact_value = if bits32 { f64::from(abs as f32) } else { abs };
    // An exact tie means the exact binary value is d₁…dₙ5000… in decimal: 800 digits show all of any f64.
    // The cheap look at digit n+1 first rules most values out.
    if !format!("{exact_value:.n$e}").split_once('e').is_some_and(|(m, _)| m.ends_with('5')) {
        return (digits, exp);
    }
    let exact = format!("{exact_value:.800e}");
    let (exact_mantissa, exact_exp) = exact.split_once('e').unwrap_or((&exact, "0"));
    if exact_exp.parse::<i32>().ok() != Some(exp) {
        return (digits, exp);
    }
    let exact_digits: Vec<u8> = exact_mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if exact_digits.get(n) != Some(&b'5') || exact_digits[n + 1..].iter().any(|&d| d != b'0') {
        return (digits, exp);
    }
    let roundtrips = |digits: &str| {
        let text = format!("{}.{}e{exp}", &digits[..1], if digits.len() > 1 { &digits[1..] } else { "0" });
        if bits32 { text.parse::<f32>().ok() == Some(abs as f32) } else { text.parse::<f64>().ok() == Some(abs) }
    };
    let lower = String::from_utf8_lossy(&exact_digits[..n]).into_owned();
    if lower == digits {
        // Rust rounded down to an odd digit; the even neighbour is one up (after a 9 it would carry and be
        // shorter, which the shortest search would already have found).
        let mut up = lower.into_bytes();
        if up[n - 1] == b'9' {
            return (digits, exp);
        }
        up[n - 1] += 1;
        let up = String::from_utf8(up).unwrap_or_default();
        if roundtrips(&up) {
            return (up, exp);
        }
    } else if roundtrips(&lower) {
        return (lower, exp);
    }
    (digits, exp)
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64)` (or 32) of a finite `f`: `%e` with at least two exponent
/// digits when the shortest digits' exponent is outside [-4, 6), else `%f`.
fn format_float_g(f: f64, bits32: bool) -> String {
    let mut out = String::new();
    if let Some((digits, exp)) = sign_and_digits(&mut out, f, bits32) {
        // Go's %g with the shortest precision: an exponent when it is below -4 or from 6 on.
        if (-4..6).contains(&exp) {
            push_fixed(&mut out, &digits, exp);
        } else {
            push_exponent(&mut out, &digits, exp, 2);
        }
    }
    out
}

/// A float64 as `encoding/json` writes it (ES6 number-to-string): shortest round-trip digits, `%f`-style
/// within [1e-6, 1e21), else exponent form with a signed, unpadded exponent (`1e+21`, `1e-7`). `f` is
/// finite: Go's encoder refuses the others.
pub fn format_float_json(f: f64) -> String {
    let mut out = String::new();
    if let Some((digits, exp)) = sign_and_digits(&mut out, f, false) {
        if (1e-6..1e21).contains(&f.abs()) {
            push_fixed(&mut out, &digits, exp);
        } else {
            // Go pads the exponent to two digits, then trims "e-0x" to "e-x" (positive ones are ≥ 21 here).
            push_exponent(&mut out, &digits, exp, 1);
        }
    }
    out
}

/// Writes the sign of `f` (Go writes `-0` too) and returns its shortest digits and their exponent, or
/// writes `0` and returns `None` for zero.
fn sign_and_digits(out: &mut String, f: f64, bits32: bool) -> Option<(String, i32)> {
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push('0');
        return None;
    }
    Some(shortest_digits(f.abs(), bits32))
}

/// `%f` of the digits `d₁d₂…` × 10^`exp` (first digit's power): as many digits as they have, no more.
fn push_fixed(out: &mut String, digits: &str, exp: i32) {
    let digits = digits.as_bytes();
    let nd = digits.len() as i32;
    let dp = exp + 1;
    let digit = |k: i32| if k >= 0 && k < nd { digits[k as usize] as char } else { '0' };
    if dp > 0 {
        (0..dp).for_each(|k| out.push(digit(k)));
    } else {
        out.push('0');
    }
    let decimals = (nd - dp).max(0);
    if decimals > 0 {
        out.push('.');
        (0..decimals).for_each(|k| out.push(digit(dp + k)));
    }
}

/// `%e` of the digits: `d[.ddd]e±x`, the exponent with at least `width` digits.
fn push_exponent(out: &mut String, digits: &str, exp: i32, width: usize) {
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(out, "e{}{:0width$}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
}

/// go-yaml's float encoding (`encoder.floatv`, also sigs.k8s.io/yaml's float map keys):
/// `format_float_g` with `.inf`, `-.inf` and `.nan` for the values YAML names.
pub fn format_float_yaml(f: f64, bits32: bool) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf".into() } else { "-.inf".into() };
    }
    format_float_g(f, bits32)
}

/// How a Go float64 is shown here: integral values that fit an i64 (or else a u64) become JSON integers, the
/// rest stay floats. This is the same split `sigs.k8s.io/yaml.JSONObjectToYAMLObject` makes before digesting,
/// and it keeps `replicas: 3` an integer in every view. Non-finite floats cannot occur: Go's JSON encoder
/// rejects them before they get here.
pub fn number_from_f64(f: f64) -> serde_json::Value {
    use serde_json::Value;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if f.fract() == 0.0 && (-TWO_63..TWO_63).contains(&f) {
        Value::from(f as i64)
    } else if f.fract() == 0.0 && (0.0..TWO_64).contains(&f) {
        Value::from(f as u64)
    } else {
        serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by Go 1.26 (float32 cases: `FormatFloat(float64(float32(f)), 'g', -1, 32)`): `strconv.FormatFloat(f, 'g', -1, 64)` (and 32 where marked) of each value.
    #[test]
    // The tie cases are exact binary values written out in full: that is the point of them.
    #[allow(clippy::excessive_precision)]
    fn format_float_g_matches_go() {
        const CASES: &[(f64, bool, &str)] = &[
            (1748103125955531.25, false, "1.7481031259555312e+15"),
            (-1866661216161838.25, false, "-1.8666612161618382e+15"),
            (1.5, false, "1.5"),
            (0.0, false, "0"),
            (-0.0, false, "-0"),
            (123456.0, false, "123456"),
            (1e20, false, "1e+20"),
            (1e21, false, "1e+21"),
            (123456789.0, false, "1.23456789e+08"),
            (100000.0, false, "100000"),
            (1000000.0, false, "1e+06"),
            (0.0001, false, "0.0001"),
            (0.00001, false, "1e-05"),
            (1e-7, false, "1e-07"),
            (5e-324, false, "5e-324"),
            (2.2250738585072014e-308, false, "2.2250738585072014e-308"),
            (1.7976931348623157e308, false, "1.7976931348623157e+308"),
            (0.1, true, "0.1"),
            (16777217.0, true, "1.6777216e+07"),
            (3.4028234663852886e38, true, "3.4028235e+38"),
            (1.0000001, true, "1.0000001"),
            (33554434.5, true, "3.3554436e+07"),
        ];
        for (f, bits32, go) in CASES {
            assert_eq!(format_float_g(*f, *bits32), *go, "{f} (32-bit: {bits32})");
        }
    }

    /// Printed by Go 1.26: `json.Marshal` of each float64.
    #[test]
    // The tie case is an exact binary value written out in full.
    #[allow(clippy::excessive_precision)]
    fn format_float_json_matches_go() {
        const CASES: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.2345678901234568e20, "123456789012345680000"),
            (1748103125955531.25, "1748103125955531.2"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.000001234, "0.000001234"),
            (12345600.0, "12345600"),
            (8.41e21, "8.41e+21"),
        ];
        for (f, go) in CASES {
            assert_eq!(format_float_json(*f), *go, "{f}");
        }
    }

    #[test]
    fn go_float_formatting() {
        assert_eq!(format_float_yaml(1.5, false), "1.5");
        assert_eq!(format_float_yaml(1e21, false), "1e+21");
        assert_eq!(format_float_yaml(1e-7, false), "1e-07");
        assert_eq!(format_float_yaml(0.0001, false), "0.0001");
        assert_eq!(format_float_yaml(123456.0, false), "123456");
        assert_eq!(format_float_yaml(1234567.5, false), "1.2345675e+06");
        assert_eq!(format_float_yaml(0.1, true), "0.1");
        assert_eq!(format_float_yaml(1.23456789, true), "1.2345679");
    }

    /// Go's `FormatFloat` writes `+Inf`, `-Inf` and `NaN`; go-yaml renames them.
    #[test]
    fn yaml_names_non_finite_floats() {
        assert_eq!(format_float_yaml(f64::INFINITY, false), ".inf");
        assert_eq!(format_float_yaml(f64::NEG_INFINITY, true), "-.inf");
        assert_eq!(format_float_yaml(f64::NAN, false), ".nan");
    }
}
