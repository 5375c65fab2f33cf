//! Kernel constants, per era, with their derivations.
//!
//! Every variant runs against the constants of the kernel it models. A scenario may override
//! any of them (`[consts]` table); the resolved set is echoed in the trace so a reader can see
//! exactly which numbers produced a layout. Sources and derivations: `docs/kernel-constants.md`
//! (x86_64, 4 KiB pages, a distro-like config).

use crate::names::names;
use serde::{Deserialize, Serialize};

/// The kernel release whose constants a variant uses; traces spell it `v6.12`. Ordered by
/// release, oldest first (a host puts the older kernel on the left, "before").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Era {
    /// v2.6.33, the release seed 000 was posted against (values read in 2.6.32 sources and
    /// checked in the 2.6.33 tree).
    V2_6_33,
    /// v3.5, the release seed 001 patched.
    V3_5,
    /// v3.6, the first release with seed 001, in a revised form (`pagecnt_bias`, counting
    /// up); its constants are v3.5's (read in the 3.6 tree: NET_SKB_PAD `max(32,
    /// L1_CACHE_BYTES)`, MAX_SKB_FRAGS `65536/PAGE_SIZE + 1`, the same 320-byte shared info).
    V3_6,
    /// 5.2-rc1: net-next of March 2019, which seed 002 patched (after v5.1-rc1, so no v5.1
    /// release had the rx skb cache; 5.2 final put it behind a sysctl, default off).
    V5_2Rc1,
    /// v5.10, the release before seed 003's tree. No variant runs on it since issue 36 (the
    /// MPTCP code the model follows, tcp_build_frag's, is not in v5.10); kept so a trace
    /// written before still reads.
    V5_10,
    /// 5.11-rc1: the first tag with seed 003 (commit 15e6ca974b14 reached mainline with the
    /// net-next merge of 15 December 2020; v5.11-rc1 is 5c8fe583cce5, 27 December 2020), the
    /// net-next code of November 2020 both MPTCP lanes follow. Its constants are v5.10's and
    /// v5.11's, which agree (read in the v5.11 tree: MAX_SKB_FRAGS `65536/PAGE_SIZE + 1`,
    /// MAX_TCP_HEADER `L1_CACHE_ALIGN(128 + MAX_HEADER)`, the 320-byte shared info, NET_SKB_PAD
    /// `max(32, L1_CACHE_BYTES)`, SKB_FRAG_PAGE_ORDER `get_order(32768)`).
    V5_11Rc1,
    /// v6.12+, today's kernels.
    V6_12,
}

names!(Era, "era", {
    V2_6_33 => "v2.6.33",
    V3_5 => "v3.5",
    V3_6 => "v3.6",
    V5_2Rc1 => "v5.2-rc1",
    V5_10 => "v5.10",
    V5_11Rc1 => "v5.11-rc1",
    V6_12 => "v6.12",
});

impl Serialize for Era {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Era {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Era, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Header bytes on the wire, the same in every era: Ethernet, IPv4 without options, TCP
/// with the timestamp option (every segment of a connection that negotiated it), UDP.
pub mod wire {
    /// ETH_HLEN.
    pub const ETH_HLEN: u32 = 14;
    /// sizeof(struct iphdr).
    pub const IPV4_HLEN: u32 = 20;
    /// sizeof(struct tcphdr) 20 + TCPOLEN_TSTAMP_ALIGNED 12.
    pub const TCP_TS_HLEN: u32 = 32;
    /// sizeof(struct udphdr).
    pub const UDP_HLEN: u32 = 8;
    /// sizeof(struct tcphdr), without options.
    pub const TCP_HLEN: u32 = 20;
    /// TCPOLEN_TSTAMP_ALIGNED (include/net/tcp.h): the timestamp option with its two NOPs.
    pub const TCPOLEN_TSTAMP_ALIGNED: u32 = TCP_TS_HLEN - TCP_HLEN;
    /// IP_MAX_MTU (include/net/ip.h) = IPV4_MAX_PMTU: the 16-bit total length of a datagram.
    pub const IP_MAX_MTU: u32 = 65_535;

