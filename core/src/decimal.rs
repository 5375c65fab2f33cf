//! The f64 nearest to a decimal text, as `str::parse::<f64>` gives it, without std's parser:
//! its table of powers of five (10 KB), with its code, cost the playground 14.8 KB of its
//! 321 KB gzip (this reader and `toml_value`, which reads TOML's floats through it, cost
//! 1.3 KB), for floats no lesson file may hold: a float only ever reaches an error message.

use std::cmp::Ordering;

/// The f64 nearest to the decimal `text` (`[+-]digits[.digits][(e|E)[+-]digits]`, as toml
/// hands a float over), ties to even: what `str::parse::<f64>` gives.
///
/// An estimate from the first 19 digits, then corrected one step at a time: a candidate is
/// right when the text lies between the midpoints to its neighbours, compared exactly in
/// big integers (Clinger's AlgorithmR, as in "How to Read Floating Point Numbers
/// Accurately", 1990).
pub fn nearest_f64(text: &str) -> f64 {
    let (negative, t) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exp) = t.split_once(['e', 'E']).unwrap_or((t, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut exp10 = exponent(exp).saturating_sub(frac.len() as i64);
    let mut digits: Vec<u8> = (int.bytes().chain(frac.bytes()))
        .map(|b| b - b'0')
        .skip_while(|&d| d == 0)
        .collect();
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 = exp10.saturating_add(1);
    }
    // A midpoint between two f64s has at most 767 significant digits: past 800, only
    // whether more (nonzero) digits follow can matter.
    if digits.len() > 800 {
        exp10 = exp10.saturating_add(digits.len() as i64 - 801);
        digits.truncate(800);
        digits.push(1);
    }
    let f = if digits.is_empty() {
        0.0
    } else {
        magnitude(&digits, exp10)
    };
    if negative {
        -f
    } else {
        f
    }
}

/// A decimal exponent (`-12`, `+3`), saturated far beyond any f64's.
fn exponent(s: &str) -> i64 {
    let (negative, d) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let e = d.bytes().fold(0i64, |e, b| {
        e.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    });
    if negative {
        -e
    } else {
        e
    }
}

/// Powers of ten an f64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The f64 nearest to `digits` × 10^`exp10` (digits without leading or trailing zeros).
fn magnitude(digits: &[u8], exp10: i64) -> f64 {
    let n = digits.len() as i64;
    if n.saturating_add(exp10) > 310 {
        return f64::INFINITY; // at least 10^309
    }
    if n.saturating_add(exp10) < -324 {
        return 0.0; // below 10^-325, under half the smallest subnormal
    }
    let lead = digits
        .iter()
        .take(19)
        .fold(0u64, |a, &d| a * 10 + u64::from(d));
    let mut e = exp10 + (n - 19).max(0);
    let mut f = lead as f64;
    while e > 0 {
        let k = e.min(22);
        f *= POW10[k as usize];
        e -= k;
    }
    while e < 0 {
        let k = (-e).min(22);
        f /= POW10[k as usize];
        e += k;
    }
    let x = digits.iter().fold(Big(Vec::new()), |mut x, &d| {
        x.mul_add(10, u32::from(d));
        x
    });
    let odd = |b: u64| b & 1 == 1;
    let mut b = f.to_bits();
    loop {
        let up = b < f64::INFINITY.to_bits() && {
            let o = cmp_midpoint(&x, exp10, b);
            o == Ordering::Greater || (o == Ordering::Equal && odd(b))
        };
        let down = !up
            && b > 0
            && match cmp_midpoint(&x, exp10, b - 1) {
                Ordering::Less => true,
                o => o == Ordering::Equal && odd(b),
            };
        match (up, down) {
            (true, _) => b += 1,
            (_, true) => b -= 1,
            _ => return f64::from_bits(b),
        }
    }
}

/// `x` × 10^`exp10` against the midpoint between the f64s of bits `lo` and `lo + 1` (the bits
/// of infinity stand for 2^1024, where rounding up from the largest f64 ends).
fn cmp_midpoint(x: &Big, exp10: i64, lo: u64) -> Ordering {
    let (m1, k1) = parts(lo);
    let (m2, k2) = parts(lo + 1);
    // Twice the midpoint is s × 2^k1 (k2 is k1 or, across a power of two, k1 + 1).
    let s = m1 + (m2 << (k2 - k1));
    let mut l = x.clone();
    l.mul_add(2, 0);
    let mut r = Big(vec![s as u32, (s >> 32) as u32]);
    r.trim();
    if exp10 >= 0 {
        l.mul_pow5(exp10);
    } else {
        r.mul_pow5(-exp10);
    }
    // Now l × 2^exp10 against r × 2^k1.
    let d = exp10 - k1;
    if d >= 0 {
        l.shl(d)
    } else {
        r.shl(-d)
    }
    l.cmp(&r)
}

/// The f64 of `bits` (positive) as m × 2^k.
fn parts(bits: u64) -> (u64, i64) {
    let (e, frac) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
    if e == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, e - 1075)
    }
}

/// A natural number in base 2^32, lowest limb first, with no zero limb on top.
#[derive(Clone, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    /// self × m + a.
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow5(&mut self, mut e: i64) {
        while e > 0 {
            let k = e.min(13); // 5^13 < 2^32
            self.mul_add(5u32.pow(k as u32), 0);
            e -= k;
        }
    }

    fn shl(&mut self, bits: i64) {
        if bits % 32 > 0 {
            self.mul_add(1 << (bits % 32), 0);
        }
        let limbs = (bits / 32) as usize;
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0.len().cmp(&other.0.len()))
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(text: &str) {
        let want: f64 = text.parse().unwrap();
        let got = nearest_f64(text);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{text}: {got:e} against std's {want:e}"
        );
    }

    #[test]
    fn hard_cases_round_as_std_does() {
        let max_midpoint = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
        let long = &format!("0.{}1", "0".repeat(900));
        let tie = &format!("1.{}5e-1", "0".repeat(1000));
        for t in [
            "0",
            "-0.0",
            "+0e5",
            "0.1",
            "1.5",
            "1e23",
            "8.5e-1",
            "1e3",
            "12345678901234567890.5",
            "9007199254740993",
            "9007199254740995",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1e-400",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e400",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "0.000000000000000000000000000000000000001e39",
            max_midpoint,
            long,
            tie,
            "1.0000000000000000001",
            "7.2057594037927933e16",
            "3.0517578125e-5",
        ] {
            same(t);
        }
    }

    proptest! {
        #[test]
        fn every_f64_written_shortest_or_long_reads_back(bits in any::<u64>()) {
            let f = f64::from_bits(bits);
            prop_assume!(f.is_finite());
            for t in [format!("{f:e}"), format!("{f:.25e}"), format!("{f:.40e}"), format!("{f}")] {
                same(&t);
            }
        }

        #[test]
        fn any_decimal_rounds_as_std_does(
            int in "[0-9]{1,30}", frac in "[0-9]{0,30}", exp in -400i32..400,
        ) {
            same(&format!("{int}.{frac}e{exp}"));
            same(&format!("{int}e{exp}"));
        }
    }
}
