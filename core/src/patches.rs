//! The four patches skblab models, cited: who posted each, where, and the commit that merged
//! it with the release it first shipped in (or, where it never merged as posted, the post
//! itself and where its revised form lives). Seeds are in /work/shared/seeds/ upstream of this
//! repository; each carries the patchwork id and message id cited here.

/// One patch: a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The seed's number, `000` to `003`.
    pub seed: &'static str,
    /// The mechanism that models it.
    pub mechanism: &'static str,
    /// The variant names that stand for the patch (a walkthrough showing one cites it).
    pub variants: &'static [&'static str],
    pub author: &'static str,
    pub year: u16,
    pub subject: &'static str,
    /// Where the post is archived: patchwork's id, or the lore message id.
    pub posted: &'static str,
    /// The merge commit and the first release that has it, or `None` where the post never
    /// merged as posted.
    pub merged: Option<(&'static str, &'static str)>,
    /// What became of it, where that is not a merge of the post.
    pub fate: Option<&'static str>,
    /// The commit that shipped it revised, where the post never merged as posted.
    pub shipped: Option<Commit>,
    /// The event kinds (trace names) where the patch shows, its key moments: the events it
    /// adds, or whose number it changes. A host never hides one.
    pub moments: &'static [&'static str],
}

/// The four seeds, in order. Commits read in public trees' logs and the netdev bot's merge
/// notices; docs/mechanisms.md tells each story.
pub(crate) const PATCHES: &[Patch] = &[
    Patch {
        seed: "000",
        mechanism: "sendmsg",
        variants: &["kumar-2010"],
        author: "Krishna Kumar",
        year: 2010,
        subject: "[RFC] [PATCH] Optimize TCP sendmsg in favour of fast devices?",
        posted: "https://patchwork.ozlabs.org/patch/42944/",
        merged: None,
        fate: Some("an RFC, never merged as posted"),
        shipped: None,
        // It adds no kind of event: the bytes the kernel before copied into the linear area
        // (copy_to_linear) go to page frags (copy_to_page), which both kernels make.
        moments: &[],
    },
    Patch {
        seed: "001",
        mechanism: "rx",
        variants: &["duyck-2012", "duyck-3.6"],
        author: "Alexander Duyck",
        year: 2012,
        subject: "net: Update netdev_alloc_frag to work more efficiently with TCP and GRO",
        posted: "https://patchwork.ozlabs.org/patch/165868/",
        merged: None,
        fate: Some("shipped revised in v3.6 as __netdev_alloc_frag with pagecnt_bias"),
        shipped: Some(SHIPPED_3_6),
        moments: &["reuse_page"],
    },
    Patch {
        seed: "002",
        mechanism: "rx",
        variants: &["dumazet-2019"],
        author: "Eric Dumazet",
        year: 2019,
        subject: "tcp: add one skb cache for rx",
        posted: "https://lore.kernel.org/netdev/20190322155640.248144-4-edumazet@google.com/",
        merged: Some(("8b27dae5a2e89a61c46c6dbc76c040c0e6d0ed4c", "v5.2")),
        fate: None,
        shipped: None,
        // And skb_attempt_defer_free's, which took its place (v5.17, modelled as defer-free).
        moments: &[
            "rx_cache_park",
            "rx_cache_take",
            "defer_free",
            "defer_kick",
            "defer_flush",
        ],
    },
    Patch {
        seed: "003",
        mechanism: "mptcp",
        variants: &["abeni-2020"],
        author: "Paolo Abeni",
        year: 2020,
        subject: "mptcp: let MPTCP create max size skbs",
        posted: "https://lore.kernel.org/all/d5c7935a21f20d37900cd51fc0f1f88327a0dfdd.1606406237.git.pabeni@redhat.com/",
        merged: Some(("15e6ca974b14c2dc4221738ef81b23ef694c9160", "v5.11")),
        fate: None,
        shipped: None,
        // The tail skb grown past half the size goal: its DSS mapping extended.
        moments: &["extend_mapping"],
    },
];

/// A mainline commit cited: its id, the first release that has it, who wrote it, when, and
/// its subject line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit {
    pub id: &'static str,
    pub release: &'static str,
    pub author: &'static str,
    pub year: u16,
    pub subject: &'static str,
}