    /// The TCP header of every segment: with the timestamp option (`timestamps`) or bare.
    pub const fn tcp_hlen(timestamps: bool) -> u32 {
        if timestamps {
            TCP_TS_HLEN
        } else {
            TCP_HLEN
        }
    }

    /// Where a TCP frame's TCP header starts (`skb_transport_offset`): after Ethernet and
    /// IPv4, the checksum's start for CHECKSUM_PARTIAL.
    pub const fn transport_offset() -> u32 {
        ETH_HLEN + IPV4_HLEN
    }

    /// Header bytes in front of a TCPv4 frame's payload: Ethernet, IPv4, TCP (with the
    /// timestamp option when `timestamps`); a virtio-net header's `hdr_len` counts these.
    pub const fn hdr_len(timestamps: bool) -> u32 {
        transport_offset() + tcp_hlen(timestamps)
    }

    /// The largest TCPv4 payload one datagram carries (a GSO super-packet's limit):
    /// IP_MAX_MTU less the IPv4 and TCP headers.
    pub const fn max_payload(timestamps: bool) -> u32 {
        IP_MAX_MTU - IPV4_HLEN - tcp_hlen(timestamps)
    }

    /// The MSS a peer offers on a link of `mtu` bytes: `ipv4_default_advmss`
    /// (net/ipv4/route.c, v6.12): the MTU less sizeof(struct iphdr) and sizeof(struct
    /// tcphdr), at most IPV4_MAX_PMTU less them. Its floor, the route's `min_adv_mss` (256),
    /// is left out: a peer on the TAP offers what the link carries.
    pub const fn advmss(mtu: u32) -> u32 {
        let header_size = IPV4_HLEN + TCP_HLEN;
        let advmss = mtu.saturating_sub(header_size);
        let max = IP_MAX_MTU - header_size;
        if advmss < max {
            advmss
        } else {
            max
        }
    }

    /// The MSS option a peer must send for the kernel's `mss_now` to be `mss`:
    /// `__tcp_mtu_to_mss` clamps to the option (`mss_clamp`, which counts no options) and
    /// `tcp_mtu_to_mss` then takes the options every segment carries (`tcp_header_len -
    /// sizeof(struct tcphdr)`: TCPOLEN_TSTAMP_ALIGNED with timestamps) out of it
    /// (net/ipv4/tcp_output.c, v6.12).
    pub const fn mss_option(mss: u32, timestamps: bool) -> u32 {
        mss + tcp_hlen(timestamps) - TCP_HLEN
    }

