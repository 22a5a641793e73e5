//! Go's number formatting, byte for byte: helm-controller's digests and the values file Helm reads are
//! written by Go, so where cozyhr writes the same things it must pick the same digits. One home for these
//! rules, used by the values file, the configDigest and the release snapshot.

/// The shortest decimal digits that round-trip to `abs` (> 0, finite) and the power of ten of the first
/// digit, as Go's `strconv` picks them: of the shortest candidates the nearest, and on an exact tie the
/// even one. Rust's shortest formatting agrees except on exact ties, where it may pick the odd neighbour.
/// `bits32`: the digits of the value as a float32 (Go's `bitSize` 32).
pub fn shortest_digits(abs: f64, bits32: bool) -> (String, i32) {
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
pub fn format_float_g(f: f64, bits32: bool) -> String {
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let abs = f.abs();
    if abs == 0.0 {
        out.push('0');
        return out;
    }
    let (digits, exp) = shortest_digits(abs, bits32);
    let digits = digits.as_bytes();
    let nd = digits.len() as i32;
    // Go's %g with the shortest precision: an exponent when it is below -4 or from 6 on.
    if !(-4..6).contains(&exp) {
        out.push(digits[0] as char);
        if nd > 1 {
            out.push('.');
            out.extend(digits[1..].iter().map(|&d| d as char));
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else {
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
    out
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
}