/// A commit of mainline on git.kernel.org.
fn commit_url(id: &str) -> String {
    format!("https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id={id}")
}

impl Commit {
    /// The citation without its address, and the address: `Alexander Duyck, 2012, "net:
    /// …": commit 540eb7bf0bbe, in v3.6`.
    pub fn cited(&self) -> (String, String) {
        let (id, release, author, year, subject) =
            (self.id, self.release, self.author, self.year, self.subject);
        let text = format!(
            "{author}, {year}, \"{subject}\": commit {}, in {release}",
            &id[..12]
        );
        (text, commit_url(id))
    }
}

impl Patch {
    /// Where to read it: the merge commit on git.kernel.org, else the post.
    pub fn link(&self) -> (String, String) {
        match self.merged {
            Some((commit, release)) => (
                format!("commit {}, in {release}", &commit[..12]),
                commit_url(commit),
            ),
            None => ("the post".to_string(), self.posted.to_string()),
        }
    }

    /// The citation without the post's or the merge's address, and that address: `seed 002,
    /// Eric Dumazet, 2019, "tcp: add one skb cache for rx": commit 8b27dae5a2e8, in v5.2`.
    pub fn cited(&self) -> (String, String) {
        let (label, url) = self.link();
        let fate = self.fate.map(|f| format!(" ({f})")).unwrap_or_default();
        let (seed, author, year, subject) = (self.seed, self.author, self.year, self.subject);
        let text = format!("seed {seed}, {author}, {year}, \"{subject}\"{fate}: {label}");
        (text, url)
    }

    /// A heading for the walkthroughs about it: `seed 001 · Alexander Duyck, 2012`.
    pub fn heading(&self) -> String {
        format!("seed {} · {}, {}", self.seed, self.author, self.year)
    }

    /// One line: [`Patch::cited`] with its address, then the commit that shipped it revised.
    pub fn cite(&self) -> String {
        let (text, url) = self.cited();
        let shipped = (self.shipped.iter())
            .map(|c| format!("; as shipped: {} {}", c.cited().0, c.cited().1))
            .collect::<String>();
        format!("{text} {url}{shipped}")
    }
}

/// Seed 001 as v3.6 shipped it (variant `duyck-3.6`): `__netdev_alloc_frag` keeps the
/// references it has not handed out in pagecnt_bias, and starts a page over once every
/// fragment came back.
const SHIPPED_3_6: Commit = Commit {
    id: "540eb7bf0bbedb65277d68ab89ae43cdec3fd6ba",
    release: "v3.6",
    author: "Alexander Duyck",
    year: 2012,
    subject: "net: Update alloc frag to reduce get/put page usage and recycle pages",
};

/// The commits that made a later variant what skblab models, after its seed's own, per
/// mechanism and variant name: rx's `modern`, today's page_frag_cache, is seed 001's scheme
/// as v3.6 shipped it ([`SHIPPED_3_6`]), grown to 32 KiB pages with an order-0 fallback
/// (v3.7), then moved to mm/ as page_frag_cache (v4.2).
pub(crate) const LATER: &[(&str, &str, &[Commit])] = &[(
    "rx",
    "modern",
    &[
        Commit {
            id: "69b08f62e17439ee3d436faf0b9a7ca6fffb78db",
            release: "v3.7",
            author: "Eric Dumazet",
            year: 2012,
            subject: "net: use bigger pages in __netdev_alloc_frag",
        },
        Commit {
            id: "b63ae8ca096dfdbfeef6a209c30a93a966518853",
            release: "v4.2",
            author: "Alexander Duyck",
            year: 2015,
            subject: "mm/net: Rename and move page fragment handling from net/ to mm/",
        },
    ],
)];

/// The commits behind variant `variant` of `mechanism` ([`LATER`]), or none.
pub fn later(mechanism: &str, variant: &str) -> &'static [Commit] {
    (LATER
        .iter()
        .find(|(m, v, _)| *m == mechanism && *v == variant))
    .map_or(&[], |e| e.2)
}