    /// The payload per segment a sender settles on from the peer's MSS `option`, the
    /// inverse of [`mss_option`]: the options every segment carries taken out
    /// (`tcp_mtu_to_mss`), never below 0 (an option smaller than the timestamp option).
    pub const fn mss_now(option: u32, timestamps: bool) -> u32 {
        option.saturating_sub(tcp_hlen(timestamps) - TCP_HLEN)
    }
}

/// What MAX_TCP_HEADER (`L1_CACHE_ALIGN(128 + MAX_HEADER)`, include/net/tcp.h) is on the
/// kernels of today a run may meet: MAX_HEADER is LL_MAX_HEADER (32, 96 or 128 by config)
/// plus 48 with IP tunnels, so 192 (no CONFIG_WLAN, no tunnels), 256 or 320 (the model's).
pub(crate) const MAX_TCP_HEADERS: [u32; 3] = [192, 256, 320];

/// The constants the model reads. Field names are the kernel's, lower-cased.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelConsts {
    /// PAGE_SIZE: `1 << PAGE_SHIFT`, PAGE_SHIFT = 12 on x86_64.
    pub page_size: u32,
    /// MAX_SKB_FRAGS: `65536/PAGE_SIZE + 2` = 18 in 2.6.33, `+ 1` = 17 from ~3.1,
    /// CONFIG_MAX_SKB_FRAGS (17..=45, default 17) since v6.4 ("net: introduce a config
    /// option to tweak MAX_SKB_FRAGS", net-next of March 2023; v6.4's net/Kconfig and
    /// skbuff.h have it, 6.3's do not: docs/kernel-constants.md).
    pub max_skb_frags: u32,
    /// MAX_TCP_HEADER: `128 + MAX_HEADER` = 304 (MAX_HEADER = LL_MAX_HEADER 128 + 48 for
    /// tunnels); `L1_CACHE_ALIGN(128 + MAX_HEADER)` = 320 since 5.7.
    pub max_tcp_header: u32,
    /// sizeof(struct skb_shared_info): 496 in 2.6.33 (dma_head and dma_maps[18] under
    /// CONFIG_HAS_DMA, still there in 2.6.33's skbuff.h), 320 from ~3.3 on.
    pub shinfo_size: u32,
    /// SMP_CACHE_BYTES = L1_CACHE_BYTES = 64 (CONFIG_X86_L1_CACHE_SHIFT 6).
    pub smp_cache_bytes: u32,
    /// NET_SKB_PAD: 32 in 2.6.33, `max(32, L1_CACHE_BYTES)` = 64 from ~3.x.
    pub net_skb_pad: u32,
    /// NET_IP_ALIGN: 2 in 2.6.33, 0 on x86 later.
    pub net_ip_align: u32,
    /// GSO_MAX_SIZE (GSO_LEGACY_MAX_SIZE today): 65536, the device's default sk_gso_max_size.
    pub gso_max_size: u32,
    /// SKB_FRAG_PAGE_ORDER: `get_order(32768)` = 3 (32 KiB socket page frags, since ~3.7);
    /// 0 where the era has no compound socket pages.
    pub skb_frag_page_order: u32,
}

impl Era {
    /// The default constants of this era (see the field docs for each value's source).
    pub const fn consts(self) -> KernelConsts {
        let (max_skb_frags, max_tcp_header, shinfo_size, net_skb_pad, net_ip_align, order) =
            match self {
                Era::V2_6_33 => (18, 304, 496, 32, 2, 0),
                Era::V3_5 | Era::V3_6 => (17, 304, 320, 64, 0, 0),
                Era::V5_2Rc1 => (17, 304, 320, 64, 0, 3),
                Era::V5_10 | Era::V5_11Rc1 => (17, 320, 320, 64, 0, 3),
                Era::V6_12 => (17, 320, 320, 64, 0, 3),
            };
        KernelConsts {
            page_size: 4096,
            max_skb_frags,
            max_tcp_header,
            shinfo_size,
            smp_cache_bytes: 64,
            net_skb_pad,
            net_ip_align,
            gso_max_size: 65536,
            skb_frag_page_order: order,
        }
    }
}

/// A scenario's `[consts]` table: any constant may be overridden.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstOverrides {
    pub max_skb_frags: Option<u32>,
    pub max_tcp_header: Option<u32>,
    pub shinfo_size: Option<u32>,
    pub net_skb_pad: Option<u32>,
    pub gso_max_size: Option<u32>,
    pub skb_frag_page_order: Option<u32>,
}

impl ConstOverrides {
    pub fn is_empty(&self) -> bool {
        *self == ConstOverrides::default()
    }

    /// Applies the overrides, checking each against its allowed range.
    pub fn apply(&self, mut c: KernelConsts) -> Result<KernelConsts, crate::Error> {
        use crate::limits::check_range;
        if let Some(v) = self.max_skb_frags {
            c.max_skb_frags = check_range("consts.max_skb_frags", v as u64, 1, 64)? as u32;
        }
        if let Some(v) = self.max_tcp_header {
            c.max_tcp_header = check_range("consts.max_tcp_header", v as u64, 0, 1024)? as u32;
        }
        if let Some(v) = self.shinfo_size {
            c.shinfo_size = check_range("consts.shinfo_size", v as u64, 0, 2048)? as u32;
        }
        if let Some(v) = self.net_skb_pad {
            c.net_skb_pad = check_range("consts.net_skb_pad", v as u64, 0, 256)? as u32;
        }
        if let Some(v) = self.gso_max_size {
            c.gso_max_size = check_range("consts.gso_max_size", v as u64, 1024, 524_280)? as u32;
        }
        if let Some(v) = self.skb_frag_page_order {
            c.skb_frag_page_order =
                check_range("consts.skb_frag_page_order", v as u64, 0, 4)? as u32;
        }
        Ok(c)
    }
}

