//! Scenario text in, trace out, for every mechanism and every variant it offers.
//!
//! Properties: no panic; the error of a refused scenario names a field; an accepted one runs
//! within the caps (a traced run holds at most `MAX_TRACE_OBJECTS`), traced and counters-only
//! runs agree, and every step's state keeps the model's invariants ([`check_state`]).

use arbitrary::{Arbitrary, Unstructured};
use serde_json::Value;
use skblab_core::trace::{Event, State, Step, MAX_TRACE_OBJECTS};
use skblab_core::{walkthrough, Error, RunOptions, Scenario, Trace};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Raw bytes as scenario text (TOML, or JSON when it starts with `{`).
pub fn scenario_text(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        check_text(text);
    }
}

/// A built-in scenario, edited by the input ([`Edited`]), as JSON text: it gets past the
/// parser far more often than raw bytes do.
pub fn scenario_struct(data: &[u8]) {
    if let Some(text) = edited_text(data) {
        check_text(&text);
    }
}

/// The scenario text a [`scenario_struct`] input stands for.
pub fn edited_text(data: &[u8]) -> Option<String> {
    Edited::arbitrary_take_rest(Unstructured::new(data))
        .ok()
        .map(|e| e.text())
}

/// Parses and runs `text` in every variant of its mechanism, checking every property.
pub fn check_text(text: &str) {
    let s = match Scenario::parse(text) {
        Ok(s) => s,
        Err(e) => return check_error(&e),
    };
    for v in s.variants() {
        let traced = RunOptions::traced(Some(v));
        let t = match s.run(&traced) {
            Ok(t) => t,
            Err(e) => {
                check_error(&e);
                continue;
            }
        };
        let quiet = RunOptions::counters(Some(v));
        let q = s
            .run(&quiet)
            .expect("a counters-only run refused what the traced run took");
        assert_eq!(q.counters, t.counters, "{v}: counters-only run differs");
        if let Err(broken) = check_trace(&s, &t) {
            panic!("{v}: {broken}");
        }
    }
}

/// An error must say which field is wrong (or which name is unknown) and why.
pub fn check_error(e: &Error) {
    let named = match e {
        Error::Parse { field, message, .. } => !field.is_empty() && !message.is_empty(),
        Error::Range { field, allowed, .. } => !field.is_empty() && !allowed.is_empty(),
        Error::Unknown { what, expected, .. } => !what.is_empty() && !expected.is_empty(),
        Error::Invalid { field, message } => !field.is_empty() && !message.is_empty(),
    };
    assert!(named, "an error that names no field: {e:?}");
}

/// The invariants every trace keeps, whatever the mechanism.
pub fn check_trace(s: &Scenario, t: &Trace) -> Result<(), String> {
    if t.steps.len() != s.op_count() {
        return Err(format!("{} steps for {} ops", t.steps.len(), s.op_count()));
    }
    let objects: usize = t.steps.iter().map(Step::size).sum();
    if objects > MAX_TRACE_OBJECTS {
        return Err(format!("{objects} trace objects, above the cap"));
    }
    if t.steps.last().is_some_and(|l| l.counters != t.counters) {
        return Err("the final counters are not the last step's".into());
    }
    for (i, step) in t.steps.iter().enumerate() {
        check_state(&t.mechanism, t.consts.max_skb_frags, step)
            .and_then(|()| check_counters(&t.mechanism, step))
            .and_then(|()| check_segments(&step.events))
            .map_err(|e| format!("ops[{i}] ({}): {e}", step.op))?;
    }
    Ok(())
}

