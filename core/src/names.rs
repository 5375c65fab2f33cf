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
