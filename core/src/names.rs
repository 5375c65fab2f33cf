//! Names of the model's choices (variants, eras) from one table per type: see [`names!`].

/// Gives a unit enum its names from one table: `ALL` and `NAMES` in table order, `name()`,
/// `Display`, and `FromStr`, whose error (`unknown WHAT`) lists the names.
macro_rules! names {
    ($ty:ident, $what:literal, { $($value:ident => $name:literal),* $(,)? }) => {
        impl $ty {
            /// Every value, in the order of [`Self::NAMES`].
            pub const ALL: &'static [$ty] = &[$($ty::$value),*];
            /// Every name, as scenarios and traces spell it.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$value => $name),*
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::Error;

            fn from_str(s: &str) -> Result<$ty, $crate::Error> {
                match s {
                    $($name => Ok($ty::$value),)*
                    _ => Err($crate::Error::Unknown {
                        what: $what,
                        name: s.to_string(),
                        expected: $ty::NAMES.join(", "),
                    }),
                }
            }
        }
    };
}
pub(crate) use names;

/// The name of `names` nearest to `name`, a misspelling of it (at most a third of its letters
/// wrong, and at least one of them right), for a "did you mean" in an error.
pub fn nearest<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = name.chars().count().div_ceil(3);
    let far = |n: &str| edits(name, n);
    let best = names.into_iter().min_by_key(|n| far(n))?;
    (far(best) <= most).then_some(best)
}

/// The edit distance of `a` and `b`: the fewest letters to insert, delete or replace to turn
/// one into the other (Levenshtein's, one row at a time).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_a_misspelling_of_it() {
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "abc"), 3);
        let names = ["pages_reused", "pages_allocated", "pages_freed"];
        assert_eq!(nearest("pages_reuse", names), Some("pages_reused"));
        assert_eq!(nearest("page_freed", names), Some("pages_freed"));
        assert_eq!(nearest("pgaes_allocated", names), Some("pages_allocated"));
        assert_eq!(nearest("skbs", names), None);
        assert_eq!(nearest("x", names), None);
        assert_eq!(nearest("pages_reused", []), None);
    }
}
