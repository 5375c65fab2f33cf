//! The skblab core as a plain wasm module: request bytes in, reply bytes out.
//!
//! This crate only adapts bytes; `skblab_core::run_text` does the work. [`Request`] is the
//! input envelope, [`respond`] runs the core and frames its answer, [`Reply`] reads that
//! answer back. The wasm exports at the bottom are a thin shell around [`respond`], and the
//! native host links this crate as an rlib, so both sides share one definition of the format.
//! The ABI is specified in `docs/wasm-abi.md`; keep the two in step.

use serde::{Deserialize, Serialize};
use skblab_core::RunOptions;

/// The first four request bytes: the format and its version (bump the digit on any change).
pub const MAGIC: [u8; 4] = *b"SKB1";
/// magic, flags, variant_len, scenario_len: four little-endian u32 words.
pub const HEADER_LEN: usize = 16;
/// Request flag: keep only the final counters (`RunOptions::counters_only`).
pub const FLAG_COUNTERS_ONLY: u32 = 1 << 0;
/// Request flag: the variant bytes are an override (without it `variant_len` must be 0).
pub const FLAG_VARIANT: u32 = 1 << 1;
const KNOWN_FLAGS: u32 = FLAG_COUNTERS_ONLY | FLAG_VARIANT;

/// First reply byte: the rest is the trace, exactly `serde_json::to_string(&trace)`.
pub const STATUS_TRACE: u8 = 0;
/// First reply byte: the rest is an [`ErrorReply`] as JSON.
pub const STATUS_ERROR: u8 = 1;

/// What to run: the scenario text and the run options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub scenario: &'a str,
    pub variant: Option<&'a str>,
    pub counters_only: bool,
}

/// An error as it crosses the ABI: the core's [`skblab_core::Error`] flattened, or a fault in
/// the envelope itself (`kind = "envelope"`). `message` is the full text a host prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorReply {
    /// `parse`, `range`, `unknown`, `invalid` (the core's error kinds) or `envelope`.
    pub kind: String,
    /// The offending field (`ops[3].bytes`, `variant`, `envelope.scenario_len`, ...).
    pub field: String,
    pub message: String,
}

/// A decoded reply: the trace JSON untouched, or the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply<'a> {
    Trace(&'a str),
    Error(ErrorReply),
}

impl<'a> Request<'a> {
    pub fn new(scenario: &'a str, opts: &'a RunOptions) -> Self {
        Request {
            scenario,
            variant: opts.variant.as_deref(),
            counters_only: opts.counters_only,
        }
    }

    pub fn options(&self) -> RunOptions {
        RunOptions::new(self.variant, self.counters_only)
    }

    /// The request bytes; fails only past 4 GiB, which wasm32 memory cannot hold anyway.
    pub fn encode(&self) -> Result<Vec<u8>, ErrorReply> {
        let variant = self.variant.unwrap_or("");
        let len = |field: &str, s: &str| {
            u32::try_from(s.len()).map_err(|_| {
                envelope(
                    field,
                    format!("{} bytes; allowed at most {}", s.len(), u32::MAX),
                )
            })
        };
        let flags = if self.counters_only {
            FLAG_COUNTERS_ONLY
        } else {
            0
        } | if self.variant.is_some() {
            FLAG_VARIANT
        } else {
            0
        };
        let words = [
            u32::from_le_bytes(MAGIC),
            flags,
            len("envelope.variant_len", variant)?,
            len("envelope.scenario_len", self.scenario)?,
        ];
        let mut out = Vec::with_capacity(HEADER_LEN + variant.len() + self.scenario.len());
        words.iter().for_each(|w| out.extend(w.to_le_bytes()));
        out.extend(variant.as_bytes());
        out.extend(self.scenario.as_bytes());
        Ok(out)
    }