/// Skbs well formed and within MAX_SKB_FRAGS, seq contiguous on send queues, every page
/// reference accounted for.
fn check_state(mech: &str, max_frags: u32, step: &Step) -> Result<(), String> {
    let st = &step.state;
    let mut holders: BTreeMap<u32, u32> = BTreeMap::new();
    let mut hold = |page: u32, n: u32| *holders.entry(page).or_default() += n;
    for q in &st.queues {
        let mut skbs: Vec<_> = q.skbs.iter().collect();
        while let Some(skb) = skbs.pop() {
            let frags: u32 = skb.frags.iter().map(|f| f.size).sum();
            let chained: u32 = skb.frag_list.iter().map(|s| s.len).sum();
            if skb.data_len != frags + chained || skb.len != skb.linear_len + skb.data_len {
                return Err(format!("{}: skb {} lengths do not add up", q.name, skb.id));
            }
            if skb.frags.len() > max_frags as usize {
                return Err(format!("{}: skb {} above MAX_SKB_FRAGS", q.name, skb.id));
            }
            for f in skb.frags.iter().chain(&skb.head_frag) {
                hold(f.page, 1);
            }
            skbs.extend(&skb.frag_list);
        }
        // The send side's queues are byte streams: each skb starts where the last ended.
        if mech != "rx" {
            for w in Vec::from_iter(&q.skbs).windows(2) {
                if w[0].end_seq != w[1].seq {
                    return Err(format!("{}: seq gap after skb {}", q.name, w[0].id));
                }
            }
        }
    }
    for d in &st.dfrags {
        hold(d.page, 1);
    }
    for c in &st.cursors {
        if let Some(p) = c.page {
            // A page_frag_cache holds its pagecnt_bias references in advance.
            hold(p, c.bias.unwrap_or(1));
        }
        if c.offset > c.size {
            return Err(format!(
                "{}: offset {} past size {}",
                c.name, c.offset, c.size
            ));
        }
    }
    check_pages(st, &holders)
}

/// Each page lives with exactly the references its holders have.
fn check_pages(st: &State, holders: &BTreeMap<u32, u32>) -> Result<(), String> {
    for p in &st.pages {
        let held = holders.get(&p.id).copied().unwrap_or(0);
        if p.count == 0 || p.count != held || p.used > p.size {
            return Err(format!(
                "page {}: count {}, {held} references held, {} of {} bytes used",
                p.id, p.count, p.used, p.size
            ));
        }
    }
    match holders
        .keys()
        .find(|id| !st.pages.iter().any(|p| p.id == **id))
    {
        Some(id) => Err(format!("a reference to page {id}, which is freed")),
        None => Ok(()),
    }
}

/// Counters that must balance: what was allocated is freed or live, and no byte is
/// delivered that was never written or arrived.
fn check_counters(mech: &str, step: &Step) -> Result<(), String> {
    let c = |n: &str| step.counters.get(n);
    let live_pages = step.state.pages.len() as u64;
    let balanced = |alloc: Option<u64>, freed: Option<u64>| match (alloc, freed) {
        (Some(a), Some(f)) => a.checked_sub(f) == Some(live_pages),
        _ => true,
    };
    let ok = balanced(c("pages_allocated"), c("pages_freed"))
        && balanced(c("page_allocs"), c("page_frees"))
        && match mech {
            "rx" => {
                let (arrived, read, purged) =
                    (c("bytes_arrived"), c("bytes_read"), c("bytes_purged"));
                arrived >= Some(read.unwrap_or(0) + purged.unwrap_or(0))
            }
            _ => c("bytes_written") >= c("bytes_mapped"),
        };
    match ok {
        true => Ok(()),
        false => Err(format!("counters out of balance: {:?}", step.counters.0)),
    }
}

/// GSO/TSO cuts each transmitted skb into wire segments that cover it exactly, in order.
fn check_segments(events: &[Event]) -> Result<(), String> {
    let mut open: Option<(u32, u32)> = None; // (next seq, bytes left)
    for e in events.iter().chain([&Event::Ack { snd_una: 0 }]) {
        match *e {
            Event::Segment { seq, len, .. } => match open {
                Some((next, left)) if seq == next && len <= left => {
                    open = Some((seq.wrapping_add(len), left - len))
                }
                _ => return Err(format!("segment at seq {seq} not where the skb continues")),
            },
            _ if open.is_some_and(|(_, left)| left > 0) => {
                return Err("an skb's segments do not cover it".into())
            }
            Event::Xmit { seq, len, .. } => open = Some((seq, len)),
            _ => open = None,
        }
    }
    Ok(())
}

/// A built-in scenario (a walkthrough's, by `seed`) changed by a list of edits.
#[derive(Debug)]
pub struct Edited {
    seed: u8,
    edits: Vec<Edit>,
}

/// One change to a scenario's JSON. Leaves, names and paths are picked modulo what exists,
/// so every input is a valid edit.
#[derive(Debug)]
enum Edit {
    /// A number somewhere becomes `value`.
    Number {
        leaf: u16,
        value: Num,
    },
    /// A boolean somewhere flips.
    Flip {
        leaf: u16,
    },
    /// A string somewhere becomes a name some scenario uses (a variant, an op, ...).
    Name {
        leaf: u16,
        name: u16,
    },
    /// A field some built-in scenario sets (`socket.mss`, `nic.driver`) is set here too.
    Graft {
        path: u16,
        value: Num,
    },
    /// An op of any built-in scenario is inserted at `at`.
    CopyOp {
        op: u16,
        at: u8,
    },
    DropOp {
        at: u8,
    },
    /// A field some op has elsewhere is set on `ops[at]`.
    OpField {
        at: u8,
        key: u16,
        value: Num,
    },
}

