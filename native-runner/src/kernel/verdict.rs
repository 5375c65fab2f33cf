//! The comparison: the model's skbs beside the kernel's, field by field, with a verdict for
//! each. Pure data in, rows out, so it is tested without root or a kernel.

use serde::Serialize;

/// One skb as both sides describe it; a field neither side has is not judged. `truesize`
/// is shown, never judged: the model's head is sized for a kernel config other than this
/// machine's (docs/kernel-oracle.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SkbView {
    /// skb->len.
    pub len: u64,
    /// skb_headlen(skb) = len - data_len.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linear: Option<u64>,
    /// skb_shinfo(skb)->nr_frags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_frags: Option<u64>,
    /// skb->truesize.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truesize: Option<u64>,
    /// The MPTCP DSS mapping: data_seq and subflow_seq from the side's first mapping.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subflow_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_len: Option<u64>,
    /// The CPU that allocated the skb (skb->alloc_cpu; the model's skb CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_cpu: Option<u64>,
    /// The CPU that freed the consumed skb (or whose defer list holds it: see rx).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_cpu: Option<u64>,
}

/// What one side built: its size goal(s) and its write queue, oldest skb first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Side {
    /// Every size_goal the side used, in order of first use (the model has one).
    pub size_goals: Vec<u64>,
    pub skbs: Vec<SkbView>,
}

/// Why a trace cannot be judged: what must hold of it does not (bytes missing, a foreign
/// flow, a mapping seen twice). The comparison is not made: no "agree", no "differ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconclusive(pub String);

/// How an error starts when the kernel was too slow for the run, not wrong: on a busy
/// machine (other tasks on every core, another sender) a push, a handshake or a softirq may
/// be late. Such a run is untrusted, as a spoiled trace is: retried, then inconclusive.
pub const TOO_SLOW: &str = "too slow under load";

/// The error of a run that waited `what` in vain.
pub fn too_slow(what: &str) -> String {
    format!("{TOO_SLOW}: {what}")
}

/// A run's error: a trace that cannot be trusted (the kernel too slow, bpftrace's buffers
/// overflowed) as [`Inconclusive`], any other error (a setup that failed) as it is.
pub fn untrusted(e: String) -> Result<Inconclusive, String> {
    if e.starts_with(TOO_SLOW) || e.starts_with(super::probe::LOST_EVENTS) {
        Ok(Inconclusive(e))
    } else {
        Err(e)
    }
}

/// One judged field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `size_goal`, `skbs`, or `skb[i].len` / `.linear` / `.nr_frags`.
    pub field: String,
    pub model: Option<u64>,
    pub kernel: Option<u64>,
    pub agree: bool,
}

impl Row {
    fn new(field: String, model: Option<u64>, kernel: Option<u64>) -> Row {
        Row {
            field,
            agree: model == kernel,
            model,
            kernel,
        }
    }
}

/// Reads one field of an skb.
type Field = fn(&SkbView) -> Option<u64>;

/// The judged fields of an skb, in the order the table shows them.
pub const JUDGED: [(&str, Field); 8] = [
    ("len", |s| Some(s.len)),
    ("linear", |s| s.linear),
    ("nr_frags", |s| s.nr_frags),
    ("data_seq", |s| s.data_seq),
    ("subflow_seq", |s| s.subflow_seq),
    ("data_len", |s| s.data_len),
    ("alloc_cpu", |s| s.alloc_cpu),
    ("free_cpu", |s| s.free_cpu),
];

/// Sets the two sides beside each other: every size goal the kernel used against the
/// model's, the number of skbs, then each skb's judged fields (a missing skb is a
/// disagreement in every field).
pub fn compare(model: &Side, kernel: &Side) -> Vec<Row> {
    let goal = model.size_goals.first().copied();
    let mut rows: Vec<Row> = if kernel.size_goals.is_empty() {
        goal.map(|g| Row::new("size_goal".into(), Some(g), None))
            .into_iter()
            .collect()
    } else {
        kernel
            .size_goals
            .iter()
            .map(|&k| Row::new("size_goal".into(), goal, Some(k)))
            .collect()
    };
    rows.push(Row::new(
        "skbs".into(),
        Some(model.skbs.len() as u64),
        Some(kernel.skbs.len() as u64),
    ));
    for i in 0..model.skbs.len().max(kernel.skbs.len()) {
        let (m, k) = (model.skbs.get(i), kernel.skbs.get(i));
        for (name, get) in JUDGED {
            let (mv, kv) = (m.and_then(get), k.and_then(get));
            if mv.is_some() || kv.is_some() {
                rows.push(Row::new(format!("skb[{i}].{name}"), mv, kv));
            }
        }
    }
    rows
}