    /// Reads request bytes, naming the envelope field at fault.
    pub fn decode(bytes: &'a [u8]) -> Result<Request<'a>, ErrorReply> {
        let Some((header, body)) = bytes.split_first_chunk::<HEADER_LEN>() else {
            return Err(envelope(
                "envelope",
                format!(
                    "{} bytes: truncated, the header alone is {HEADER_LEN}",
                    bytes.len()
                ),
            ));
        };
        let word = |i: usize| u32::from_le_bytes(header[4 * i..4 * i + 4].try_into().unwrap());
        if header[..4] != MAGIC {
            return Err(envelope(
                "envelope.magic",
                format!("{:?}: expected \"SKB1\" (ABI version 1)", &header[..4]),
            ));
        }
        let flags = word(1);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(envelope(
                "envelope.flags",
                format!("{flags:#x}: allowed bits {KNOWN_FLAGS:#x}"),
            ));
        }
        let (variant_len, scenario_len) = (word(2) as usize, word(3) as usize);
        if flags & FLAG_VARIANT == 0 && variant_len != 0 {
            return Err(envelope(
                "envelope.variant_len",
                format!("{variant_len} without the variant flag: allowed 0"),
            ));
        }
        if body.len() as u64 != variant_len as u64 + scenario_len as u64 {
            return Err(envelope(
                "envelope.scenario_len",
                format!(
                    "variant_len {variant_len} + scenario_len {scenario_len} bytes declared, {} \
                     follow the header (truncated or padded)",
                    body.len()
                ),
            ));
        }
        let (variant, scenario) = body.split_at(variant_len);
        Ok(Request {
            scenario: utf8("envelope.scenario", scenario)?,
            variant: (flags & FLAG_VARIANT != 0)
                .then(|| utf8("envelope.variant", variant))
                .transpose()?,
            counters_only: flags & FLAG_COUNTERS_ONLY != 0,
        })
    }
}

/// The module's whole job: decode the request, run the core, frame the reply.
pub fn respond(input: &[u8]) -> Vec<u8> {
    let result = Request::decode(input).and_then(|req| {
        skblab_core::run_text(req.scenario, &req.options()).map_err(|e| ErrorReply::from(&e))
    });
    let mut out = Vec::new();
    let written = match &result {
        Ok(trace) => {
            out.push(STATUS_TRACE);
            serde_json::to_writer(&mut out, trace)
        }
        Err(e) => {
            out.push(STATUS_ERROR);
            serde_json::to_writer(&mut out, e)
        }
    };
    if let Err(e) = written {
        out.clear();
        out.push(STATUS_ERROR);
        let e = envelope("reply", format!("the trace did not serialize: {e}"));
        out.extend(serde_json::to_vec(&e).unwrap_or_default());
    }
    out
}

impl<'a> Reply<'a> {
    /// Reads reply bytes; `Err` describes how they are malformed.
    pub fn decode(bytes: &'a [u8]) -> Result<Reply<'a>, String> {
        let Some((&status, body)) = bytes.split_first() else {
            return Err("empty reply (expected a status byte)".into());
        };
        let body = std::str::from_utf8(body)
            .map_err(|e| format!("reply is not UTF-8 at byte {}", e.valid_up_to() + 1))?;
        match status {
            STATUS_TRACE => Ok(Reply::Trace(body)),
            STATUS_ERROR => serde_json::from_str(body)
                .map(Reply::Error)
                .map_err(|e| format!("reply error is not valid JSON: {e}")),
            other => Err(format!("reply status byte {other}: expected 0 or 1")),
        }
    }
}

impl From<&skblab_core::Error> for ErrorReply {
    fn from(e: &skblab_core::Error) -> Self {
        use skblab_core::Error::*;
        let (kind, field) = match e {
            Parse { field, .. } => ("parse", field.as_str()),
            Range { field, .. } => ("range", field.as_str()),
            Unknown { what, .. } => ("unknown", *what),
            Invalid { field, .. } => ("invalid", field.as_str()),
        };
        ErrorReply {
            kind: kind.into(),
            field: field.into(),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn envelope(field: &str, what: String) -> ErrorReply {
    ErrorReply {
        kind: "envelope".into(),
        field: field.into(),
        message: format!("`{field}`: {what}"),
    }
}

fn utf8<'a>(field: &str, bytes: &'a [u8]) -> Result<&'a str, ErrorReply> {
    std::str::from_utf8(bytes)
        .map_err(|e| envelope(field, format!("not UTF-8 at byte {}", e.valid_up_to())))
}

/// The exports. Buffers cross the boundary as `Box<[u8]>`: whoever holds a (ptr, len) pair
/// returns it with `dealloc(ptr, len)`, which rebuilds exactly the box `alloc`/`run` leaked.
#[cfg(target_arch = "wasm32")]
mod exports {
    /// A zeroed buffer of `len` bytes for the host to write a request into.
    #[no_mangle]
    pub extern "C" fn alloc(len: usize) -> *mut u8 {
        Box::into_raw(vec![0u8; len].into_boxed_slice()).cast()
    }