#[derive(Debug)]
enum Num {
    Small(u8),
    /// A cap, a power of two or a type's limit, give or take one.
    Edge(u8, i8),
    Any(u64),
    Negative(i16),
    Text(u8),
}

// By hand, not derived: see Cargo.toml.
impl<'a> Arbitrary<'a> for Edited {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Edited {
            seed: u.arbitrary()?,
            edits: u.arbitrary_iter()?.collect::<arbitrary::Result<_>>()?,
        })
    }
}

impl<'a> Arbitrary<'a> for Edit {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.choose_index(7)? {
            0 => Edit::Number {
                leaf: u.arbitrary()?,
                value: u.arbitrary()?,
            },
            1 => Edit::Flip {
                leaf: u.arbitrary()?,
            },
            2 => Edit::Name {
                leaf: u.arbitrary()?,
                name: u.arbitrary()?,
            },
            3 => Edit::Graft {
                path: u.arbitrary()?,
                value: u.arbitrary()?,
            },
            4 => Edit::CopyOp {
                op: u.arbitrary()?,
                at: u.arbitrary()?,
            },
            5 => Edit::DropOp { at: u.arbitrary()? },
            _ => Edit::OpField {
                at: u.arbitrary()?,
                key: u.arbitrary()?,
                value: u.arbitrary()?,
            },
        })
    }
}

impl<'a> Arbitrary<'a> for Num {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.choose_index(5)? {
            0 => Num::Small(u.arbitrary()?),
            1 => Num::Edge(u.arbitrary()?, u.arbitrary()?),
            2 => Num::Any(u.arbitrary()?),
            3 => Num::Negative(u.arbitrary()?),
            _ => Num::Text(u.arbitrary()?),
        })
    }
}

/// Values at the caps and at the types' limits, where off-by-one and overflow bugs live.
const EDGES: &[u64] = &[
    0,
    1,
    2,
    4096,
    65_535,
    65_536,
    1 << 20,
    16 << 20,
    256 << 20,
    1_000_000,
    10_000,
    u32::MAX as u64,
    1 << 32,
    u64::MAX,
];

impl Num {
    fn value(&self) -> Value {
        match *self {
            Num::Small(n) => n.into(),
            Num::Edge(i, d) => EDGES[i as usize % EDGES.len()]
                .wrapping_add_signed(d.clamp(-2, 2).into())
                .into(),
            Num::Any(n) => n.into(),
            Num::Negative(n) => (-i64::from(n.unsigned_abs())).into(),
            Num::Text(n) => Seeds::get().names[n as usize % Seeds::get().names.len()]
                .clone()
                .into(),
        }
    }
}

/// What the edits draw on, gathered once from the built-in scenarios.
struct Seeds {
    scenarios: Vec<Value>,
    ops: Vec<Value>,
    names: Vec<String>,
    /// JSON pointers of every leaf outside `ops`.
    paths: Vec<String>,
    op_keys: Vec<String>,
}

impl Seeds {
    fn get() -> &'static Seeds {
        static SEEDS: OnceLock<Seeds> = OnceLock::new();
        SEEDS.get_or_init(|| {
            let walks = walkthrough::all().expect("the walkthroughs parse");
            let scenarios: Vec<Value> = walks
                .iter()
                .map(|w| serde_json::from_str(&w.scenario.to_json()).expect("JSON"))
                .collect();
            let ops: Vec<Value> = scenarios
                .iter()
                .flat_map(|s| s["ops"].as_array().cloned().unwrap_or_default())
                .collect();
            let mut seeds = Seeds {
                scenarios,
                ops,
                names: Vec::new(),
                paths: Vec::new(),
                op_keys: Vec::new(),
            };
            for s in &seeds.scenarios {
                for (path, leaf) in leaves(s) {
                    if let Value::String(n) = leaf {
                        seeds.names.push(n.clone());
                    }
                    if !path.starts_with("/ops") {
                        seeds.paths.push(path);
                    }
                }
            }
            for op in &seeds.ops {
                seeds
                    .op_keys
                    .extend(op.as_object().into_iter().flat_map(|o| o.keys().cloned()));
            }
            for list in [&mut seeds.names, &mut seeds.paths, &mut seeds.op_keys] {
                list.sort();
                list.dedup();
            }
            seeds
        })
    }
}

