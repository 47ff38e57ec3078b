//! `resource.Quantity` strings ("100m", "500Mi", "1.5G", "2e3").

use std::fmt;

/// A Kubernetes quantity as serialised (its canonical or as-written string).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Quantity<'a>(&'a str);

impl<'a> Quantity<'a> {
    /// Wraps a quantity string.
    pub fn new(s: &'a str) -> Self {
        Quantity(s)
    }

    /// The string as the host sent it.
    pub fn as_str(&self) -> &'a str {
        self.0
    }

    /// Value in thousandths, rounded up like Kubernetes' `MilliValue`; `None` if unparsable
    /// or out of the i64 range.
    pub fn milli_value(&self) -> Option<i64> {
        scaled(self.0, 3)
    }

    /// Value rounded up to an integer like Kubernetes' `Value`.
    pub fn value(&self) -> Option<i64> {
        scaled(self.0, 0)
    }
}

impl fmt::Debug for Quantity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Quantity({:?})", self.0)
    }
}

impl fmt::Display for Quantity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Splits the numeric part from the suffix. Returns (negative, digits, fraction digits, suffix).
fn split(s: &str) -> Option<(bool, &str, &str, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_part = &s[int_start..i];
    let mut frac = "";
    if i < b.len() && b[i] == b'.' {
        let f0 = i + 1;
        i = f0;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac = &s[f0..i];
    }
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    Some((neg, int_part, frac, &s[i..]))
}

/// Parses `s` and returns its value × 10^`scale`, the magnitude rounded up.
fn scaled(s: &str, scale: i32) -> Option<i64> {
    let (neg, int_part, frac, suffix) = split(s.trim())?;
    // (binary multiplier, decimal exponent)
    let (bin, mut exp10): (u32, i32) = match suffix {
        "" => (0, 0),
        "n" => (0, -9),
        "u" => (0, -6),
        "m" => (0, -3),
        "k" => (0, 3),
        "M" => (0, 6),
        "G" => (0, 9),
        "T" => (0, 12),
        "P" => (0, 15),
        "E" => (0, 18),
        "Ki" => (10, 0),
        "Mi" => (20, 0),
        "Gi" => (30, 0),
        "Ti" => (40, 0),
        "Pi" => (50, 0),
        "Ei" => (60, 0),
        other => {
            let rest = other.strip_prefix('e').or_else(|| other.strip_prefix('E'))?;
            (0, rest.parse::<i32>().ok().filter(|e| e.abs() <= 40)?)
        }
    };
    // mantissa = int_part.frac as an integer, exponent adjusted by the fraction length.
    let mut mant: i128 = 0;
    for d in int_part.bytes().chain(frac.bytes()) {
        mant = mant.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
    }
    exp10 = exp10 - frac.len() as i32 + scale;
    mant = mant.checked_mul(1i128 << bin)?;
    let value = if exp10 >= 0 {
        mant.checked_mul(10i128.checked_pow(exp10 as u32)?)?
    } else {
        let div = 10i128.checked_pow((-exp10) as u32)?;
        // Round the magnitude up (Kubernetes rounds toward +inf for positive values).
        (mant + div - 1) / div
    };
    let value = if neg { -value } else { value };
    i64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        let cases: &[(&str, Option<i64>, Option<i64>)] = &[
            ("0", Some(0), Some(0)),
            ("1", Some(1000), Some(1)),
            ("100m", Some(100), Some(1)),
            ("1500m", Some(1500), Some(2)),
            ("0.5", Some(500), Some(1)),
            ("1.5k", Some(1_500_000), Some(1500)),
            ("500Mi", Some(524_288_000_000), Some(524_288_000)),
            ("1Gi", Some(1_073_741_824_000), Some(1_073_741_824)),
            ("2G", Some(2_000_000_000_000), Some(2_000_000_000)),
            ("1e3", Some(1_000_000), Some(1000)),
            ("1E-3", Some(1), Some(1)),
            ("250n", Some(1), Some(1)),
            ("-1", Some(-1000), Some(-1)),
            ("+2", Some(2000), Some(2)),
            (".5", Some(500), Some(1)),
            ("110", Some(110_000), Some(110)),
            ("", None, None),
            ("abc", None, None),
            ("1Xi", None, None),
            ("9E", None, Some(9_000_000_000_000_000_000)),
            ("1e40", None, None),
        ];
        for (s, milli, value) in cases {
            let q = Quantity::new(s);
            assert_eq!(q.milli_value(), *milli, "milli {}", s);
            assert_eq!(q.value(), *value, "value {}", s);
        }
    }
}