impl KernelConsts {
    /// SKB_DATA_ALIGN(x): round up to SMP_CACHE_BYTES.
    pub const fn skb_data_align(&self, x: u32) -> u32 {
        let a = self.smp_cache_bytes;
        (x + a - 1) & !(a - 1)
    }

    /// SKB_WITH_OVERHEAD(x): what is left of `x` bytes once the aligned shared info is taken.
    pub const fn skb_with_overhead(&self, x: u32) -> u32 {
        x.saturating_sub(self.skb_data_align(self.shinfo_size))
    }

    /// SKB_MAX_HEAD(x) = SKB_MAX_ORDER(x, 0): the largest linear area that, with `x` bytes of
    /// headroom, keeps the whole kmalloc'ed head within one page.
    pub const fn skb_max_head(&self, x: u32) -> u32 {
        self.skb_with_overhead(self.page_size.saturating_sub(x))
    }

    /// Bytes in a (compound) page of the given order.
    pub const fn page_bytes(&self, order: u32) -> u32 {
        self.page_size << order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2.6.33's skb_shared_info, field by field on x86_64: dataref 4, nr_frags 2, gso_size 2,
    /// dma_head 8, gso_segs 2, gso_type 2, ip6_frag_id 4, tx_flags 1 (+7 padding before the
    /// pointer), frag_list 8, hwtstamps 16, frags[18] x 16, dma_maps[18] x 8, destructor_arg 8.
    #[test]
    fn shinfo_2_6_33_is_496() {
        let fields = 4 + 2 + 2 + 8 + 2 + 2 + 4 + 8 + 8 + 16 + 18 * 16 + 18 * 8 + 8;
        assert_eq!(Era::V2_6_33.consts().shinfo_size, fields);
        assert_eq!(fields, 496);
    }

    #[test]
    fn eras_serialize_by_name() {
        for &era in Era::ALL {
            let json = serde_json::to_string(&era).unwrap();
            assert_eq!(json, format!("\"{era}\""));
            assert_eq!(serde_json::from_str::<Era>(&json).unwrap(), era);
        }
        assert!(serde_json::from_str::<Era>("\"v4.0\"").is_err());
    }

    #[test]
    fn pgbreak_2_6_33_is_3280() {
        // (4096 - 304) - SKB_DATA_ALIGN(496) = 3792 - 512 = 3280.
        assert_eq!(Era::V2_6_33.consts().skb_max_head(304), 3280);
    }

    #[test]
    fn skb_data_align_rounds_to_cache_line() {
        let c = Era::V6_12.consts();
        assert_eq!(c.skb_data_align(1), 64);
        assert_eq!(c.skb_data_align(64), 64);
        assert_eq!(c.skb_data_align(320), 320);
        assert_eq!(c.skb_data_align(496), 512);
    }

    /// The header arithmetic of a 1500-byte Ethernet link, as tcpdump shows it: a full
    /// segment with timestamps is 1514 bytes on the wire, 66 of them headers.
    #[test]
    fn wire_arithmetic_of_a_1500_byte_link() {
        use wire::*;
        assert_eq!(advmss(1500), 1460);
        assert_eq!(advmss(u32::MAX), 65_495);
        assert_eq!(mss_option(1448, true), 1460);
        assert_eq!(mss_option(1460, false), 1460);
        assert_eq!(mss_now(1460, true), 1448);
        assert_eq!(mss_now(1460, false), 1460);
        assert_eq!(mss_now(11, true), 0);
        assert_eq!(hdr_len(true), 66);
        assert_eq!(hdr_len(false), 54);
        assert_eq!(hdr_len(true) + 1448, 1514);
        assert_eq!(transport_offset(), 34);
        assert_eq!(max_payload(true), 65_483);
        assert_eq!(TCPOLEN_TSTAMP_ALIGNED, 12);
    }
}
