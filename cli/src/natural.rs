//! Natural order: names compared with their runs of digits read as numbers, so `layers.2` comes before
//! `layers.10`, as people count layers.

use std::cmp::Ordering;

/// Compares `a` and `b` piece by piece: a run of ASCII digits against a run of digits by value (then by
/// length, so `01` follows `1`), anything else by character. Equal only when `a == b`, so it is a total order
/// consistent with `==`.
#[must_use]
pub fn cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (dx, rx) = split_digits(x);
                let (dy, ry) = split_digits(y);
                let order = number_cmp(dx, dy).then(dx.len().cmp(&dy.len()));
                if order != Ordering::Equal {
                    return order;
                }
                (x, y) = (rx, ry);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    // Byte order of UTF-8 is code point order.
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    s.split_at(n)
}

/// Two digit runs by value, of any length: without leading zeros, the longer is larger.
fn number_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |s: &[u8]| -> usize { s.iter().take_while(|&&d| d == b'0').count() };
    let (a, b) = (&a[strip(a)..], &b[strip(b)..]);
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layers_are_counted_not_spelled() {
        let mut names = vec!["layers.10.w", "layers.2.w", "layers.1.w", "layers.2.b", "layers.01.w", "emb"];
        names.sort_by(|a, b| cmp(a, b));
        assert_eq!(names, ["emb", "layers.1.w", "layers.01.w", "layers.2.b", "layers.2.w", "layers.10.w"]);
        let huge = "x99999999999999999999999999";
        assert_eq!(cmp(huge, "x100000000000000000000000000"), Ordering::Less);
    }

    proptest! {
        #[test]
        fn a_total_order_consistent_with_equality(a in "[a0-2.]{0,6}", b in "[a0-2.]{0,6}", c in "[a0-2.]{0,6}") {
            prop_assert_eq!(cmp(&a, &b) == Ordering::Equal, a == b);
            prop_assert_eq!(cmp(&a, &b), cmp(&b, &a).reverse());
            if cmp(&a, &b) != Ordering::Greater && cmp(&b, &c) != Ordering::Greater {
                prop_assert_ne!(cmp(&a, &c), Ordering::Greater);
            }
        }
    }
}