    /// Frees a buffer from `alloc` or `run`.
    ///
    /// # Safety
    /// `(ptr, len)` must come from `alloc(len)` or a `run` reply, and be freed once.
    #[no_mangle]
    pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
        // SAFETY: the caller hands back a pair this module leaked from a Box<[u8]>.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
    }

    /// Runs the request in `(ptr, len)` (still the caller's to free) and returns the reply
    /// as `ptr << 32 | len`.
    ///
    /// # Safety
    /// `(ptr, len)` must be a live buffer from `alloc`.
    #[no_mangle]
    pub unsafe extern "C" fn run(ptr: *const u8, len: usize) -> u64 {
        // SAFETY: the caller passes a live buffer from `alloc`.
        let input = unsafe { std::slice::from_raw_parts(ptr, len) };
        let out = Box::into_raw(super::respond(input).into_boxed_slice());
        ((out as *mut u8 as usize as u64) << 32) | out.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        for (variant, counters_only) in [(None, false), (Some("modern"), true), (Some(""), false)] {
            let req = Request {
                scenario: "mechanism = \"sendmsg\"\nops = []\n",
                variant,
                counters_only,
            };
            let bytes = req.encode().unwrap();
            assert_eq!(Request::decode(&bytes).unwrap(), req);
        }
    }

    #[test]
    fn bad_envelopes_name_the_field() {
        let good = Request {
            scenario: "ops = []",
            variant: Some("modern"),
            counters_only: false,
        }
        .encode()
        .unwrap();
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        let mut bad_flags = good.clone();
        bad_flags[4] = 0x80;
        let mut not_utf8 = good.clone();
        *not_utf8.last_mut().unwrap() = 0xff;
        let cases: &[(&[u8], &str)] = &[
            (&good[..3], "envelope"),
            (&good[..good.len() - 1], "envelope.scenario_len"),
            (&[good.as_slice(), b"x"].concat(), "envelope.scenario_len"),
            (&bad_magic, "envelope.magic"),
            (&bad_flags, "envelope.flags"),
            (&not_utf8, "envelope.scenario"),
        ];
        for (bytes, field) in cases {
            let e = Request::decode(bytes).unwrap_err();
            assert_eq!(
                (e.kind.as_str(), e.field.as_str()),
                ("envelope", *field),
                "{e}"
            );
        }
    }

    #[test]
    fn replies_carry_trace_bytes_or_errors() {
        let e = skblab_core::Error::invalid("ops[0]", "no");
        let reply = respond(
            &Request {
                scenario: "{",
                variant: None,
                counters_only: true,
            }
            .encode()
            .unwrap(),
        );
        assert!(matches!(Reply::decode(&reply), Ok(Reply::Error(e)) if e.kind == "parse"));
        assert_eq!(ErrorReply::from(&e).message, e.to_string());
        assert_eq!(Reply::decode(b"\0{}"), Ok(Reply::Trace("{}")));
        assert!(Reply::decode(b"").is_err());
        assert!(Reply::decode(b"\x07{}").is_err());
        assert!(Reply::decode(b"\x01{").is_err());
    }
}
