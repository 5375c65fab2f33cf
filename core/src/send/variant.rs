//! What differs between the three tcp_sendmsg variants, as data: how a new skb's head is
//! allocated and how much linear room it gets, and the few rules the copy loop consults.
//! The loop itself ([`super::sock`]) is shared.

use crate::consts::{Era, KernelConsts};
use crate::names::names;
use crate::skb::{skb_truesize, SkbHead, SIZEOF_SK_BUFF_2_6_33};

/// The three tcp_sendmsg variants of seed 000.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// tcp_sendmsg in 2.6.33 before the patch: `select_size` sizes the linear area, data
    /// fills it first, a non-SG route never gets frags.
    #[default]
    Pre2010,
    /// Krishna Kumar's RFC patch (January 2010; not merged as posted):
    /// `sk_stream_alloc_skb(sk, 0, ...)`, all payload in page frags on every device; non-SG
    /// devices pay `skb_linearize` in the driver path. Its `-` lines are net-next of January
    /// 2010, the tree that became 2.6.34 (`select_size(struct sock *sk, int sg)`; 2.6.33 has
    /// `select_size(struct sock *sk)` and reads NETIF_F_SG from `sk_route_caps` itself, the
    /// same rule). Both variants use 2.6.33's constants, the last release before the seed:
    /// 2.6.34 also dropped `dma_head`/`dma_maps` from `skb_shared_info` (344 bytes, aligned
    /// 384: pgbreak 3408, `consts.shinfo_size = 344`); we found nothing dating that removal
    /// before the seed.
    Kumar2010,
    /// tcp_sendmsg_locked (v6.12): `tcp_stream_alloc_skb`, the socket page frag refilled by
    /// `skb_page_frag_refill` (32 KiB), `sysctl_max_skb_frags`, MSG_EOR.
    Modern,
}

names!(Variant, "variant", {
    Pre2010 => "pre-2010",
    Kumar2010 => "kumar-2010",
    Modern => "modern",
});

/// `pre-2010` (select_size), `kumar-2010` (no linear data), `modern` (tcp_sendmsg_locked).
pub const VARIANTS: &[&str] = Variant::NAMES;

impl Variant {
    /// Today's tcp_sendmsg_locked.
    pub const TODAY: Variant = Variant::Modern;

    /// The kernel whose constants the variant runs against.
    pub fn era(self) -> Era {
        match self {
            Variant::Pre2010 | Variant::Kumar2010 => Era::V2_6_33,
            Variant::Modern => Era::V6_12,
        }
    }

    /// Bytes of linear room a new skb asks for. Pre-2010 is `select_size` (tcp.c, 2.6.33,
    /// the code the seed removes): the MSS; on an SG route 0 when the socket can do GSO, else
    /// `pgbreak` = SKB_MAX_HEAD(MAX_TCP_HEADER) when the MSS lies between pgbreak and
    /// pgbreak + (MAX_SKB_FRAGS - 1) pages. After the patch every new skb asks for 0.
    pub fn linear_room(self, k: &KernelConsts, mss: u32, sg: bool, gso: bool) -> u32 {
        if self != Variant::Pre2010 {
            return 0;
        }
        if !sg {
            return mss;
        }
        if gso {
            return 0;
        }
        let pgbreak = pgbreak(k);
        if mss >= pgbreak && mss <= pgbreak + (k.max_skb_frags - 1) * k.page_size {
            pgbreak
        } else {
            mss
        }
    }

    /// The head of a new skb with `size` bytes of linear room.
    ///
    /// 2.6.33 `sk_stream_alloc_skb`: `size = ALIGN(size, 4)`, `alloc_skb_fclone(size +
    /// max_header)`; `__alloc_skb` kmallocs `SKB_DATA_ALIGN(size) + sizeof(shinfo)` and
    /// charges `truesize = SKB_DATA_ALIGN(size) + sizeof(struct sk_buff)`; then
    /// `skb_reserve(skb, skb_tailroom(skb) - size)` leaves exactly `size` of tailroom.
    ///
    /// v6.12 `tcp_stream_alloc_skb`: `alloc_skb_fclone(MAX_TCP_HEADER)` takes its head from
    /// the small-head cache (SKB_HEAD_ALIGN(MAX_TCP_HEADER) = 640 bytes), `skb_reserve`s
    /// MAX_TCP_HEADER and charges `SKB_TRUESIZE(skb_end_offset(skb))`.
    pub fn new_skb_head(self, k: &KernelConsts, size: u32) -> SkbHead {
        match self {
            Variant::Pre2010 | Variant::Kumar2010 => {
                let size = size.next_multiple_of(4);
                let end = k.skb_data_align(size + k.max_tcp_header);
                SkbHead {
                    headroom: end - size,
                    tailroom: size,
                    head_bytes: self.head_alloc(k, end),
                    truesize: end + SIZEOF_SK_BUFF_2_6_33,
                }
            }
            Variant::Modern => {
                let end = k.skb_data_align(k.max_tcp_header);
                SkbHead {
                    headroom: k.max_tcp_header,
                    tailroom: end - k.max_tcp_header,
                    head_bytes: self.head_alloc(k, end),
                    truesize: skb_truesize(k, end),
                }
            }
        }
    }