/// "agree" when every row agrees, else "differ".
pub fn verdict(rows: &[Row]) -> &'static str {
    if rows.iter().all(|r| r.agree) {
        "agree"
    } else {
        "differ"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skb(len: u64, nr_frags: u64) -> SkbView {
        SkbView {
            len,
            linear: Some(0),
            nr_frags: Some(nr_frags),
            truesize: Some(0),
            ..SkbView::default()
        }
    }

    fn side(goals: &[u64], skbs: &[SkbView]) -> Side {
        Side {
            size_goals: goals.to_vec(),
            skbs: skbs.to_vec(),
        }
    }

    #[test]
    fn equal_sides_agree_and_truesize_is_not_judged() {
        let m = side(&[65160], &[skb(65160, 2), skb(100, 1)]);
        let mut k = m.clone();
        k.skbs[0].truesize = Some(12345);
        let rows = compare(&m, &k);
        // size_goal, skbs, then three fields for each of the two skbs.
        assert_eq!(rows.len(), 2 + 2 * 3);
        assert_eq!(verdict(&rows), "agree");
    }

    #[test]
    fn one_field_off_differs_and_names_the_field() {
        let m = side(&[65160], &[skb(65160, 2)]);
        let k = side(&[65160], &[skb(65160, 3)]);
        let rows = compare(&m, &k);
        assert_eq!(verdict(&rows), "differ");
        let bad: Vec<&str> = rows
            .iter()
            .filter(|r| !r.agree)
            .map(|r| r.field.as_str())
            .collect();
        assert_eq!(bad, ["skb[0].nr_frags"]);
    }

    #[test]
    fn a_missing_skb_differs_in_count_and_every_field() {
        let m = side(&[65160], &[skb(1, 1)]);
        let k = side(&[65160], &[skb(1, 1), skb(1, 1)]);
        let rows = compare(&m, &k);
        let bad: Vec<&str> = rows
            .iter()
            .filter(|r| !r.agree)
            .map(|r| r.field.as_str())
            .collect();
        assert_eq!(
            bad,
            ["skbs", "skb[1].len", "skb[1].linear", "skb[1].nr_frags"]
        );
    }

    #[test]
    fn every_kernel_size_goal_is_judged() {
        let m = side(&[65160], &[]);
        let k = side(&[65160, 31856], &[]);
        let rows = compare(&m, &k);
        assert_eq!(rows.iter().filter(|r| r.field == "size_goal").count(), 2);
        assert_eq!(verdict(&rows), "differ");
        assert_eq!(verdict(&compare(&m, &side(&[], &[]))), "differ");
    }

    #[test]
    fn only_the_fields_a_side_has_are_judged() {
        let map = |seq: u64, len: u64| SkbView {
            len,
            data_seq: Some(seq),
            subflow_seq: Some(seq),
            data_len: Some(len),
            ..SkbView::default()
        };
        let m = side(&[], &[map(0, 65459), map(65459, 154)]);
        let rows = compare(&m, &m.clone());
        // No size goal on either side; skbs; four fields each.
        assert_eq!(rows.len(), 1 + 2 * 4);
        assert_eq!(verdict(&rows), "agree");
        let k = side(&[], &[map(0, 65459), map(65459, 155)]);
        let bad: Vec<String> = compare(&m, &k)
            .into_iter()
            .filter(|r| !r.agree)
            .map(|r| r.field)
            .collect();
        assert_eq!(bad, ["skb[1].len", "skb[1].data_len"]);
    }
}