/// Every leaf of `v` with its JSON pointer, in document order.
fn leaves(v: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), v)];
    while let Some((path, v)) = todo.pop() {
        match v {
            Value::Object(o) => {
                todo.extend(o.iter().rev().map(|(k, v)| (format!("{path}/{k}"), v)))
            }
            Value::Array(a) => todo.extend(
                a.iter()
                    .enumerate()
                    .rev()
                    .map(|(i, v)| (format!("{path}/{i}"), v)),
            ),
            leaf => out.push((path, leaf)),
        }
    }
    out
}

impl Edited {
    /// The edited scenario as JSON text.
    pub fn text(&self) -> String {
        let seeds = Seeds::get();
        let mut v = seeds.scenarios[self.seed as usize % seeds.scenarios.len()].clone();
        for e in &self.edits {
            e.apply(&mut v, seeds);
        }
        v.to_string()
    }
}

impl Edit {
    fn apply(&self, v: &mut Value, seeds: &Seeds) {
        let pick = |n: usize, i: u16| (n > 0).then(|| i as usize % n);
        let leaf_of = |v: &Value, i: u16, want: fn(&Value) -> bool| {
            let all: Vec<String> = leaves(v)
                .into_iter()
                .filter(|(_, l)| want(l))
                .map(|(p, _)| p)
                .collect();
            pick(all.len(), i).map(|i| all[i].clone())
        };
        let ops_len = v["ops"].as_array().map_or(0, Vec::len);
        match self {
            Edit::Number { leaf, value } => {
                if let Some(l) = leaf_of(v, *leaf, Value::is_number).and_then(|p| v.pointer_mut(&p))
                {
                    *l = value.value();
                }
            }
            Edit::Flip { leaf } => {
                if let Some(p) = leaf_of(v, *leaf, Value::is_boolean) {
                    if let Some(Value::Bool(b)) = v.pointer_mut(&p) {
                        *b = !*b;
                    }
                }
            }
            Edit::Name { leaf, name } => {
                let n = pick(seeds.names.len(), *name).map(|i| seeds.names[i].clone());
                let l = leaf_of(v, *leaf, Value::is_string).and_then(|p| v.pointer_mut(&p));
                if let (Some(l), Some(n)) = (l, n) {
                    *l = n.into();
                }
            }
            Edit::Graft { path, value } => {
                if let Some(i) = pick(seeds.paths.len(), *path) {
                    graft(v, &seeds.paths[i], value.value());
                }
            }
            Edit::CopyOp { op, at } => {
                if let (Some(i), Some(ops)) = (pick(seeds.ops.len(), *op), v["ops"].as_array_mut())
                {
                    ops.insert(*at as usize % (ops_len + 1), seeds.ops[i].clone());
                }
            }
            Edit::DropOp { at } => {
                if let (Some(i), Some(ops)) =
                    (pick(ops_len, u16::from(*at)), v["ops"].as_array_mut())
                {
                    ops.remove(i);
                }
            }
            Edit::OpField { at, key, value } => {
                let k = pick(seeds.op_keys.len(), *key).map(|i| seeds.op_keys[i].clone());
                if let (Some(i), Some(k)) = (pick(ops_len, u16::from(*at)), k) {
                    if let Some(op) = v["ops"][i].as_object_mut() {
                        op.insert(k, value.value());
                    }
                }
            }
        }
    }
}

/// Sets the leaf at JSON pointer `path`, making the tables on the way (an index past an
/// array's end sets its last element).
fn graft(v: &mut Value, path: &str, leaf: Value) {
    let mut at = v;
    for key in path.split('/').skip(1) {
        let index = match &*at {
            Value::Array(a) if !a.is_empty() => Some(key.parse().unwrap_or(0).min(a.len() - 1)),
            _ => None,
        };
        at = match index {
            Some(i) => &mut at[i],
            None => {
                if !at.is_object() {
                    *at = Value::Object(Default::default());
                }
                let table = at.as_object_mut().expect("a table");
                table.entry(key).or_insert(Value::Null)
            }
        };
    }
    *at = leaf;
}