/// The patch of seed `seed` (`000` to `003`), if there is one.
pub(crate) fn by_seed(seed: &str) -> Option<&'static Patch> {
    PATCHES.iter().find(|p| p.seed == seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::Mechanism;
    use crate::{mptcp::MptcpScenario, rx::RxScenario, send::SendScenario};

    #[test]
    fn each_patch_names_its_mechanism_and_real_variants() {
        let known: &[(&str, &[&str])] = &[
            (SendScenario::NAME, SendScenario::VARIANTS),
            (MptcpScenario::NAME, MptcpScenario::VARIANTS),
        ];
        for p in PATCHES {
            if p.mechanism == RxScenario::NAME {
                let axes = [crate::rx::ALLOCATORS, crate::rx::CACHES].concat();
                assert!(p.variants.iter().all(|v| axes.contains(v)), "{p:?}");
                continue;
            }
            let (_, vs) = known
                .iter()
                .find(|(m, _)| *m == p.mechanism)
                .expect("a mechanism");
            assert!(p.variants.iter().all(|v| vs.contains(v)), "{p:?}");
        }
    }

    #[test]
    fn each_moment_is_an_event_kind() {
        for p in PATCHES {
            for m in p.moments {
                assert!(
                    m.parse::<crate::events::EventKind>().is_ok(),
                    "{}: {m}",
                    p.seed
                );
            }
        }
    }

    #[test]
    fn each_seed_has_its_patch() {
        for seed in ["000", "001", "002", "003"] {
            assert_eq!(by_seed(seed).map(|p| p.seed), Some(seed));
        }
        assert!(by_seed("004").is_none());
        let d = PATCHES[2].cite();
        assert!(d.starts_with("seed 002, Eric Dumazet, 2019, \"tcp: add one skb cache for rx\": commit 8b27dae5a2e8, in v5.2 https://git.kernel.org/"), "{d}");
        // Seed 001 never merged as posted: the post, then the commit that shipped it revised.
        assert!(PATCHES[1]
            .cite()
            .contains("https://patchwork.ozlabs.org/patch/165868/; as shipped: "));
        // The post's own subject line (seed 000's header).
        assert!(PATCHES[0]
            .cite()
            .contains("\"[RFC] [PATCH] Optimize TCP sendmsg in favour of fast devices?\""));
    }

    #[test]
    fn seed_001_cites_the_commit_v3_6_shipped_and_modern_the_ones_after() {
        let c = PATCHES[1].cite();
        let want = "; as shipped: Alexander Duyck, 2012, \"net: Update alloc frag to reduce get/put page usage and recycle pages\": commit 540eb7bf0bbe, in v3.6 https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id=540eb7bf0bbedb65277d68ab89ae43cdec3fd6ba";
        assert!(c.ends_with(want), "{c}");
        // Each later variant is a real one, cited in release order after its seed's commit.
        for (mechanism, variant, commits) in LATER {
            assert_eq!(*mechanism, crate::rx::RxScenario::NAME);
            assert!(crate::rx::ALLOCATORS.contains(variant), "{variant}");
            let releases: Vec<&str> = commits.iter().map(|c| c.release).collect();
            assert_eq!(releases, ["v3.7", "v4.2"]);
            assert!(commits.iter().all(|c| c.id.len() == 40), "{commits:?}");
        }
        assert_eq!(later("rx", "modern").len(), 2);
        // Today's tcp_sendmsg is another story: no commit of seed 001's.
        assert!(later("sendmsg", "modern").is_empty());
        assert!(later("rx", "pre-2012").is_empty());
    }

    /// A seed's module names the seed's mainline commit, the one cited here (not a commit of
    /// a subsystem tree that mainline merged under another hash).
    #[test]
    fn each_seed_module_cites_the_mainline_commit() {
        let heads = [
            include_str!("send/mod.rs"),
            include_str!("rx/mod.rs"),
            include_str!("mptcp/mod.rs"),
        ];
        for head in heads.map(|m| m.lines().next().unwrap_or_default()) {
            let cited = head
                .split(|c: char| !c.is_ascii_hexdigit())
                .filter(|w| w.len() >= 12);
            for hash in cited {
                let known = PATCHES
                    .iter()
                    .filter_map(|p| p.merged)
                    .any(|(commit, _)| commit.starts_with(hash));
                assert!(known, "{head}: {hash} is no seed's mainline commit");
            }
        }
    }
}