    /// The kmalloc request for a head whose data area ends `end` bytes in: 2.6.33 adds the
    /// raw sizeof(struct skb_shared_info); today's `SKB_HEAD_ALIGN` aligns it too. (Slab
    /// rounding of the request is not modelled.)
    pub fn head_alloc(self, k: &KernelConsts, end: u32) -> u32 {
        let end = k.skb_data_align(end);
        match self {
            Variant::Pre2010 | Variant::Kumar2010 => end + k.shinfo_size,
            Variant::Modern => end + k.skb_data_align(k.shinfo_size),
        }
    }

    /// Data goes to linear tailroom before page frags (pre-2010 only: the patch removed the
    /// `skb_tailroom(skb) > 0` branch, and tcp_sendmsg_locked has none).
    pub fn linear_first(self) -> bool {
        self == Variant::Pre2010
    }

    /// Pre-2010 refuses to add a frag on a non-SG route (`i == MAX_SKB_FRAGS || !sg`).
    pub fn frags_need_sg(self) -> bool {
        self == Variant::Pre2010
    }

    /// 2.6.33: a tail skb without checksum offload (CHECKSUM_NONE) grows only to the MSS;
    /// today every TCP skb is CHECKSUM_PARTIAL.
    pub fn csum_none_caps_at_mss(self) -> bool {
        self != Variant::Modern
    }

    /// tcp_sendmsg_locked honours MSG_EOR (`tcp_skb_can_collapse_to`); 2.6.33 had no EOR.
    pub fn honours_eor(self) -> bool {
        self == Variant::Modern
    }

    /// How a pass of the copy loop reads the iovecs. tcp_sendmsg in 2.6.33 and 2.6.34
    /// (net/ipv4/tcp.c) walks them one at a time (`while (--iovlen >= 0)`, then `while (seglen > 0)`), so a
    /// pass copies at most the rest of one iovec; tcp_sendmsg_locked (v6.12) copies from
    /// the `iov_iter` as one stream (`msg_data_left`), so a pass may cross iovecs where the
    /// old loop stopped at every iovec's end. The old loop's next pass grows the same frag
    /// (skb_can_coalesce); it takes a new page only when TCP_OFF reached PAGE_SIZE, never
    /// because an iovec ended.
    pub fn copies_iov_as_one_stream(self) -> bool {
        self == Variant::Modern
    }

    /// Frags are copied into the task's page frag (`sk_page_frag`, refilled by
    /// `skb_page_frag_refill`); 2.6.33 keeps the socket's own TCP_PAGE/TCP_OFF.
    pub fn uses_task_frag(self) -> bool {
        self == Variant::Modern
    }

    /// The page-frag cursor's name in the trace.
    pub fn cursor_name(self) -> &'static str {
        match self {
            Variant::Pre2010 | Variant::Kumar2010 => "TCP_PAGE",
            Variant::Modern => "task_frag",
        }
    }
}

/// `pgbreak` in `select_size`: SKB_MAX_HEAD(MAX_TCP_HEADER), the largest linear area whose
/// kmalloc'ed head (headroom, data, shared info) still fits one page: 3280 in 2.6.33.
pub fn pgbreak(k: &KernelConsts) -> u32 {
    k.skb_max_head(k.max_tcp_header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
        }
        let e = "kumar-2011".parse::<Variant>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown variant `kumar-2011`: expected one of pre-2010, kumar-2010, modern"
        );
    }

    #[test]
    fn select_size_rules() {
        let k = Era::V2_6_33.consts();
        let v = Variant::Pre2010;
        assert_eq!(v.linear_room(&k, 1448, true, true), 0, "GSO -> 0");
        assert_eq!(v.linear_room(&k, 1448, true, false), 1448, "below pgbreak");
        assert_eq!(
            v.linear_room(&k, 8948, true, false),
            3280,
            "jumbo -> pgbreak"
        );
        assert_eq!(v.linear_room(&k, 8948, false, false), 8948, "non-SG -> mss");
        assert_eq!(Variant::Kumar2010.linear_room(&k, 1448, false, false), 0);
    }

    #[test]
    fn head_geometry() {
        // 2.6.33, size 0: SKB_DATA_ALIGN(304) = 320, kmalloc(320 + 496), truesize 320 + 232.
        let k = Era::V2_6_33.consts();
        let h = Variant::Kumar2010.new_skb_head(&k, 0);
        assert_eq!(
            (h.headroom, h.tailroom, h.head_bytes, h.truesize),
            (320, 0, 816, 552)
        );
        // size 1448: SKB_DATA_ALIGN(1752) = 1792, headroom 344.
        let h = Variant::Pre2010.new_skb_head(&k, 1448);
        assert_eq!((h.headroom, h.tailroom, h.head_bytes), (344, 1448, 2288));
        // v6.12: small head cache 640, headroom 320, truesize 320 + 256 + 320.
        let k = Era::V6_12.consts();
        let h = Variant::Modern.new_skb_head(&k, 0);
        assert_eq!(
            (h.headroom, h.tailroom, h.head_bytes, h.truesize),
            (320, 0, 640, 896)
        );
    }
}
