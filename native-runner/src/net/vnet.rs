//! The virtio-net header (`struct virtio_net_hdr_mrg_rxbuf`, 12 bytes, little-endian) that
//! precedes every frame on a TAP opened with IFF_VNET_HDR. It is how a GSO super-packet
//! crosses the TAP in one piece: `gso_type` TCPV4 and `gso_size` = MSS say how the receiver
//! (or the kernel's own GSO layer) would cut it into wire segments.

/// TUNSETVNETHDRSZ: the header with `num_buffers`.
pub const LEN: usize = 12;
/// VIRTIO_NET_HDR_F_NEEDS_CSUM: only the pseudo-header sum is in the checksum field.
pub const F_NEEDS_CSUM: u8 = 1;
/// VIRTIO_NET_HDR_GSO_NONE / _TCPV4.
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    /// Ethernet + IP + TCP header bytes (a hint).
    pub hdr_len: u16,
    /// Payload bytes per wire segment.
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    /// A super-packet of `hdr_len` header bytes cut into `gso_size`-byte segments. The
    /// checksum is complete (flags 0), so the kernel verifies it: a bug cannot hide behind
    /// checksum offload.
    pub fn tcpv4(hdr_len: u16, gso_size: u16) -> VnetHdr {
        VnetHdr {
            gso_type: GSO_TCPV4,
            hdr_len,
            gso_size,
            ..VnetHdr::default()
        }
    }

    /// The same with only the pseudo-header sum filled in: the receiver trusts it
    /// (`csum_start` at the TCP header, `csum_offset` at its checksum field).
    pub fn partial(self, l4_start: u16) -> VnetHdr {
        VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: l4_start,
            csum_offset: super::wire::TCP_CSUM_OFFSET as u16,
            ..self
        }
    }

    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        (b.len() >= LEN).then(|| VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        })
    }

    pub fn to_bytes(self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }

    pub fn needs_csum(&self) -> bool {
        self.flags & F_NEEDS_CSUM != 0
    }

    pub fn is_gso(&self) -> bool {
        self.gso_type != GSO_NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 66,
            gso_size: 1448,
            csum_start: 34,
            csum_offset: 16,
        };
        assert_eq!(VnetHdr::parse(&h.to_bytes()), Some(h));
        assert_eq!(&h.to_bytes()[4..6], &[0xa8, 0x05]);
    }
}
