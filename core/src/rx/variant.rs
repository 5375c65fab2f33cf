//! The receive side's two variant axes, each named from one table: the allocator (seed 001)
//! and the rx skb cache (seed 002). A variant string names one axis, or both as
//! `ALLOCATOR+CACHE`.

use crate::consts::Era;
use crate::names::names;
use crate::Error;
use std::fmt;
use std::str::FromStr;

/// The allocator axis (seed 001).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocator {
    /// netdev_alloc_frag in v3.5: the offset counts up, a full page is replaced.
    #[default]
    Pre2012,
    /// Seed 001 as posted (June 2012, on v3.5): counts down, reuses the page when its count
    /// is 1. Never released in this form.
    Duyck2012,
    /// Seed 001 as v3.6 shipped it (`__netdev_alloc_frag`): counts up, takes
    /// NETDEV_PAGECNT_BIAS (64) references at refill, reuses the page only once it is used up
    /// and every fragment came back.
    Duyck36,
    /// page_frag_cache in v6.12: 32 KiB pages, pagecnt_bias, reuse at exhaustion.
    Modern,
}

names!(Allocator, "allocator", {
    Pre2012 => "pre-2012",
    Duyck2012 => "duyck-2012",
    Duyck36 => "duyck-3.6",
    Modern => "modern",
});

/// The rx cache axis (seed 002).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RxCache {
    /// recvmsg frees consumed skbs on the application's CPU.
    #[default]
    None,
    /// Seed 002 (net-next of March 2019, merged for 5.2-rc1; 5.2 final put it behind the
    /// sysctl tcp_rx_skb_cache, default off): the per-socket one-skb cache, freed by the next
    /// BH delivery.
    Dumazet2019,
    /// v6.12: skb_attempt_defer_free to the allocating CPU's list.
    DeferFree,
}

names!(RxCache, "cache", {
    None => "none",
    Dumazet2019 => "dumazet-2019",
    DeferFree => "defer-free",
});

/// The allocator axis's names.
pub const ALLOCATORS: &[&str] = Allocator::NAMES;
/// The rx cache axis's names.
pub const CACHES: &[&str] = RxCache::NAMES;
/// Every name a variant string may use (each names one axis; `A+B` names both).
pub const VARIANTS: &[&str] = &concat::<{ ALLOCATORS.len() + CACHES.len() }>(ALLOCATORS, CACHES);

/// `a` then `b`, in a constant.
const fn concat<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// A point on both axes; the default is `pre-2012+none`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    pub alloc: Allocator,
    pub cache: RxCache,
}

impl Variant {
    /// Applies a variant string: one axis name (`duyck-2012`, `dumazet-2019`, ...), which
    /// leaves the other axis as it was, or `ALLOCATOR+CACHE`, each axis named once. Says
    /// whether it named the rx cache axis.
    pub fn set(&mut self, text: &str) -> Result<bool, Error> {
        let names: Vec<&str> = text.split('+').map(str::trim).collect();
        match names[..] {
            [one] => match one.parse() {
                Ok(alloc) => self.alloc = alloc,
                Err(_) => {
                    self.cache = one.parse().map_err(|_| Error::Unknown {
                        what: "variant",
                        name: one.to_string(),
                        expected: format!("{}, or ALLOCATOR+CACHE", VARIANTS.join(", ")),
                    })?;
                    return Ok(true);
                }
            },
            [alloc, cache] => {
                (self.alloc, self.cache) = (alloc.parse()?, cache.parse()?);
                return Ok(true);
            }
            _ => {
                return Err(Error::invalid(
                    "variant",
                    format!(
                        "`{text}` joins {} names: name one axis (one of {}), or both as \
                         ALLOCATOR+CACHE",
                        names.len(),
                        VARIANTS.join(", ")
                    ),
                ))
            }
        }
        Ok(false)
    }

    /// Both axes, as the trace names them: `duyck-2012+dumazet-2019`.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The pairing in words: each axis's patch and kernel, and, where no kernel had both, that
    /// the model puts them together (the constants follow the allocator's kernel).
    pub fn about(&self) -> String {
        use {Allocator::*, RxCache::*};
        let alloc = match self.alloc {
            Pre2012 => "v3.5's netdev_alloc_frag",
            Duyck2012 => "netdev_alloc_frag with Duyck's 2012 page reuse (posted on v3.5)",
            Duyck36 => "v3.6's __netdev_alloc_frag (Duyck's page reuse as it shipped)",
            Modern => "v6.12's page_frag_cache",
        };
        let cache = match self.cache {
            None if self.alloc == Modern => {
                "consumed skbs freed on the reader's CPU (v6.12 UDP; v6.12 TCP only with \
                 net.core.skb_defer_max = 0)"
            }
            None => "consumed skbs freed on the reader's CPU",
            Dumazet2019 => {
                "Dumazet's 2019 per-socket rx skb cache (merged for 5.2, removed in 2021)"
            }
            DeferFree => {
                "deferred freeing to the allocating CPU (skb_attempt_defer_free, since 2022)"
            }
        };
        let apart = match (self.alloc, self.cache) {
            (Pre2012 | Duyck2012 | Duyck36, Dumazet2019 | DeferFree) | (Modern, Dumazet2019) => format!(
                "; no kernel had both: the model puts the {} cache on the {} allocator, with {}'s constants",
                self.cache,
                self.alloc,
                self.era()
            ),
            _ => String::new(),
        };
        format!("{alloc}, with {cache}{apart}")
    }

    /// The constants follow the allocator's kernel: v3.5 (seed 001's base), v3.6 (its first
    /// release) or v6.12.
    pub fn era(&self) -> Era {
        match self.alloc {
            Allocator::Pre2012 | Allocator::Duyck2012 => Era::V3_5,
            Allocator::Duyck36 => Era::V3_6,
            Allocator::Modern => Era::V6_12,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}+{}", self.alloc, self.cache)
    }
}

/// A variant string applied to the default (`pre-2012+none`).
impl FromStr for Variant {
    type Err = Error;

    fn from_str(text: &str) -> Result<Variant, Error> {
        let mut v = Variant::default();
        v.set(text)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_axes_combine() {
        assert_eq!(VARIANTS.len(), 7);
        for &name in VARIANTS {
            assert!(name.parse::<Variant>().is_ok(), "{name}");
        }
        let v: Variant = "duyck-2012+dumazet-2019".parse().unwrap();
        assert_eq!(v.to_string(), "duyck-2012+dumazet-2019");
        let mut w = v;
        w.set("modern").unwrap();
        assert_eq!(w.to_string(), "modern+dumazet-2019");
        assert_eq!(
            w.about(),
            "v6.12's page_frag_cache, with Dumazet's 2019 per-socket rx skb cache (merged for \
             5.2, removed in 2021); no kernel had both: the model puts the dumazet-2019 cache on \
             the modern allocator, with v6.12's constants"
        );
        let shipped: Variant = "pre-2012+none".parse().unwrap();
        assert!(
            !shipped.about().contains("no kernel"),
            "{}",
            shipped.about()
        );
        let e = "duyck-2012+lru".parse::<Variant>().unwrap_err().to_string();
        assert!(e.contains("unknown cache `lru`"), "{e}");
    }
}
